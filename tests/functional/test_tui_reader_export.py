"""Reader and Export screens as a reviewer uses them: a sentence picked while reading that no search ranked is
exported as such (not with a 0.000 "best" score), the reader's status line keeps the selected count at 80
columns under a long section title, and home / end move the Export list's cursor (so J/K move that sentence)."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static
from tui_pilot import TRIPLET, focus_results, reader_at_top_hit, run, search, started, until

from evtui.config import load_config
from evtui.export import READER_METHOD, to_markdown
from evtui.library import Library
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.reader import ReaderScreen

LONG = "Comparison of magnetic resonance and positron emission tomography for whole body imaging of metastases"


def _long_section_library(tmp_path: Path) -> None:
    d = tmp_path / "long"
    d.mkdir()
    (d / "pet.md").write_text(
        f"# Aspirin and colorectal cancer imaging\n\n## {LONG}\n\n"
        "Aspirin reduced colorectal cancer incidence in the imaged cohort. "
        "Imaging was done every year for ten years.\n", encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([d])


def test_a_sentence_picked_while_reading_is_exported_as_not_ranked(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            assert app.result is not None
            top = app.result.evidence[0]
            # the reader opened with one ranked hit: every other sentence of the paper was not ranked
            app.push_screen(ReaderScreen(top.sentence.paper_id, app.result.query, "best", [top]))
            await until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
            reader = app.screen
            assert isinstance(reader, ReaderScreen)
            await until(pilot, lambda: reader.paper is not None and reader.current_id() == top.sentence.id, "the hit")
            other = next(sid for sid, s in reader.sentences.items()
                         if sid != top.sentence.id and not s.is_heading and s.section_kind != "title")
            await pilot.press("space")  # the ranked hit
            reader.goto(other)
            await pilot.press("space")  # a sentence read, not ranked
            assert app.basket is not None
            items = {it.sentence_id: it for it in app.basket.items()}
            assert items[top.sentence.id].method == "best" and items[top.sentence.id].score == top.score
            assert items[other].method == READER_METHOD
            text = to_markdown(list(items.values()))
            assert text.count("- Retrieval score: none (picked while reading the paper, not ranked by a search)") == 1
            assert "0.000" not in text

    run(flow)


def test_reader_status_keeps_the_selected_count_at_80_columns(tmp_path: Path) -> None:
    _long_section_library(tmp_path)

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            assert app.result is not None and app.result.evidence
            assert app.result.evidence[0].sentence.section_title == LONG
            reader = await reader_at_top_hit(app, pilot)
            top = app.result.evidence[0]
            await pilot.press("space")
            status = reader.query_one("#reader-status", Static)
            line = str(status.render())
            assert line.endswith("· 1 selected") and "…" in line, line
            assert len(line) <= status.content_region.width
            assert f"sentence {top.sentence.position}" in line

    run(flow)


def test_home_and_end_move_the_export_lists_cursor(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            await focus_results(app, pilot)
            await pilot.press("space", "j", "space", "j", "space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            screen = app.screen
            assert isinstance(screen, ExportScreen)
            table = screen.query_one("#basket", DataTable)
            await until(pilot, lambda: table.row_count == 3, "the basket")
            await pilot.pause(0.2)
            first, last = screen.items[0].sentence_id, screen.items[-1].sentence_id
            await pilot.press("end")
            assert table.cursor_row == 2
            await pilot.press("K")  # the last sentence moves up, as the user pointed at it
            assert app.basket is not None
            assert app.basket.ids()[1] == last
            await pilot.press("home")
            assert table.cursor_row == 0 and screen.current() is not None
            assert screen.current().sentence_id == first  # type: ignore[union-attr]

    run(flow)
