"""Files the user names for output are never the library's own, nor the command's input: `export --out`,
`verify --claims C --out P`, `bench runs --csv` (and its per-item CSV) refuse a path inside the data home, however
it is spelled (`..`, a symbolic link to a folder in it, a link to the database), and an output that is an input.
Nothing stored is touched: the library opens as before."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.outpaths import check_output, inside, same_file

BIB = """@article{art2020,
  title = {ACE inhibitors cause cough},
  author = {Smith, John},
  year = {2020},
  abstract = {Cough occurred in 10 percent of patients on ACE inhibitors. It stopped when the drug was stopped.}
}
"""


def _library(home: Path) -> None:
    """A small library with one selected sentence."""
    bib = home.parent / "refs.bib"
    bib.write_text(BIB, encoding="utf-8")
    assert main(["ingest", str(bib)]) == 0
    assert main(["select", "ACE inhibitors cough", "--k", "1", "--no-judge"]) == 0


def _intact(tmp_path: Path) -> None:
    """The library opens and its selection is there (a replaced database would be "damaged")."""
    check = tmp_path / "check.md"
    assert main(["export", "--out", str(check)]) == 0
    assert "cough" in check.read_text(encoding="utf-8").lower()


def _spellings(home: Path, tmp_path: Path) -> list[Path]:
    link = tmp_path / "elsewhere"
    link.symlink_to(home)
    target = tmp_path / "notes.md"
    target.symlink_to(home / "library.duckdb")
    return [home / "library.duckdb", home / "x" / ".." / "library.duckdb", link / "library.duckdb",
            home / "fresh.md", target]


def test_export_refuses_every_spelling_of_the_data_home(tmp_path: Path, _isolated_home: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    home = _isolated_home
    _library(home)
    (home / "x").mkdir()
    capsys.readouterr()
    for out in _spellings(home, tmp_path):
        assert main(["export", "--out", str(out), "--format", "md"]) == 2, out
        err = capsys.readouterr().err
        assert "inside the data home" in err and len(err.strip().splitlines()) == 1, err
    assert not (home / "fresh.md").exists()
    _intact(tmp_path)  # outside the home: written as ever


def test_bench_runs_csv_refuses_the_data_home(tmp_path: Path, _isolated_home: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    home = _isolated_home
    _library(home)
    for out in _spellings(home, tmp_path)[:3]:
        assert main(["bench", "runs", "--csv", str(out)]) == 2, out
        assert "inside the data home" in capsys.readouterr().err
    _intact(tmp_path)


def test_verify_claims_refuses_the_home_and_its_own_input(tmp_path: Path, _isolated_home: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    home = _isolated_home
    _library(home)
    claims = tmp_path / "claims.jsonl"
    claims.write_text(json.dumps({"id": 1, "claim": "Aspirin lowers fever."}) + "\n", encoding="utf-8")
    text = claims.read_text(encoding="utf-8")
    hard = tmp_path / "hard.jsonl"
    os.link(claims, hard)
    capsys.readouterr()
    for out, why in ((home / "library.duckdb", "inside the data home"), (claims, "the file --claims reads"),
                     (tmp_path / "." / "claims.jsonl", "the file --claims reads"), (hard, "the file --claims reads")):
        assert main(["verify", "--claims", str(claims), "--out", str(out)]) == 2, out
        assert why in capsys.readouterr().err
    assert claims.read_text(encoding="utf-8") == text
    _intact(tmp_path)


def test_items_csv_is_not_replaced_unasked(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out.csv"
    beside = tmp_path / "out-items.csv"
    beside.write_text("my own spreadsheet\n", encoding="utf-8")
    assert main(["bench", "runs", "--csv", str(out), "--items"]) == 2
    assert "--force" in capsys.readouterr().err
    assert beside.read_text(encoding="utf-8") == "my own spreadsheet\n" and not out.exists()
    assert main(["bench", "runs", "--csv", str(out), "--items", "--force"]) == 0
    assert beside.read_text(encoding="utf-8") != "my own spreadsheet\n"


def test_inside_and_same_file(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "sub").mkdir(parents=True)
    assert inside(home / "sub" / ".." / "a.md", home) and inside(home, home)
    assert not inside(tmp_path / "homework" / "a.md", home)  # a prefix of the name is not the folder
    a = tmp_path / "a.txt"
    a.write_text("x", encoding="utf-8")
    assert same_file(a, tmp_path / "sub" / ".." / "a.txt") and not same_file(a, tmp_path / "b.txt")
    with pytest.raises(Exception, match="inside the data home"):
        check_output(home / "sub" / "new.md", home, flag="--out")
    assert load_config().home  # the isolated home of the test
