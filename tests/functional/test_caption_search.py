"""A caption's title line never tops a search: "Table 1: Prediction of in vivo occupancy by HNF1 and HNF4." names
the hypothesis's concepts, reports nothing, and was the first of the `best` results for it in a PDF library."""

from __future__ import annotations

from pathlib import Path

from evtui.cli import main
from evtui.ingest.sections import caption_title
from evtui.library import Library
from evtui.search import Searcher

RAO = Path(__file__).parents[1] / "fixtures" / "pdf" / "PMC2768302.pdf"


def test_caption_titles_follow_every_other_result() -> None:
    assert main(["ingest", str(RAO)]) == 0
    lib = Library()
    try:
        hits = Searcher(lib).search("HNF1 and HNF4 binding predicts in vivo occupancy", k=500, method="best").evidence
    finally:
        lib.close()
    flags = [caption_title(e.sentence.text, e.sentence.section_kind, e.sentence.section_title) for e in hits]
    # the pool holds caption titles that match (before the fix three were in the top 10, one of them first) ...
    assert any(flags) and not flags[0]
    # ... and every one of them now comes after every other result
    first = flags.index(True)
    assert all(flags[first:]), [e.sentence.text[:60] for e in hits[first:]]
