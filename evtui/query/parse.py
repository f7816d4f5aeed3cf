"""Query text -> mode (triplet, claim, hypothesis) and aspects."""

from __future__ import annotations

import re
from collections.abc import Mapping

from evtui.errors import QueryError
from evtui.models import QUERY_MODES, Aspect, ParsedQuery
from evtui.query.aspects import claim_aspects
from evtui.query.terms import PART_RE, concept_variants, relation_terms

_TRIPLET_PAREN = re.compile(r"^\s*[\(\[]\s*(.+?)\s*[\)\]]\s*$", re.S)
_HEDGE = re.compile(
    r"(^\s*(hypothesis\s*:|we\s+hypothesi[sz]e|it\s+is\s+hypothesi[sz]ed|does|do|is|are|can|could|whether)\b)"
    r"|\b(may|might|could|whether|possibly|potentially|hypothesi[sz]e[sd]?)\b|\?\s*$",
    re.I,
)
# Control characters, and lone surrogates (a command-line argument that was not valid UTF-8 arrives with them):
# neither can be encoded for the tokenizers, the seeded random draw or the terminal.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ud800-\udfff]")
MAX_QUERY_CHARS = 2000
# A pasted paragraph splits into dozens of aspects: a dot column wider than the sentence, a pool no sentence covers.
# Every EvidenceBench hypothesis (at most 14) and SciFact claim (at most 12) stays whole.
MAX_ASPECTS = 16


def _triplet_parts(text: str) -> list[str] | None:
    m = _TRIPLET_PAREN.match(text)
    if m:
        parts = [p.strip() for p in m.group(1).split(",")]
        if len(parts) == 3 and all(parts):
            return parts
        return None
    if text.count("|") == 2:
        parts = [p.strip() for p in text.split("|")]
        if all(parts):
            return parts
    return None


def detect_mode(text: str) -> str:
    if _triplet_parts(text):
        return "triplet"
    return "hypothesis" if _HEDGE.search(text) else "claim"


def parse_query(text: str, mode: str | None = None, *, abbreviations: Mapping[str, str] | None = None) -> ParsedQuery:
    if not isinstance(text, str):
        raise QueryError("the query must be text")
    notes: list[str] = []
    clean = _CONTROL.sub(" ", text).strip()
    if len(clean) > MAX_QUERY_CHARS:
        clean = clean[:MAX_QUERY_CHARS]
        notes.append(f"query truncated to its first {MAX_QUERY_CHARS} characters")
    if not PART_RE.search(clean):
        raise QueryError("empty query: type a hypothesis, a claim or a (head, relation, tail) triplet")
    if mode in (None, "", "auto"):
        mode = detect_mode(clean)
        notes.insert(0, f"mode detected: {mode}")
    elif mode not in QUERY_MODES:
        raise QueryError(f"unknown mode {mode!r}; choose one of: auto, {', '.join(QUERY_MODES)}")
    if mode == "triplet":
        parts = _triplet_parts(clean)
        if parts is None:
            bare = clean.strip("()[] ")
            parts = [p.strip() for p in re.split(r"\s*[|,]\s*", bare)]
            if len(parts) != 3 or not all(parts):
                raise QueryError("a triplet needs three parts: (head, relation, tail) or head | relation | tail")
        aspects = [
            Aspect("head", parts[0], concept_variants(parts[0], abbreviations), "head"),
            Aspect("relation", parts[1], relation_terms(parts[1]), "relation"),
            Aspect("tail", parts[2], concept_variants(parts[2], abbreviations), "tail"),
        ]
        aspects = [a for a in aspects if any(PART_RE.search(t) for t in a.terms)]
    else:
        aspects = claim_aspects(clean, abbreviations, notes)
    if not aspects:
        raise QueryError(f"nothing searchable in {text[:80]!r}")
    if len(aspects) > MAX_ASPECTS:
        notes.append(f"the query names {len(aspects)} concepts and relations: searching with the first {MAX_ASPECTS}"
                     " (a claim reads best as one sentence)")
        aspects = aspects[:MAX_ASPECTS]
    return ParsedQuery(text=clean, mode=mode, aspects=aspects, notes=notes)
