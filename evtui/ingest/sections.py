"""Section kind from heading text (Results / Findings / Outcomes -> results, and so on)."""

from __future__ import annotations

import re
from collections.abc import Iterable

from evtui.models import ParsedSentence

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
# Back matter labelled inline, as structured abstracts print it ("FUNDING Bill & Melinda Gates Foundation.",
# "TRIAL REGISTRATION ClinicalTrials.gov NCT…"; 66 SciFact abstract sentences, none of them a gold rationale), or
# written out ("This work was supported by NIH grant …"): it shares a claim's words and reports nothing about it.
# Each pattern reads the sentence's opening, after any "("; the second, when given, must also be found in the sentence ("The hypothesis was supported by our data" is a
# finding; "… supported by grant R01" is funding).
# A heading label: "Funding:", "FUNDING This …", "FUNDING/COMPETING …", not "Funding of hospitals fell".
_LABEL = r"(?:\s*[:./]|\s*\(s\)|\s+(?=(?-i:[A-Z(]))|\s*$)"
_FUNDER = re.compile(r"\b(?:grants?|funds?|funding|foundation|institutes?|council|NIH|NSF|awards?|fellowships?|"
                     r"ministry|agency|programme|program|charity|trust|scholarship|contract)\b", re.I)
_REGISTRY = re.compile(r"\b(?:NCT\d{6,}|ISRCTN\d*|ACTRN\d+|ChiCTR|EudraCT|PROSPERO|CRD\d{6,}|clinicaltrials\.gov|"
                       r"registry|identifier)\b", re.I)
# Who is funded: the work itself ("This work was funded by …"), not a finding's subject ("Patients whose care was
# funded by Medicaid had …").
_SUBJECT = (r"(?:this|the|our|these|all)\s+(?:\w+\s+){0,2}(?:work|study|studies|research|project|trial|analysis|review|"
            r"paper|article|survey|investigation|authors?)\s+(?:\w+\s+){0,4}")
_BACK_MATTER_KINDS: tuple[tuple[str, re.Pattern[str], re.Pattern[str] | None], ...] = (
    ("a funding statement", re.compile(
        r"(?:study\s+)?(?:funding|financial\s+support|sources?\s+of\s+funding)" + _LABEL
        + r"|(?:funded|sponsored|financed)\s+by\b|the\s+(?:funders?|sponsors?)\s+(?:had|has|played)\b|"
        + _SUBJECT + r"(?:was|were|is|are|been)\s+(?:\w+\s+){0,2}(?:funded|sponsored|financed)\s+by\b", re.I), None),
    ("a funding statement", re.compile(
        _SUBJECT + r"(?:was|were|is|are|been)\s+(?:\w+\s+){0,2}supported\s+(?:in\s+part\s+)?by\b"
        r"|supported\s+(?:in\s+part\s+)?by\b|(?:\w+\s+){0,2}(?:funding|financial\s+support)\s+"
        r"(?:\w+\s+){0,3}(?:was|were|is|are|been)\s+(?:\w+\s+)?(?:received|provided|obtained)\b", re.I), _FUNDER),
    ("a conflict-of-interest statement", re.compile(
        r"(?:conflicts?\s+of\s+interests?|competing\s+interests?|disclosures?|declarations?\s+of\s+interests?)" + _LABEL
        + r"|(?:(?:none|neither|each|all)\s+of\s+)?(?:the\s+)?authors?\s+(?:\w+\s+){0,2}"
        r"(?:declare|report|disclose|have|has)\s+(?:\w+\s+){0,3}"
        r"(?:conflicts?|competing|financial\s+interests?|interests?\s+to\s+(?:declare|disclose))\b", re.I), None),
    ("a trial registration", re.compile(
        r"(?:trial\s+)?registration(?:\s+(?:number|details))?" + _LABEL
        + r"|(?:unique\s+)?identifier\s*:|clinicaltrials\.gov\b|registered(?:\s*:|\s+(?:on\s+)?\d)", re.I), None),
    ("a trial registration", re.compile(r"(?:trial\s+)?registration\b|(?:\w+\s+){0,8}(?:is|was|are|were|been)\s+"
                                        r"(?:\w+\s+)?registered\b|"
                                        r"registered\s+(?:at|with|in|as|under)\b", re.I), _REGISTRY),
    ("an acknowledgement", re.compile(
        r"acknowledge?ments?" + _LABEL + r"|author\s+contributions?" + _LABEL
        + r"|we\s+(?:\w+\s+)?(?:thank|acknowledge)\b|(?:the\s+)?authors?\s+(?:\w+\s+)?(?:thank|acknowledge|"
        r"are\s+grateful)\b", re.I), None),
)
_BACK_MATTER_TITLE = re.compile(
    r"^\s*(?:\d+(?:\.\d+)*\.?\s+)?(?:acknowledge?ments?|funding|financial\s+support|conflicts?\s+of\s+interests?|"
    r"competing\s+interests?|disclosures?|declarations?|author\s+contributions?|trial\s+registration|references?|"
    r"bibliography)\b", re.I)


def back_matter(text: str, section_title: str | None = "") -> str:
    """What kind of back matter a sentence is ("a funding statement"), or "" when it is none: by its own opening,
    or by a back-matter section it sits in. A registration number inside a finding ("… in the CoMMpass study
    (NCT01454297) on 664 patients") leaves the finding alone: only the sentence's opening counts."""
    opening = text.lstrip(" ([")
    for kind, pattern, needs in _BACK_MATTER_KINDS:
        if pattern.match(opening) and (needs is None or needs.search(text)):
            return kind
    if section_title and (m := _BACK_MATTER_TITLE.match(section_title)):
        return f"in the {m.group(0).strip()} section"
    return ""


# Keywords, trial registration, funding, conflict-of-interest and acknowledgement lines are the paper's metadata,
# not its text: read as abstract sentences they share a claim's words ("Keywords: randomised trial; older adults"
# was #9 of a paper's sentences for a trial claim). Their own kind, not in SECTION_KINDS (the ranker's section
# features were learned on those): rankers put them last, as they do caption titles.
METADATA_KIND = "metadata"
_KEYWORDS = re.compile(r"(?:key\s*-?\s*words?|index\s+terms|mesh\s+(?:terms|headings))\s*(?:[:—–]|\.\s|\s*$)"
                       r"|(?-i:KEY\s*WORDS?|KEYWORDS?|INDEX TERMS)\b", re.I)


def keywords_line(text: str) -> bool:
    """A keywords line ("Keywords: randomised trial; older adults", "KEY WORDS depression, exercise")."""
    return bool(_KEYWORDS.match(text.lstrip(" ([")))


def metadata_line(text: str) -> str:
    """What kind of metadata line a sentence is ("keywords", "a funding statement", ...), "" for a sentence of text:
    by its own opening only (a finding in a funding section is left to the section)."""
    if keywords_line(text):
        return "keywords"
    return back_matter(text)


def mark_metadata(sentences: Iterable[ParsedSentence]) -> None:
    """Give the metadata lines among a paper's sentences (ParsedSentence) their own kind, in place."""
    for s in sentences:
        if not s.is_heading and s.section_kind not in ("title", CAPTION_KIND) and metadata_line(s.text):
            s.section_kind = METADATA_KIND


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


# A figure's or table's caption: the PDF reader's own kind, or a BioC passage
# of one of PMC's caption types (the BioC loader keeps the type as the section title, of kind "other").
CAPTION_KIND = "caption"
_BIOC_CAPTIONS = frozenset({"fig_caption", "fig_title_caption", "table_caption", "table_title_caption",
                            "table_footnote", "fig_footnote"})
# A caption's label opens its title line ("Figure 3. Kaplan-Meier curves of …", "Table 1: Baseline
# characteristics"); a body sentence that cites a figure ("Figure 2 shows that …") has no stop after the number.
# The PDF reader finds its captions by it too.
CAPTION_LABEL = re.compile(r"^\s*(?:fig\.?|figure|table|tab\.|supplementary\s+(?:figure|table)|scheme|box)\s*"
                           r"S?[0-9IVX]+[a-z]?\s*[.:|—–-]", re.I)


def in_caption(section_kind: str, section_title: str | None) -> bool:
    """Whether a sentence belongs to a figure's or table's caption."""
    return section_kind == CAPTION_KIND or (section_title or "").strip().lower() in _BIOC_CAPTIONS


def caption_title(text: str, section_kind: str, section_title: str | None, index_in_section: int = -1) -> bool:
    """Whether a sentence is a caption's title line: what the figure shows ("Table 1: Prediction of in vivo
    occupancy by HNF1 and HNF4."), a label that names the query's concepts without reporting anything about them.
    Its label, or (where the caption's own sentences are known) its place first in the caption, says so; the
    legend's later sentences may report a result and are left alone."""
    return in_caption(section_kind, section_title) and (index_in_section == 0 or bool(CAPTION_LABEL.match(text)))
