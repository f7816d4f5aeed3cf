"""A selection whose papers were removed from the library: the .bib a researcher already has is not replaced by an
empty one that the CLI calls a success."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.cli import main

BIB = """@misc{noyear,
  title = {Unpublished notes on ketamine dosing},
  author = {Doe, Jane},
  abstract = {Ketamine dosing of 0.5 mg/kg relieved depressive symptoms within hours.}
}
"""


def test_a_bib_of_removed_papers_only_is_refused_and_the_old_file_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "refs.bib")]) == 0
    assert main(["select", "ketamine dosing relieved depressive symptoms", "--k", "1", "--no-judge"]) == 0
    out = tmp_path / "paper.bib"
    assert main(["export", "--out", str(out)]) == 0
    before = out.read_text(encoding="utf-8")
    assert before.startswith("@misc{doeunpublished,")
    assert main(["remove", "bib:noyear"]) == 0
    capsys.readouterr()
    assert main(["export", "--out", str(out)]) == 2  # was 0, "wrote 1 sentence(s)", and an empty paper.bib
    assert "no BibTeX entry to write" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8") == before
    # the Markdown still lists the sentence, and says its section is unknown instead of leaving a gap
    md = tmp_path / "notes.md"
    assert main(["export", "--out", str(md)]) == 0
    assert "- Section: unknown · sentence `bib:noyear:1`" in md.read_text(encoding="utf-8")
