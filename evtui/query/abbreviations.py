"""Abbreviations defined in a library's own text ('long form (SF)'), for a query's surface variants."""

from __future__ import annotations

import re
from collections.abc import Iterable

_ABBR = re.compile(r"\(([A-Za-z][A-Za-z0-9\-αβγ]{1,9})\)")
_ABBR_WINDOW = 400  # characters before "(SF)" searched for its long form: 15 words of ordinary prose fit


def extract_abbreviations(sentences: Iterable[str]) -> dict[str, str]:
    """Schwartz–Hearst: for 'long form (SF)', the shortest preceding words whose initials cover SF."""
    counts: dict[tuple[str, str], int] = {}
    for s in sentences:
        for m in _ABBR.finditer(s):
            short = m.group(1)
            if not any(c.isupper() for c in short) or short.isdigit():
                continue
            # Only the last few words can be the long form: look at a bounded window before the parenthesis
            # (the whole prefix made a long sentence full of parentheses quadratic).
            lo = max(0, m.start() - _ABBR_WINDOW)
            words = re.findall(r"[^\s(]+", s[lo:m.start()].rstrip())
            if lo > 0 and words and all(not c.isspace() and c != "(" for c in s[lo - 1:lo + 1]):
                words = words[1:]  # a word cut by the window's edge
            words = words[-min(len(short) + 5, len(short) * 2):]
            long = _match_long(short, words)
            if long:
                counts[(short, long)] = counts.get((short, long), 0) + 1
    best: dict[str, tuple[int, str]] = {}
    for (short, long), n in counts.items():
        if short not in best or n > best[short][0]:
            best[short] = (n, long)
    return {k: v[1] for k, v in best.items()}


def _match_long(short: str, words: list[str]) -> str | None:
    if not words:
        return None
    cand = " ".join(words)
    s_i = len(short) - 1
    l_i = len(cand) - 1
    sl, cl = short.lower(), cand.lower()
    while s_i >= 0:
        c = sl[s_i]
        if not c.isalnum():
            s_i -= 1
            continue
        while l_i >= 0 and (cl[l_i] != c or (s_i == 0 and l_i > 0 and cl[l_i - 1].isalnum())):
            l_i -= 1
        if l_i < 0:
            return None
        s_i -= 1
        l_i -= 1
    start = cand.rfind(" ", 0, l_i + 1) + 1
    long = cand[start:].strip(" ,;:")
    if len(long) <= len(short) or long.lower().startswith(short.lower()):
        return None
    return long
