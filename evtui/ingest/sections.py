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


# Back matter that must not inherit the kind of the section before it.
_BACK_MATTER = re.compile(
    r"^(acknowledge?ments?|references?|literature cited|bibliography|funding|conflicts? of interest|"
    r"competing interests?|abbreviations|author contributions?|supplementary|appendix|footnotes?)\b")
_BODY_KINDS = ("introduction", "methods", "results", "discussion")
# The same back matter labelled inline, as structured abstracts print it ("FUNDING Bill & Melinda Gates Foundation.",
# "TRIAL REGISTRATION ClinicalTrials.gov NCT…"): 66 SciFact abstract sentences, none of them a gold rationale.
_INLINE_BACK_MATTER = re.compile(
    r"^(?:funding|trial registration|conflicts? of interest|competing interests?|disclosures?|acknowledge?ments?)\b",
    re.I)


def back_matter_sentence(text: str) -> bool:
    """A sentence that is back matter by its own opening label (funding, registration, disclosures): never evidence,
    whatever section it was filed under."""
    return bool(_INLINE_BACK_MATTER.match(text.strip()))


def flat_section_kind(title: str, previous: str) -> str:
    """Kind of a heading in a flat list of headings (no nesting): an unrecognised heading after a body section
    is almost always one of its subsections ("Clinical patterns of injury" under Results), so it inherits."""
    own = section_kind(title)
    if own != "other":
        return own
    t = _NUMBERING.sub("", title or "").strip().lower()
    if previous in _BODY_KINDS and not _BACK_MATTER.search(t):
        return previous
    return "other"


def section_kind(title: str) -> str:
    t = _NUMBERING.sub("", title or "").strip().lower().rstrip(":.")
    if not t:
        return "other"
    for kind, pat in _RULES:
        if pat.search(t):
            return kind
    return "other"
