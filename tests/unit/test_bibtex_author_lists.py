"""BibTeX author lists as BibTeX reads them: "and" inside braces is part of an organisation's name, and the
three-part "von Last, Jr, First" form keeps its suffix last."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest import iter_papers


def test_braced_organisation_and_jr_names(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{cdc2020,\n  title = {Masks and transmission},\n"
        "  author = {{Centers for Disease Control and Prevention} and Lee, Ann and Smith, Jr., John and "
        "{Ben and Jerry, Inc.}},\n  year = {2020}\n}\n", encoding="utf-8")
    papers = [p for p in iter_papers(bib) if hasattr(p, "authors")]
    assert papers[0].authors == ["Centers for Disease Control and Prevention", "Ann Lee", "John Smith Jr.",
                                 "Ben and Jerry, Inc."]
