"""Which of two readings of one paper is the stronger: a new reading replaces a stored one of the same paper (under
its id, or as the better record of its DOI / PMCID) only when it carries as much of the paper. A reference entry
whose PDF went missing or broke (title and abstract only) never replaces the full text read from that PDF, and a
JATS file of front matter only (no body) never replaces a PDF reading: each would drop the paper's sentences and
the selections made in them."""

from __future__ import annotations

from collections.abc import Mapping

from evtui.models import ParsedPaper

# A JATS text is the better reading of a PDF's paper when it has a body and at least this share of the PDF
# reading's sentences (a PDF also holds captions and running text that JATS keeps apart).
JATS_SHARE = 0.5
_FRONT = frozenset({"title", "abstract"})


def body_sentences(p: ParsedPaper) -> int:
    """The sentences of `p` past its title and abstract: what a stub (front matter only) lacks."""
    return sum(1 for s in p.sentences if s.section_kind not in _FRONT and not s.is_heading)


def full_text(info: Mapping[str, object]) -> bool:
    """False for a metadata-only reading (a reference entry or Zotero item without a readable PDF)."""
    return info.get("full_text") is not False


def weaker(new: ParsedPaper, stored_format: str, stored_n: int, stored_info: Mapping[str, object],
           same_file: bool) -> str | None:
    """Why `new` must not replace a stored reading of the same paper (its format, sentence count and info;
    `same_file`: read from the file `new` comes from, an edit of which is the user's to make), or None."""
    if full_text(stored_info) and not full_text(new.info):
        missing = new.info.get("missing")
        why = str(missing[0]) if isinstance(missing, list) and missing else "no readable PDF"
        return f"{why[:200]}; the full text stored before is kept (a reading without it never replaces it)"
    if new.source_format == "jats" and not same_file and full_text(stored_info):
        body = body_sentences(new)
        if body == 0 or len(new.sentences) < JATS_SHARE * stored_n:
            what = "front matter only, no body" if body == 0 else f"{len(new.sentences)} sentence(s)"
            return (f"this JATS text ({what}) holds less of the paper than the {stored_format or 'stored'} reading "
                    f"of {stored_n} sentence(s), which is kept")
    return None
