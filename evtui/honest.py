"""Honest result lists: say when no result mentions the query's concepts instead of filling the page.

A query's concepts are its aspects other than the relation ("cause", "reduce"): a sentence that matches only the
relation ("xylophonic zebrafication causes quarkitis" -> rows about anything that "causes") is no evidence. The
lexical methods hide the rows that mention none of the concepts and name the concepts no row mentions; dense and
hybrid rank paraphrases on purpose (no word in common), so their rows are kept and only the note is given.

A row mentions a concept when it holds the concept's phrase (a highlight), or at least half of the concept's content
words with one of those specific ("crows" for "urban crows"; not "protein" for "caspase-11 protein": a word in >= 2%
of scientific abstracts, resources/generic_words.txt, cannot name a concept alone). Claims split into long concepts
that a paper rarely repeats whole: asking for the whole phrase hid 162 of the 776 gold SciFact rationales in `best`'s
top 20 (72 of 448 claims lost all theirs); this rule hides 49 (16 claims), and shows 2,325 rather than 1,920 rows
of unrelated papers (benchmarks/bench_honest.py, BENCHMARKS.md "What the honest filter hides").
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from importlib import resources

from evtui.methods import is_semantic
from evtui.models import Aspect, Evidence
from evtui.query.frames import claim_core_text
from evtui.query.highlight import find_spans
from evtui.query.terms import (
    FILLER,
    PART_RE,
    RELATION_FAMILIES,
    STOPWORDS,
    TOKEN_RE,
    is_capital_stopword,
    stem,
)

# Relation words ("reduce", "risk", "associated") say how, not what: a row holding only those is no mention.
_RELATION_STEMS = frozenset(stem(w) for family in RELATION_FAMILIES.values() for w in family)


@dataclass
class Honest:
    evidence: list[Evidence]
    hidden: int = 0  # rows dropped because they mention none of the concepts
    missing: list[str] = field(default_factory=list)  # concept labels no row mentions
    notes: list[str] = field(default_factory=list)
    partly: dict[str, frozenset[str]] = field(default_factory=dict)  # sentence id -> concepts it names only in part
    mention_notes: list[str] = field(default_factory=list)  # the notes on concepts the rows miss (not on hiding)

    @property
    def nothing(self) -> bool:
        """No row mentions any concept of the query."""
        return not self.evidence


def _or(labels: Sequence[str]) -> str:
    quoted = [f"“{x}”" for x in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def concepts(aspects: Sequence[Aspect]) -> list[Aspect]:
    """The aspects a row must mention to count (all of them when the query has only relations)."""
    found = [a for a in aspects if a.role != "relation"]
    return found or list(aspects)


_POSSESSIVE = re.compile(r"['’]s$", re.IGNORECASE)


def unit(token: str) -> str:
    """A word's stem; a hyphenated name (caspase-11, IL-6, TNF-alpha) stays one unit, in any hyphenation. A
    possessive is its word ("Aspirin's", "COVID-19's", "Crohn's": aspirin, covid19, crohn), in a claim and in a
    sentence alike: as "aspirins" no sentence ever named the subject of "Aspirin's use reduces …"."""
    parts = PART_RE.findall(_POSSESSIVE.sub("", token.lower()))
    return stem(parts[0]) if len(parts) == 1 else "".join(parts)


def content_words(aspect: Aspect) -> list[frozenset[str]]:
    """The aspect's label and its other names (an abbreviation's expansion) as sets of content units: no stopwords,
    filler, relation words or bare numbers. Spelling variants ("caspase11 protein" beside "caspase-11 protein")
    add nothing: a unit is already matched in any hyphenation."""
    def squash(t: str) -> str:
        return "".join(PART_RE.findall(t.lower()))

    out: list[frozenset[str]] = []
    names = [aspect.label] + [t for t in aspect.terms if squash(t) != squash(aspect.label)]
    for name in names if aspect.terms else []:
        units = frozenset(u for tok in TOKEN_RE.findall(name)
                          if (tok.lower() not in STOPWORDS or is_capital_stopword(tok)) and tok.lower() not in FILLER
                          and not tok.isdigit() and (u := _unit_of(tok)) not in _RELATION_STEMS)
        if units and units not in out:
            out.append(units)
    return out


@lru_cache(maxsize=1)
def generic_words() -> frozenset[str]:
    """Units too common in scientific abstracts to name a concept alone (scripts/build_generic_words.py)."""
    text = resources.files("evtui").joinpath("resources/generic_words.txt").read_text(encoding="utf-8")
    return frozenset(w for w in text.split("\n") if w and not w.startswith("#"))


def _unit_of(token: str) -> str:
    """`unit`, but a stopword in capitals (ALL, acute lymphoblastic leukaemia; NO) stays as written: "all" in a
    sentence is no mention of ALL."""
    return token if is_capital_stopword(token) else unit(token)


def _units(text: str) -> set[str]:
    """The text's units, as `content_words` makes them, and each hyphen part's stem (caspase-11 -> caspas, 11)."""
    return {_unit_of(t) for t in TOKEN_RE.findall(text)} | {stem(p.lower()) for p in PART_RE.findall(text)}


def _found(have: set[str], terms: Sequence[frozenset[str]], generic: frozenset[str]) -> int:
    """2: every content unit of one of the names is in `have` (a text's `_units`); 1: at least half of one name's
    (at least one), one of them specific; 0: neither."""
    if not terms:
        return 0
    if any(t <= have for t in terms):
        return 2
    return int(any(len(t & have) >= max(1, math.ceil(len(t) / 2)) and (t & have) - generic for t in terms))


def in_part(text: str, aspects: Sequence[Aspect], skip: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """Ids of the concepts (not in `skip`: those highlighted whole) that `text` mentions by their content words,
    all of them or half with a specific one — what the filter counts, for the judge's rationale."""
    common, have = generic_words(), _units(text)
    return [a.id for a in concepts(aspects) if a.id not in skip and _found(have, content_words(a), common)]


def honest(evidence: Sequence[Evidence], aspects: Sequence[Aspect], method: str, *, partial: bool = True,
           generic: frozenset[str] | None = None) -> Honest:
    """`partial=False`, `generic`: the rule before partial mentions, and another generic list
    (benchmarks/bench_honest.py compares them)."""
    wanted = concepts(aspects)
    ids = {a.id for a in wanted}
    if not evidence or not ids:
        return Honest(list(evidence))
    words = {a.id: content_words(a) for a in wanted} if partial else {}
    common = generic_words() if generic is None else generic

    mentioned: set[str] = set()  # concepts some row names in full: the phrase (a highlight), or every content word

    def mentions(e: Evidence) -> set[str]:
        lit = {h.aspect for h in e.highlights} & ids
        mentioned.update(lit)
        have = _units(e.sentence.text) if words else set()
        found = {aid: _found(have, words[aid], common) for aid in ids - lit if aid in words}
        mentioned.update(aid for aid, level in found.items() if level == 2)
        part = frozenset(aid for aid, level in found.items() if level)
        if part:
            partly_of[e.sentence.id] = part
        return lit | part

    partly_of: dict[str, frozenset[str]] = {}
    by_row = [(e, mentions(e)) for e in evidence]
    partly = set().union(*(m for _e, m in by_row)) - mentioned
    missing = [a.label for a in wanted if a.id not in mentioned]
    out = Honest(list(evidence), missing=missing, partly=partly_of)
    if not is_semantic(method):  # a semantic method's rows may rightly share no word with the query
        out.evidence = [e for e, m in by_row if m]
        out.hidden = len(evidence) - len(out.evidence)
    absent = [a.label for a in wanted if a.id not in mentioned and a.id not in partly]
    in_part = [a.label for a in wanted if a.id in partly]
    # Only the rows asked for are read: "none of the 3 results", never "no sentence" (the library may hold many).
    def none_mention(labels: Sequence[str]) -> str:
        if len(evidence) == 1:
            return f"the result does not mention {_or(labels)}"
        return f"none of the {len(evidence)} results mentions {_or(labels)}"

    if not mentioned and not partly:
        out.notes.append(none_mention([a.label for a in wanted]))
    elif absent:
        out.notes.append(none_mention(absent))
    if in_part and (mentioned or partly):
        out.notes.append(f"mentioned only in part: {', '.join(f'“{x}”' for x in in_part)}")
    out.mention_notes = list(out.notes)
    if out.hidden and (mentioned or partly):
        out.notes.append(f"{out.hidden} sentence(s) mentioning none of the concepts hidden")
    return out


# -- the query's core concepts: what a sentence must name to be evidence on the query's relation ------------------
# A sentence that opens on a pronoun or a demonstrative ("These findings …", "It reduced …") names its subject in
# the sentence before; a structured abstract's label ("CONCLUSIONS", "Results:") comes first.
_LABEL_OPENING = re.compile(r"^\s*(?:[A-Z][A-Z /&]{2,40}(?::|\s)|[A-Z][a-z]+(?:\s+[a-z]+)?\s*:)\s*")
_PRONOUN_LED = re.compile(r"^(?:this|these|that|those|it|its|they|their|such|both|either|neither|the\s+latter|"
                          r"the\s+former|the\s+(?:drug|treatment|intervention|therapy|agent|effect|association)s?)\b",
                          re.I)
# A finding stated in the negative or as null ("did not reduce", "was not associated with", "no effect on").
NEGATED_RESULT = re.compile(r"\b(?:did not|does not|do not|was not|were not|is not|are not|has not|have not|"
                            r"failed to|no significant|not significantly|no (?:association|effect|difference|"
                            r"change|increase|decrease|reduction|benefit|correlation|relationship)|not associated|"
                            r"unrelated to|neither)\b", re.I)


# "Drugs that block IL-6 …": a relation word right after these is inside the subject's clause
_RELATIVE = frozenset({"that", "which", "who", "whose"})


_Key = tuple[tuple[str, str, str], ...]  # (id, label, role) of each aspect, in order


def _placed(aspects: _Key, text: str) -> tuple[list[str], list[tuple[int, tuple[str, str, str]]]]:
    """The frame-free claim's words (lower case), and the aspects outside the claim's frame, in text order (they come
    in it), each with the index of its first word among those words (-1: not found, or no `text`). The frame's
    concepts open the list: those whose first word the frame holds, up to the first that it does not."""
    if not text:
        return [], [(-1, a) for a in aspects]
    core = claim_core_text(text)
    frame = {t.lower() for t in TOKEN_RE.findall(text[:len(text) - len(core)])}
    words = [t.lower() for t in TOKEN_RE.findall(core)]
    out: list[tuple[int, tuple[str, str, str]]] = []
    cursor = 0
    for a in aspects:
        first = next(iter(TOKEN_RE.findall(a[1])), "").lower()
        if not out and first in frame and first not in words[cursor:]:
            continue  # in the frame
        at = words.index(first, cursor) if first in words[cursor:] else -1
        cursor = at + 1 if at >= 0 else cursor
        out.append((at, a))
    return words, out


def core_sides(aspects: Sequence[Aspect], text: str = "") -> tuple[list[str], list[str]]:
    """(subject ids, outcome ids): a triplet's head and tail; a claim's concepts before its first relation word and
    those after it ("Vitamin D supplementation" | "fracture risk"). A claim with no relation word between two
    concepts reads its first concept (with those it joins by "of": "low levels of IL-6") as the subject and the rest
    as outcomes; one concept alone has no outcome. `text`, the claim: concepts only in its frame (`claim_core_text`)
    are neither, and a relation word inside the subject ("Drugs that block IL-6 increase …") splits nothing."""
    subject, outcome = _core_sides(tuple((a.id, a.label, a.role) for a in aspects), text)
    return list(subject), list(outcome)


@lru_cache(maxsize=512)  # the judge and the within-paper rank ask once per sentence, for one query
def _core_sides(aspects: _Key, text: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    heads = tuple(i for i, _label, role in aspects if role == "head")
    tails = tuple(i for i, _label, role in aspects if role == "tail")
    if heads or tails:
        return heads, tails
    words, placed = _placed(aspects, text)
    if not any(a[2] != "relation" for _p, a in placed):  # nothing outside the frame: read it all
        placed = [(-1, a) for a in aspects]
    ordered = [a for _p, a in placed]
    ids = [a[0] for a in ordered if a[2] != "relation"]
    # a relation word right after "that" / "which" is inside the subject's clause ("Drugs that block IL-6 …")
    rels = [n for n, (_at, a) in enumerate(placed) if a[2] == "relation"]
    splits = [n for n in rels if not (placed[n][0] > 0 and words[placed[n][0] - 1] in _RELATIVE)] or rels
    if splits:
        before = tuple(a[0] for a in ordered[:splits[0]] if a[2] != "relation")
        after = tuple(a[0] for a in ordered[splits[0]:] if a[2] != "relation")
        if before and after:
            return before, after
    subject = ids[:1]
    # "low levels of IL-6", "One type of COVID-19 test": the subject runs on through "of", an outcome left
    spans = [(at, at + len(TOKEN_RE.findall(a[1])), a[0]) for at, a in placed if a[2] != "relation"]
    for (start0, end, _i), (start, _e, nxt) in zip(spans, spans[1:], strict=False):
        if start0 < 0 or words[end:start] not in (["of"], ["of", "the"]) or len(subject) + 1 >= len(ids):
            break
        subject.append(nxt)
    return tuple(subject), tuple(i for i in ids if i not in subject)


def named(text: str, aspects: Sequence[Aspect], lit: set[str] | None = None) -> set[str]:
    """The concepts `text` names: highlighted whole (`lit`: its highlights' aspects, found here when not given)
    or mentioned in part."""
    whole = set(lit) if lit is not None else {s.aspect for s in find_spans(text, aspects)}
    ids = {a.id for a in concepts(aspects)}
    return (whole & ids) | set(in_part(text, aspects, whole))


def names_somewhere(sentences: Iterable[tuple[str, set[str]]], aspects: Sequence[Aspect], ids: set[str]) -> bool:
    """Whether any of a paper's sentences, as (text, the aspects its highlights cover), names one of the concepts
    `ids` as `named` reads a sentence."""
    return any(ids & named(text, aspects, lit) for text, lit in sentences)


def pronoun_led(text: str) -> bool:
    """Whether the sentence opens (after any structured-abstract label) on a pronoun or demonstrative."""
    return bool(_PRONOUN_LED.match(_LABEL_OPENING.sub("", text, count=1)))


@dataclass(frozen=True)
class Core:
    """How much of the query's core a sentence names (its previous sentence lending the subject when it opens on
    a pronoun)."""

    subject: bool
    outcome: bool
    relation: bool  # a relation word of the query, or the finding stated in the negative
    negated: bool

    @property
    def both(self) -> bool:
        return self.subject and self.outcome


def core_of(text: str, aspects: Sequence[Aspect], lit: set[str] | None = None, previous: str = "",
            claim: str = "") -> Core:
    """`lit`: the aspects the sentence's highlights cover (found here when not given); `claim`: the query's text
    (`core_sides`)."""
    if lit is None:
        lit = {s.aspect for s in find_spans(text, aspects)}
    subj, outc = core_sides(aspects, claim)
    have = named(text, aspects, lit)
    if previous and pronoun_led(text):
        have |= named(previous, aspects)
    said = any(a.role == "relation" and a.id in lit for a in aspects)
    neg = bool(NEGATED_RESULT.search(text))
    return Core(subject=bool(set(subj) & have) or not subj, outcome=bool(set(outc) & have) or not outc,
                relation=said or neg, negated=neg)

