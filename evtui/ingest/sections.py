"""Section kind from heading text (Results / Findings / Outcomes -> results, and so on)."""

from __future__ import annotations

import re

_RULES: list[tuple[str, re.Pattern[str]]] = [
    ("abstract", re.compile(r"^(abstract|summary of the article|graphical abstract)\b")),
    ("results", re.compile(r"^(results?|findings|outcomes?|main results|experimental results|results and discussion)\b")),
    ("methods", re.compile(
        r"^(methods?|materials?( and| &) methods?|patients?( and| &) methods?|methodology|experimental( procedures| section| design)?|"
        r"study (design|population)|statistical analys[ie]s|subjects( and| &) methods|participants|data collection|"
        r"materials?|setting|design|measurements|procedures?|data analysis|analysis)\b")),
    ("introduction", re.compile(r"^(introduction|background|overview|rationale|objectives?|aims?)\b")),
    ("discussion", re.compile(r"^(discussion|general discussion|comment)\b")),
    ("conclusion", re.compile(r"^(conclusions?|concluding remarks|summary|implications|interpretation)\b")),
]
_NUMBERING = re.compile(r"^\s*(?:[0-9]+(?:\.[0-9]+)*\.?|[IVXLC]+\.|[A-Z]\.)\s+")


def section_kind(title: str) -> str:
    t = _NUMBERING.sub("", title or "").strip().lower().rstrip(":.")
    if not t:
        return "other"
    for kind, pat in _RULES:
        if pat.search(t):
            return kind
    return "other"
