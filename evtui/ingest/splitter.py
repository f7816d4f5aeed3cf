"""A sentence splitter for scientific prose: regex candidates, then vetoes for abbreviations and numbers."""

from __future__ import annotations

import re

# Tokens after which a period does not end a sentence.
ABBREVIATIONS = frozenset(
    "al fig figs tab tabs eq eqs ref refs e.g i.e vs cf approx ca no nos dr mr mrs ms prof inc ltd sp spp st "
    "etc resp var subsp ssp jr sr co corp dept univ vol pp ed eds min max mol wt conc temp ph.d".split()
)
# A candidate boundary: terminal punctuation, optional closing quote/bracket, whitespace, then a sentence start.
_BOUNDARY = re.compile(r"([.!?])([\"'”’)\]]*)(\s+)(?=[\"'“‘(\[]?[A-Z0-9ΑΒΓΔΕΖΗΘΙΚΛΜΝΞΟΠΡΣΤΥΦΧΨΩ])")
_WORD_BEFORE = re.compile(r"(\S+)$")


def _is_abbrev(before: str, nxt: str) -> bool:
    m = _WORD_BEFORE.search(before)
    if not m:
        return False
    word = m.group(1).lstrip("([\"'“")
    low = word.lower().rstrip(".")
    if low in ABBREVIATIONS:
        return True
    if re.fullmatch(r"[A-Z]", word):  # initials (J. Smith) and genus abbreviations (E. coli)
        return True
    if re.fullmatch(r"(?:[A-Za-z]\.)+[A-Za-z]", word):  # e.g, i.e, U.S
        return True
    return False


def split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for para in re.split(r"\n\s*\n|\r\n\s*\r\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        start = 0
        for m in _BOUNDARY.finditer(para):
            end = m.end(2)
            before = para[start:m.start(1)]
            if m.group(1) == "." and not m.group(2) and _is_abbrev(before, para[m.end():]):
                continue
            sent = para[start:end].strip()
            if sent:
                out.append(sent)
            start = m.end()
        tail = para[start:].strip()
        if tail:
            out.append(tail)
    return out
