"""The app at 80x24: every screen's key bar fits its line (the keys that matter first, `?` always),
an ingest that finished says so instead of an empty "--:--:--" time left, and Export back from another mode gives
the keys to its list, not to the path field they would be typed into."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.widgets import DataTable, Input, Label
from tui_pilot import focus_results, library_screen, open_screen, run, search, started, until

from evtui.tui.screens.bench.screen import BenchScreen
from evtui.tui.screens.export import ExportScreen
from evtui.tui.widgets.keybar import KeyBar

NARROW = (80, 24)


def bar_line(app: object) -> str:
    bar = app.screen.query_one(KeyBar)  # type: ignore[attr-defined]
    line = bar.render()
    assert line.cell_length <= bar.size.width, f"cut at {bar.size.width} columns: {line.plain!r}"
    return line.plain


def test_every_key_bar_fits_80_columns_with_the_screens_own_keys(papers_ingested: Path) -> None:
    """At 80 columns the bars ran to 100-240 cells and were cut with "…": the Library's `z` and `^r` were seen
    only in `?`. Each bar now fits, with the screen's keys before the app's and Help always at the end."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "(aspirin, reduce, colorectal cancer)")
            await focus_results(app, pilot)
            await pilot.pause()
            line = bar_line(app)
            for shown in ("space Select", "o Open", "d Detail", "s Judge", "? Help"):
                assert shown in line, line
            await pilot.press("escape")
            await library_screen(app, pilot)
            await pilot.pause()
            line = bar_line(app)
            for shown in ("f Find", "a Add", "x Remove", "m Embed", "^r Reload", "z Collection", "? Help"):
                assert shown in line, line
            await pilot.press("e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            await pilot.pause()
            line = bar_line(app)
            for shown in ("K Up", "J Down", "x Remove", "^s Save", "w Save to…", "? Help"):
                assert shown in line, line
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, BenchScreen), "the bench screen")
            await pilot.pause()
            line = bar_line(app)
            for shown in ("r Run sweep", "1 Sweep", "2 Runs", "3 Items", "? Help"):
                assert shown in line, line
            # wide again: everything, the app's keys too, as before
            await pilot.resize_terminal(200, 40)
            await until(pilot, lambda: "l Library" in bar_line(app), "the app's keys back on a wide bar")

    run(flow)


async def ingested_from_library(app: Any, pilot: Any, path: Path, said: str) -> Any:
    """The Library screen after adding `path` through its add field, once the ingest's message starting `said` is up."""
    screen = await library_screen(app, pilot)
    field = screen.query_one("#add-path", Input)
    field.focus()
    field.value = str(path)
    await pilot.press("enter")
    await until(pilot, lambda: any(n.startswith(said) for n in app.notified), "the ingest", timeout=60)
    await pilot.pause()
    return screen


def test_a_finished_ingest_says_done_and_how_long_instead_of_no_time_left(papers_ingested: Path,
                                                                         tmp_path: Path) -> None:
    paper = tmp_path / "new-paper.txt"
    paper.write_text("Title: Aspirin and polyps\n\nAspirin reduced the recurrence of colorectal adenomas in the "
                     "treated group.\n", encoding="utf-8")

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await ingested_from_library(app, pilot, paper, "Ingest: 1 added")
            bar = screen.query_one("#ingest-bar")
            assert not bar.query_one("#eta").display, "the time left still shown after the ingest"
            outcome = bar.query_one("#outcome", Label)
            assert outcome.display and str(outcome.render()).startswith("done in "), outcome.render()
            # the outcome sits inside the screen's width
            assert outcome.region.right <= NARROW[0] and outcome.region.width >= len(str(outcome.render()))

    run(flow)


def test_export_back_from_another_mode_focuses_the_list_not_the_path(papers_ingested: Path) -> None:
    """`w`, then ctrl+p → Search and `e` back: the path field still had the focus and the next keys (x, J, …)
    went into the file name."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await open_screen(app, pilot, "e", ExportScreen)
            path = screen.query_one("#export-path", Input)
            basket = screen.query_one("#basket", DataTable)
            await until(pilot, lambda: app.focused is basket, "the list focused")
            await pilot.press("w")
            await until(pilot, lambda: app.focused is path, "the path field")
            # a dialog over Export (the palette, closed again) keeps the field: the user was typing in it
            await pilot.press("ctrl+p")
            await until(pilot, lambda: app.screen is not screen, "the palette")
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen, "back on Export")
            await pilot.pause()
            assert app.focused is path
            before = path.value
            await app.run_action("mode('search')")  # what the palette's "Search" runs
            await until(pilot, lambda: app.screen is not screen, "the search screen")
            await pilot.press("escape")
            await pilot.press("e")
            await until(pilot, lambda: app.screen is screen, "back on Export")
            await pilot.pause()
            assert app.focused is basket, app.focused
            await pilot.press("x")
            assert path.value == before

    run(flow)


def test_bench_cancel_is_on_the_bar_only_while_a_sweep_runs() -> None:
    """At 80 columns `c Cancel sweep` took the bar's room while nothing ran (pressing it only said "no sweep is
    running"), and a sweep's bar looked the same as an idle one: now it shows while a sweep runs, then goes."""
    from textual.widgets import SelectionList

    eb3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#dataset", Input).value = str(eb3)
            methods = screen.query_one("#methods", SelectionList)
            methods.deselect_all()
            methods.select("bm25")
            screen.query_one("#sweep-results").focus()
            await pilot.pause()
            line = bar_line(app)
            assert "Cancel" not in line and "r Run sweep" in line, line
            await pilot.press("r")
            await until(pilot, lambda: "c Cancel sweep" in bar_line(app), "cancel on the key bar", timeout=30)
            await until(pilot, lambda: any("sweep done" in n for n in app.notified), "the sweep", timeout=60)
            await until(pilot, lambda: "Cancel" not in bar_line(app), "cancel gone from the key bar")

    run(flow)


def test_an_ingest_with_a_file_not_loaded_is_not_a_plain_done(papers_ingested: Path, tmp_path: Path) -> None:
    """A file that could not be read: the bar says so beside "done", inside 80 columns."""
    bad = tmp_path / "broken.pdf"
    bad.write_bytes(b"%PDF-1.4 this is not a PDF at all")

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await ingested_from_library(app, pilot, bad, "Ingest:")
            outcome = screen.query_one("#ingest-bar").query_one("#outcome", Label)
            text = str(outcome.render())
            assert text.startswith("done in ") and text.endswith(" · 1 not loaded"), text
            assert outcome.region.right <= NARROW[0] and outcome.region.width >= len(text)

    run(flow)


def test_a_text_field_bar_lists_no_key_it_would_type(papers_ingested: Path) -> None:
    """The query bar and Export's path field listed "/ Query": "/" is typed into the field (Textual's own check
    misses "slash"), so the hint was a key that did nothing."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await pilot.pause()
            line = bar_line(app)
            assert "Query" not in line and "Help" in line, line  # f1 still opens the help from the field
            screen = await open_screen(app, pilot, "e", ExportScreen)
            await pilot.press("w")
            await until(pilot, lambda: app.focused is screen.query_one("#export-path", Input), "the path field")
            await pilot.pause()
            line = bar_line(app)
            assert "Query" not in line and "^s Save" in line, line

    run(flow)
