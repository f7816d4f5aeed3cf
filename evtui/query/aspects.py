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
    relation_family,
    relation_terms,
    stem,
)


def claim_aspects(text: str, abbreviations: Mapping[str, str] | None, notes: list[str]) -> list[Aspect]:
    """Concept phrases and relation words (one per relation family) in text order; a verbless claim is
    split into noun units. What was dropped or split is added to `notes`."""
    body = re.sub(r"^\s*hypothesis\s*:\s*", "", text, flags=re.I)
    chunks: list[list[str]] = [[]]
    relations: list[tuple[float, str]] = []
    dropped: list[str] = []
    for m in re.finditer(r"[^\W_]+(?:[-'’/][^\W_]+)*|[,;:.!?()\[\]\"]", body):
        tok = m.group(0)
        low = tok.lower()
        if not PART_RE.match(tok) or low in STOPWORDS:
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
    if not aspects:
        words = [w for w in PART_RE.findall(body)]
        if words:
            label = " ".join(words[:6])
            aspects.append(Aspect("a1", label, [label], "concept"))
    return aspects


# Nouns that head a unit with the word before them ("ACE inhibitor", "vitamin D deficiency"), and adjective
# endings that bind a word to the next ("colorectal cancer", "cardiovascular mortality").
_HEAD_NOUNS = frozenset("""inhibitor inhibitors blocker blockers antagonist antagonists agonist agonists receptor
receptors deficiency deficiencies therapy therapies level levels supplementation supplement supplements
exposure infection infections use intake resistance expression vaccine vaccines vaccination""".split())
_ADJ_END = re.compile(r"(al|ic|ive|ous|ary|ar|ine|oid|ial|ed)$", re.I)


def _noun_units(words: list[str]) -> list[str]:
    """Split a verbless run of words into noun units: a one-character word (vitamin D, type 2) and a head noun
    (ACE inhibitor) join the word before them; an adjective (colorectal) joins the word after it."""
    units: list[list[str]] = []
    for w in words:
        joins_prev = bool(units) and (len(w) == 1 or w.isdigit() or w.lower() in _HEAD_NOUNS)
        prev_adj = bool(units) and len(units[-1][-1]) > 4 and bool(_ADJ_END.search(units[-1][-1])) \
            and units[-1][-1].lower() not in _HEAD_NOUNS
        if joins_prev or prev_adj:
            units[-1].append(w)
        else:
            units.append([w])
    return [" ".join(u) for u in units]
