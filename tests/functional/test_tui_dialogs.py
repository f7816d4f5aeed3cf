"""The app's dialogs and Bench notes: a dialog's key bar lists the dialog's keys, the Bench dataset note counts the
file's items, the time left of a run whose setup outlasted its estimate says it is timing rather than "~1 s left",
and a search index rebuilt as the app opened is said once."""

from __future__ import annotations

import shutil
import time
from pathlib import Path

import pytest
from textual.widgets import Input, Static
from tui_pilot import library_screen, messages, open_screen, run, started, until

from evtui.config import load_config
from evtui.tui.messages import SweepProgress
from evtui.tui.screens.bench import BenchScreen
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.widgets.keybar import KeyBar

NARROW = (80, 24)
EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"


def test_confirm_dialog_key_bar_lists_the_dialogs_keys(papers_ingested: Path) -> None:
    """`x` on the Library opened "Remove this paper?" while the bottom line still read "f Find  a Add  x Remove  o Open
    …": keys the dialog swallows. The dialog now has its own key bar: y Yes, n No."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await library_screen(app, pilot)
            await pilot.press("x")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen) and bool(app.screen.query("#yes")),
                        "the remove dialog")
            await pilot.pause()
            dialog = app.screen
            bottom, _ = dialog.get_widget_at(2, NARROW[1] - 1)  # what the bottom row shows, over the Library's
            assert isinstance(bottom, KeyBar) and bottom.screen is dialog, bottom
            line = str(bottom.render())
            assert "y Yes" in line and "n No" in line, line
            assert "Find" not in line and "Remove" not in line, line
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the dialog to close")

    run(flow)


def test_bench_dataset_note_counts_the_items(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The dataset field's note said only "found" for any existing file, an EvidenceBench file or not: it now says
    how many items and papers the file holds, and why a file that is no EvidenceBench file cannot be read. The
    field shows the file's name, not only the first folders of its path (at 80 columns "/work/shared/datasets/")."""
    from evtui.tui.screens.bench import screen as bench_screen

    monkeypatch.setattr(bench_screen, "default_dataset", lambda: EB3)

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            note = screen.query_one("#dataset-note", Static)
            await until(pilot, lambda: str(note.render()) == "3 items · 3 papers", "the dataset's item count")
            field = screen.query_one("#dataset", Input)
            assert len(str(EB3)) > field.content_size.width
            await until(pilot, lambda: "eb3.json" in field.render_line(0).text, "the file's name in the field")
            bad = Path(load_config().home).parent / "not-eb.json"
            bad.write_text("[1, 2]", encoding="utf-8")
            screen.query_one("#dataset", Input).value = str(bad)
            await until(pilot, lambda: "cannot read it" in str(note.render()), "why the file cannot be read")
            assert "not an EvidenceBench JSON file" in str(note.render()) and str(bad) not in str(note.render())
            screen.query_one("#dataset", Input).value = str(EB3)  # read before: said at once
            await pilot.pause()
            assert str(note.render()) == "3 items · 3 papers"

    run(flow)


def test_time_left_says_timing_while_a_run_outlasts_its_estimate(papers_ingested: Path) -> None:
    """A run that embeds its papers first showed "~1 s left" for minutes once its setup outlasted the estimate,
    before any item had been timed; it now says it is timing the first item until an item gives a real pace."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            screen.query_one("#sweep-progress").display = True
            screen.running, screen.sweep_started, screen.sweep_plan = True, time.monotonic() - 60, [5.0]
            screen.post_message(SweepProgress(0, 1, 0, 37, "er-10 · best"))
            text = screen.query_one("#sweep-text", Static)
            await until(pilot, lambda: "0/37" in str(text.render()), "the progress line")
            line = str(text.render())
            assert "timing" in line and "1 s left" not in line, line
            assert "0/37" in line and "run 1/1" in line, line
            # once items are timed, a real figure again
            clock = screen.sweep_clock()
            clock.progress(0, 1, 1, 37, time.monotonic() - 10)
            screen.post_message(SweepProgress(0, 1, 5, 37, "er-10 · best"))
            await until(pilot, lambda: "5/37" in str(text.render()), "the next progress")
            line = str(text.render())
            assert "left" in line and "timing" not in line, line
            screen.running = False

    run(flow)


def test_rebuilt_search_index_is_said_once(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A home whose search index folder was deleted opened after a long "opening the library…" with nothing said,
    where the CLI prints "rebuilt the search index from the database (N sentences, Xs)". The loading screen says
    what it is doing, and the app says what it did once."""
    from evtui.tui.screens.loading import LoadingScreen

    shutil.rmtree(load_config().index_path)
    said: list[str] = []
    say = LoadingScreen.say

    def recording(self: LoadingScreen, text: str) -> None:
        said.append(text)
        say(self, text)

    monkeypatch.setattr(LoadingScreen, "say", recording)

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            assert any("rebuilding it from the database" in t for t in said), said
            await until(pilot, lambda: any("rebuilt the search index" in m for m in messages(app)), "the notice")
            toasts = [m for m in messages(app) if "rebuilt the search index" in m]
            assert len(toasts) == 1 and "sentences" in toasts[0], toasts
            assert app.library is not None and app.library.reindexed is not None
        async with started(NARROW) as (app, pilot):  # the next launch: nothing to say
            await pilot.pause(0.2)
            assert not [m for m in messages(app) if "rebuilt" in m], messages(app)

    run(flow)


def test_reader_shows_a_hit_with_what_follows_it(tmp_path: Path) -> None:
    """Opened at a hit deep in a paper (enter on a result, or on a claim verdict), or moved to one with n, the
    reader showed the hit as the last lines of the screen and nothing after it; the hit is now mid-screen."""
    from textual.widgets import OptionList
    from tui_pilot import reader_at_top_hit, search

    from evtui.library import Library

    filler = " ".join(f"Filler sentence {n} describes the weather station number {n}." for n in range(60))
    more = " ".join(f"Closing remark {n} concerns the maintenance schedule {n}." for n in range(60))
    papers = tmp_path / "long"
    papers.mkdir()
    (papers / "long.md").write_text(
        "# A long trial report\n\n## Results\n\n" + filler + " Aspirin reduced colorectal cancer incidence by a third "
        "in the trial. " + more + "\n", encoding="utf-8")
    with Library(load_config()) as lib:
        lib.ingest([papers])

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "(aspirin, reduce, colorectal cancer)")
            reader = await reader_at_top_hit(app, pilot)
            ol = reader.query_one(OptionList)
            await pilot.pause()

            def rows_above_and_below() -> tuple[int, int]:
                index = ol.highlighted
                assert index is not None
                y, h = ol._index_to_line[index], ol._heights[index]
                top = y - int(ol.scroll_y)
                return top, ol.scrollable_content_region.height - (top + h)

            above, below = rows_above_and_below()
            assert below >= 3 and abs(above - below) <= 2, (above, below)  # mid-screen, what follows in sight

    run(flow)
