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

_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
# A caption's label alone ("Table 1.", "Figure 2.", "Supplementary Table S3.") opens its title: never a sentence.
_LABEL_ONLY = re.compile(r"(?:fig\.?|figure|table|tab\.|supplementary\s+(?:figure|table)|scheme|box)\s*"
                         r"S?[0-9IVX]+[a-z]?\.", re.I)


def _is_abbrev(word: str) -> bool:
    """Is `word` (the token right before a period) an abbreviation, an initial or a dotted short form?"""
    word = word.lstrip("([\"'“")
    low = word.lower().rstrip(".")
    if low in ABBREVIATIONS:
        return True
    if len(word) == 1 and "A" <= word <= "Z":  # initials (J. Smith) and genus abbreviations (E. coli)
        return True
    return _DOTTED.fullmatch(word) is not None  # e.g, i.e, U.S


def split_sentences(text: str) -> list[str]:
    out: list[str] = []
    for para in re.split(r"\n\s*\n|\r\n\s*\r\n", text):
        para = " ".join(para.split())
        if not para:
            continue
        start = 0
        for m in _BOUNDARY.finditer(para):
            end = m.end(2)
            dot = m.start(1)
            # The word before the period, found from the right: slicing the whole unsplit run here made a long
            # paragraph full of abbreviations ("Fig. A Fig. B ...") quadratic. `para` has single spaces only.
            word = para[max(start, para.rfind(" ", start, dot) + 1):dot]
            if m.group(1) == "." and not m.group(2) and word and _is_abbrev(word):
                continue
            if m.group(1) == "." and _LABEL_ONLY.fullmatch(para, start, m.end(1)):
                continue
            sent = para[start:end].strip()
            if sent:
                out.append(sent)
            start = m.end()
        tail = para[start:].strip()
        if tail:
            out.append(tail)
    return out
