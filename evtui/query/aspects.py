"""A claim or hypothesis -> its aspects: concept phrases and relation words, in the order of the text."""

from __future__ import annotations

import re
from collections.abc import Mapping

from evtui.models import Aspect
from evtui.query.terms import (
    FILLER,
    PART_RE,
    RELATION_VERB_STEMS,
    STOPWORDS,
    concept_variants,
    is_capital_stopword,
    relation_family,
    relation_terms,
    stem,
)

# A word (hyphens, apostrophes and slashes inside it), or punctuation that ends a concept: "aspirin | | cancer" and
# "+aspirin -cancer" name two concepts, not the phrase "aspirin cancer". A sign glued to a word's end stays part of
# the run (CD4+ T cells).
_TOKEN = re.compile(r"[^\W_]+(?:[-'’/][^\W_]+)*|[,;:.!?()\[\]{}\"|&<>=~^*`$#@\\]|(?<!\S)[-+–—/]")


def claim_aspects(text: str, abbreviations: Mapping[str, str] | None, notes: list[str]) -> list[Aspect]:
    """Concept phrases and relation words (one per relation family) in text order; a verbless claim is
    split into noun units. What was dropped or split is added to `notes`."""
    body = re.sub(r"^\s*hypothesis\s*:\s*", "", text, flags=re.I)
    chunks: list[list[str]] = [[]]
    relations: list[tuple[float, str]] = []
    dropped: list[str] = []
    # A stopword in capitals is an abbreviation (NO, ALL) unless the whole query is in capitals.
    capitals = any(c.islower() for c in body)
    for m in _TOKEN.finditer(body):
        tok = m.group(0)
        low = tok.lower()
        if not PART_RE.match(tok) or (low in STOPWORDS and not (capitals and is_capital_stopword(tok))):
            chunks.append([])
            continue
        if low in FILLER:
            dropped.append(tok)
            chunks.append([])
            continue
        st = stem(low)
        if st in RELATION_VERB_STEMS and not tok.isupper():
            relations.append((len(chunks) - 0.5, tok))  # after the chunk it closes, before the next
            chunks.append([])
            continue
        chunks[-1].append(tok)
    # order concepts and relations by position in the text
    items: list[tuple[float, str, str]] = []
    for i, ch in enumerate(chunks):
        while len(ch) > 4:  # long runs of content words: keep pairs together
            items.append((i, "concept", " ".join(ch[:2])))
            ch = ch[2:]
        if ch:
            items.append((i, "concept", " ".join(ch)))
    seen_fam: set[str] = set()
    for at, tok in relations:
        fam = relation_family(tok) or tok.lower()
        if fam not in seen_fam:
            seen_fam.add(fam)
            items.append((at, "relation", tok))
    items.sort(key=lambda x: x[0])
    if dropped:
        notes.append("dropped filler words: " + ", ".join(dropped))
    aspects: list[Aspect] = []
    seen: set[str] = set()
    for _i, role, label in items:
        if label.lower() in seen:
            continue
        seen.add(label.lower())
        terms = relation_terms(label) if role == "relation" else concept_variants(label, abbreviations)
        aspects.append(Aspect(f"a{len(aspects) + 1}", label, terms, role))
    if len(aspects) == 1 and not relations and len(aspects[0].label.split()) >= 3:
        # A verbless claim ("ACE inhibitor cough") is several concepts, not one phrase no sentence contains.
        units = _noun_units(aspects[0].label.split())
        if len(units) > 1:
            notes.append("no verb: split into concepts " + " · ".join(units))
            aspects = [Aspect(f"a{i + 1}", u, concept_variants(u, abbreviations), "concept")
                       for i, u in enumerate(units)]
    return aspects


# Nouns that head a unit with the word before them ("ACE inhibitor", "vitamin D deficiency"), and adjective
# endings that bind a word to the next ("colorectal cancer", "cardiovascular mortality").
_HEAD_NOUNS = frozenset("""inhibitor inhibitors blocker blockers antagonist antagonists agonist agonists receptor
receptors deficiency deficiencies therapy therapies level levels supplementation supplement supplements
exposure infection infections use intake resistance expression vaccine vaccines vaccination""".split())
_ADJ_END = re.compile(r"(al|ic|ive|ous|ary|ar|ine|oid|ial|ed)$", re.I)
# A classifier with its number names a kind of the next word: "type 2 diabetes", "stage 3 cancer", "grade II glioma".
_CLASSIFIERS = frozenset("type stage grade class phase".split())


def _noun_units(words: list[str]) -> list[str]:
    """Split a verbless run of words into noun units: a one-character word (vitamin D, type 2) and a head noun
    (ACE inhibitor) join the word before them; an adjective (colorectal) and a classifier with its number (type 2)
    join the word after them."""
    units: list[list[str]] = []
    for w in words:
        joins_prev = bool(units) and (len(w) == 1 or w.isdigit() or w.lower() in _HEAD_NOUNS or (
            units[-1][-1].lower() in _CLASSIFIERS and bool(re.fullmatch(r"[IVX]+[a-c]?", w))))
        prev_adj = bool(units) and len(units[-1][-1]) > 4 and bool(_ADJ_END.search(units[-1][-1])) \
            and units[-1][-1].lower() not in _HEAD_NOUNS
        prev_kind = bool(units) and len(units[-1]) >= 2 and units[-1][-2].lower() in _CLASSIFIERS \
            and (units[-1][-1].isdigit() or bool(re.fullmatch(r"[IVX]+[a-c]?|[A-Z]", units[-1][-1])))
        if joins_prev or prev_adj or prev_kind:
            units[-1].append(w)
        else:
            units.append([w])
    return [" ".join(u) for u in units]
