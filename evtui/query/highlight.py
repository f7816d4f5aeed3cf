"""Aspects -> highlight spans in a sentence (matched by stem)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evtui.models import Aspect, Span
from evtui.query.terms import DRUG_CLASSES, PART_RE, drug_class, is_capital_stopword, search_terms, stem


@dataclass(slots=True)
class Matcher:
    """Per-aspect stem sequences, matched against a sentence's tokens (hyphen parts count as tokens too)."""

    patterns: list[tuple[str, tuple[str, ...]]]  # (aspect id, stems), longest first
    loose: list[tuple[str, tuple[str, ...]]]  # a multi-word label's words, matched apart when the phrase is absent
    # Stems only a word written in capitals matches: a stopword used as an abbreviation (NO, nitric oxide) must not
    # light every "no" of a sentence.
    capitals: frozenset[str] = frozenset()
    classes: frozenset[str] = frozenset()  # drug classes the patterns name ("statin"): their members light too

    def spans(self, text: str) -> list[Span]:
        # Linear in the sentence: patterns are looked up through each stem's positions, and overlap with an
        # aspect's earlier spans is one flag per token (checking every earlier span made a long sentence with
        # many matches quadratic: 135 s for 1 MB).
        toks = [(m.start(), m.end(), stem(m.group(0))) for m in PART_RE.finditer(text)]
        if not toks:
            return []
        out: list[Span] = []
        stems = [t[2] for t in toks]
        if self.capitals:  # "no" is not NO: a lower-case word takes no stem a capitals-only pattern asks for
            for i, (s0, s1, st) in enumerate(toks):
                if st in self.capitals and not text[s0:s1].isupper():
                    stems[i] = ""
        positions: dict[str, list[int]] = {}
        for i, st in enumerate(stems):
            positions.setdefault(st, []).append(i)
        alt: dict[int, str] = {}  # token -> the drug class its INN stem names ("simvastatin" -> "statin")
        if self.classes:
            for i, st in enumerate(stems):
                cls = drug_class(st) if st else None
                if cls in self.classes and cls != st:
                    alt[i] = cls
                    positions.setdefault(cls, []).append(i)
        taken: dict[str, bytearray] = {}  # aspect -> 1 per token already inside one of its spans
        for aid, pat in self.patterns:
            n = len(pat)
            for i in positions.get(pat[0], ()):
                if i + n > len(stems) or (n > 1 and tuple(stems[i:i + n]) != pat and not (
                        alt and all(stems[i + j] == w or alt.get(i + j) == w for j, w in enumerate(pat)))):
                    continue
                cover = taken.get(aid)
                if cover is None:
                    cover = taken[aid] = bytearray(len(toks))
                elif cover.find(1, i, i + n) != -1:
                    continue
                cover[i:i + n] = b"\x01" * n
                out.append(Span(aid, toks[i][0], toks[i + n - 1][1]))
        for aid, words in self.loose:
            if aid in taken:
                continue
            hits = [positions.get(w, ()) for w in words]
            if all(hits):
                for h in hits:
                    out.extend(Span(aid, toks[j][0], toks[j][1]) for j in h)
        out.sort(key=lambda s: (s.start, s.end))
        return _merge_hyphenated(out, text)


def _merge_hyphenated(spans: list[Span], text: str) -> list[Span]:
    """Join one aspect's spans that only a hyphen separates, so TNF-α highlights as one piece."""
    merged: list[Span] = []
    for sp in spans:
        prev = next((m for m in reversed(merged[-3:]) if m.aspect == sp.aspect), None)
        if prev is not None and text[prev.end:sp.start] in ("-", "‐", "–") :
            prev.end = max(prev.end, sp.end)
            continue
        merged.append(Span(sp.aspect, sp.start, sp.end))
    for sp in merged:  # "(ACE) inhibitors": a phrase across a bracket takes the whole bracket, not "ACE) inhibitors"
        inner = text[sp.start:sp.end]
        if inner.count(")") > inner.count("(") and sp.start > 0 and text[sp.start - 1] == "(":
            sp.start -= 1
        elif inner.count("(") > inner.count(")") and text[sp.end:sp.end + 1] == ")":
            sp.end += 1
    return merged


def compile_matcher(aspects: Sequence[Aspect]) -> Matcher:
    pats: list[tuple[str, tuple[str, ...]]] = []
    capitals = frozenset(stem(w) for a in aspects for t in a.terms for w in PART_RE.findall(t)
                         if is_capital_stopword(w))
    for a in aspects:
        seen: set[tuple[str, ...]] = set()
        for words in search_terms(a):
            key = tuple(stem(w) for w in words)
            if key and key not in seen:
                seen.add(key)
                pats.append((a.id, key))
    pats.sort(key=lambda p: -len(p[1]))
    loose = []
    for a in aspects:
        terms = search_terms(a)
        if terms and len(terms[0]) > 1 and a.role != "relation":
            loose.append((a.id, tuple(stem(w) for w in terms[0])))
    classes = frozenset(p for _aid, pat in pats for p in pat if p in DRUG_CLASSES)
    return Matcher(pats, loose, capitals, classes)


def find_spans(text: str, aspects: Sequence[Aspect]) -> list[Span]:
    return compile_matcher(aspects).spans(text)


def covered_aspects(spans: Iterable[Span]) -> list[str]:
    return sorted({s.aspect for s in spans})
