from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.export import Basket, write_export
from evtui.library import Library
from evtui.search import Searcher


def test_basket_persists_orders_and_exports(papers_dir: Path, tmp_path: Path) -> None:
    core = Path(__file__).parents[1] / "fixtures" / "core"
    with Library(load_config()) as lib:
        lib.ingest([papers_dir, core / "PMC2852030.xml"])
        s = Searcher(lib)
        res = s.search("(aspirin, reduce, colorectal cancer)", k=2)
        b = Basket(lib)
        for e in res.evidence:
            assert b.toggle(e, res.query, res.method)
        jats = s.search("pancreatic cancer perfusion CT", k=1, paper="PMC2852030")
        b.add(jats.evidence[0], jats.query, jats.method)
        assert len(b.ids()) == 3
        first = b.ids()[0]
        b.move(first, +1)
        assert b.ids()[1] == first
    with Library(load_config()) as lib:  # survives a restart
        assert len(Basket(lib).ids()) == 3
        out = tmp_path / "ev.md"
        assert write_export(lib, out, "md") == 3
    md = out.read_text(encoding="utf-8")
    assert "## (aspirin, reduce, colorectal cancer)" in md
    assert md.count("\n> ") == 3
    assert "<sub>head</sub>" in md and "<sub>tail</sub>" in md
    assert "Mori (2008)" in md or "Hiromu Mori (2008)" in md
    assert "[PMID 18987909](https://pubmed.ncbi.nlm.nih.gov/18987909/)" in md
    assert "[doi:10.1007/s00261-008-9471-x](https://doi.org/10.1007/s00261-008-9471-x)" in md
    assert "Retrieval score:" in md and "Exported by evtui" in md


def test_cli_select_and_export_formats(papers_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", str(papers_dir), "--json"])
    capsys.readouterr()
    assert main(["select", "ACE inhibitors cause cough", "--k", "2", "--json"]) == 0
    sel = json.loads(capsys.readouterr().out)
    assert len(sel["selection"]) == 2
    for fmt in ("md", "jsonl", "bibtex"):
        out = tmp_path / f"x.{fmt}"
        assert main(["export", "--out", str(out), "--format", fmt, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["sentences"] == 2
        text = out.read_text(encoding="utf-8")
        if fmt == "jsonl":
            rows = [json.loads(line) for line in text.splitlines()]
            assert rows[0]["query"] == "ACE inhibitors cause cough" and rows[0]["highlights"]
        if fmt == "bibtex":
            assert text.startswith("@article{")
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("x.")) == ["x.bibtex", "x.jsonl", "x.md"]


def test_export_errors_are_clear(papers_dir: Path, tmp_path: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])
        with pytest.raises(EvtuiError, match="empty"):
            write_export(lib, tmp_path / "a.md")
        res = Searcher(lib).search("aspirin", k=1)
        Basket(lib).add(res.evidence[0], res.query, res.method)
        with pytest.raises(EvtuiError, match="does not exist"):
            write_export(lib, tmp_path / "nope" / "a.md")
        with pytest.raises(EvtuiError, match="folder"):
            write_export(lib, tmp_path)
