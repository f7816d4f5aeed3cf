"""RIS: a value wrapped onto many lines (EndNote wraps long abstracts) is joined once, not line by line — a
wrapped abstract of 200,000 lines copied the growing value at each line (quadratic) — and reads as before."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest.refs import load_ris
from evtui.models import ParsedPaper


def test_wrapped_values_are_joined(tmp_path: Path) -> None:
    path = tmp_path / "refs.ris"
    path.write_text("TY  - JOUR\nTI  - A long\n  wrapped title\nAB  - First part. \n second part\nER  - \n"
                    "TY  - JOUR\nTI  - Another title\nER  - \n  after the end\n", encoding="utf-8")
    got = list(load_ris(path))
    assert all(isinstance(p, ParsedPaper) for p in got)
    assert [p.title for p in got] == ["A long wrapped title", "Another title"]
    assert [s.text for s in got[0].sentences] == ["A long wrapped title", "First part. second part"]


def test_a_value_wrapped_onto_many_lines_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "long.ris"
    path.write_text("TY  - JOUR\nTI  - Title\nAB  - a\n" + "word\n" * 100_000 + "ER  - \n", encoding="utf-8")
    (paper,) = list(load_ris(path))
    assert isinstance(paper, ParsedPaper)
    assert sum(s.text.count("word") for s in paper.sentences) == 100_000
