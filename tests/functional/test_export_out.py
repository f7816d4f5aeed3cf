"""Writing it up: `--out -` is standard output, a .bib of reference-manager entries keeps each entry's DOI and kind,
and the app asks before replacing a file it did not write."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import DataTable, Input
from tui_pilot import TRIPLET, focus_results, notified, run, search, started, until

from evtui.cli import main
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.modals import ConfirmScreen

BIB = """@misc{pre2023,
  title = {mRNA Vaccines Reduce Hospitalisation: a Preprint},
  author = {{World Health Organization} and Chen, Wei},
  year = {2023},
  doi = {10.1101/2023.01.01.123456},
  abstract = {Vaccination reduced hospitalisation by 80 percent. No serious adverse events were seen.}
}
@article{art2020,
  title = {ACE inhibitors cause cough},
  author = {Smith, John},
  journal = {J. Hypertens.},
  year = {2020},
  doi = {10.1000/abc_123},
  abstract = {Cough occurred in 10 percent of patients on ACE inhibitors.}
}
"""


def test_out_dash_is_standard_output(papers_ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["select", "ACE inhibitors cause cough", "--k", "2", "--no-judge"]) == 0
    capsys.readouterr()
    assert main(["export", "--out", "-", "--format", "bibtex"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("@") and out.count("\n@") + 1 == 1  # one paper, on stdout
    assert main(["export", "--out", "-"]) == 0
    assert capsys.readouterr().out.startswith("# Evidence\n")
    assert not (tmp_path / "-").exists()  # it wrote a file named "-"
    capsys.readouterr()
    # stdout holds the document: a JSON report after it would corrupt both, so the pair is refused in one line
    assert main(["export", "--out", "-", "--json"]) == 2
    got = capsys.readouterr()
    assert json.loads(got.out)["error"].startswith("--out - writes the export to standard output")
    assert main(["export", "--out", "-", "--format", "bibtex"]) == 0
    assert "wrote 2 sentence(s) to standard output" in capsys.readouterr().err


def test_bib_entries_round_trip_into_bibtex(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "lib.bib").write_text(BIB, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "lib.bib")]) == 0
    assert main(["select", "vaccination reduced hospitalisation", "--k", "1", "--no-judge"]) == 0
    assert main(["select", "ACE inhibitors cause cough", "--k", "1", "--no-judge"]) == 0
    out = tmp_path / "refs.bib"
    assert main(["export", "--out", str(out)]) == 0
    bib = out.read_text(encoding="utf-8")
    assert "@misc{worldhealthorganization2023mrna," in bib and "note = {Preprint}" in bib
    assert "@article{smith2020ace," in bib and "doi = {10.1000/abc_123}" in bib
    assert "title = {{mRNA} Vaccines Reduce Hospitalisation: a Preprint}" in bib
    assert "author = {{World Health Organization} and Wei Chen}" in bib
    md = tmp_path / "notes.md"
    assert main(["export", "--out", str(md)]) == 0
    refs = md.read_text(encoding="utf-8").split("## References", 1)[1]
    assert "`worldhealthorganization2023mrna`" in refs and "`smith2020ace`" in refs


async def _export_screen(app: Any, pilot: Any) -> ExportScreen:
    await search(app, pilot, TRIPLET)
    await focus_results(app, pilot)
    await pilot.press("space", "e")
    await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
    screen = app.screen
    assert isinstance(screen, ExportScreen)
    await until(pilot, lambda: screen.query_one("#basket", DataTable).row_count == 1, "the basket")
    return screen


def test_the_app_asks_before_replacing_a_file_it_did_not_write(papers_ingested: Path, tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    mine = tmp_path / "thesis.md"
    mine.write_text("# My thesis\n", encoding="utf-8")

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _export_screen(app, pilot)
            path = screen.query_one("#export-path", Input)
            path.value = "-"
            await pilot.press("ctrl+s")
            await notified(pilot, "standard output")
            assert not (tmp_path / "-").exists()
            path.value = str(mine)
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the replace question")
            await pilot.press("n")
            await until(pilot, lambda: app.screen is screen, "the export screen")
            assert mine.read_text(encoding="utf-8") == "# My thesis\n"  # kept
            await pilot.press("ctrl+s")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the replace question")
            await pilot.press("y")
            await until(pilot, lambda: mine.read_text(encoding="utf-8").startswith("# Evidence"), "the export")
            os.utime(mine, (0, 0))
            await pilot.press("ctrl+s")  # written by this app: saved again without asking
            await until(pilot, lambda: mine.stat().st_mtime > 0, "the second save")
            assert app.screen is screen

    run(flow)
