"""The Library and Export screens and three nits: the claim verdicts' probabilities stay one group, the
reader's help lists only keys that do something, each under an id, and an empty Library puts the cursor where
papers are added."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console
from textual.widgets import Input
from tui_pilot import library_screen, reader_at_top_hit, run, search, started, until

from evtui.judge.claims import PaperVerdict, Rationale
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.modals import HelpScreen
from evtui.tui.screens.verdicts import VerdictsScreen

NARROW = (80, 24)


def test_claim_verdict_probabilities_never_break_across_lines() -> None:
    """"(P support 0.68 · refute 0.23)" was wrapped like the sentence before it, its halves on two lines."""
    text = ("Regular aspirin use was associated with a lower risk of colorectal cancer among the participants of "
            "two large cohorts followed for decades.")
    paper = PaperVerdict("scifact:1", "A title", "SUPPORT", 0.68,
                         [Rationale("scifact:1:3", 3, text, "supports", 0.68, 0.23)])
    split = []
    for width in range(50, 141):
        console = Console(width=width, file=io.StringIO(), record=True)
        console.print(VerdictsScreen.paper_prompt(paper))
        shown = console.export_text()
        if not any("(P support 0.68 · refute 0.23)" in line for line in shown.splitlines()):
            split.append(width)
        assert " ".join(text.split()) in " ".join(shown.split())  # the sentence itself whole, in order
    assert not split, f"the group was split at widths {split}"


def test_reader_help_lists_only_keys_that_work_each_with_an_id(papers_ingested: Path) -> None:
    """`?` in the reader listed the list's Scroll Left/Right (nothing to scroll sideways), its enter (does nothing)
    and "↑ k" with no id although k is `reader.up`: every row now has an id [keymap] takes."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "(aspirin, reduce, colorectal cancer)")
            await reader_at_top_hit(app, pilot)
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            rows = app.screen.rows
            descs = [d for _k, d, _b in rows]
            assert not {"Scroll Left", "Scroll Right", "Page Left", "Page Right"} & set(descs), rows
            assert not [keys for keys, _d, _b in rows if "⏎" in keys.split()], rows  # enter selects nothing here
            assert all(bid for _k, _d, bid in rows), [r for r in rows if not r[2]]
            assert set(EvtuiApp.binding_ids()) >= {bid for _k, _d, bid in rows}
            by_id = {bid: keys.split() for keys, _d, bid in rows}
            assert by_id["reader.up"] == ["k", "↑"] and by_id["reader.down"] == ["j", "↓"]
            assert by_id["reader.first"] == ["home"] and by_id["reader.page_down"] == ["pgdn"]
            assert "^q" in by_id["app.quit"]

    run(flow)


def test_reader_home_binding_can_be_rebound(papers_ingested: Path, tmp_path: Path) -> None:
    """The reader's home/end/page keys have ids of their own: a [keymap] entry moves them, and the list's own key
    still works beside it."""
    import os

    Path(os.environ["EVTUI_CONFIG"]).write_text('[keymap]\n"reader.last" = "G"\n', encoding="utf-8")

    async def flow() -> None:
        from evtui.config import load_config

        async with started(NARROW, app=EvtuiApp(load_config())) as (app, pilot):
            await search(app, pilot, "(aspirin, reduce, colorectal cancer)")
            reader = await reader_at_top_hit(app, pilot)
            from textual.widgets import OptionList

            ol = reader.query_one(OptionList)
            await pilot.press("G")
            await until(pilot, lambda: ol.highlighted == ol.option_count - 1, "the last sentence")
            await pilot.press("home")
            await until(pilot, lambda: ol.highlighted is not None and ol.highlighted < ol.option_count - 1,
                        "the list's own home")

    run(flow)


def test_an_empty_library_focuses_the_add_field() -> None:
    """A data home with no papers: `l` put the cursor on the empty table, where no key does anything useful; a
    path typed at once now lands in the add field."""

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await library_screen(app, pilot)
            add = screen.query_one("#add-path", Input)
            await until(pilot, lambda: app.focused is add, "focus on the add field")
            await pilot.press("/", "t", "m", "p")
            assert add.value == "/tmp"

    run(flow)


def test_a_library_with_papers_still_focuses_the_list(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await library_screen(app, pilot)
            await until(pilot, lambda: app.focused is screen.query_one("#papers"), "focus on the papers")

    run(flow)


def test_enter_on_a_library_row_opens_the_paper(papers_ingested: Path) -> None:
    """Enter on a paper of the Library list did nothing (only `o` opened it); a researcher's first key."""
    from evtui.tui.screens.reader import ReaderScreen

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            screen = await library_screen(app, pilot)
            papers = screen.query_one("#papers")
            await until(pilot, lambda: app.focused is papers and screen.selected_paper() is not None, "the papers")
            chosen = screen.selected_paper()
            assert chosen is not None
            await pilot.press("enter")
            await until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
            assert app.screen.paper_id == chosen.id
            await pilot.press("escape")
            await until(pilot, lambda: app.screen is screen, "back on the Library")
            await pilot.press("question_mark")
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            rows = {bid: keys.split() for keys, _d, bid in app.screen.rows}
            assert rows["library.open"] == ["o", "⏎"], app.screen.rows

    run(flow)


def test_escape_in_the_export_path_leaves_the_field_not_the_screen(papers_ingested: Path, tmp_path: Path) -> None:
    """Esc while editing the export path went back to Search with the field still focused: the keys pressed on
    coming back (C, y, ctrl+s) were typed into the file name and saved as "…mdCy"."""
    from textual.widgets import DataTable

    from evtui.tui.screens.export import ExportScreen

    async def flow() -> None:
        async with started(NARROW) as (app, pilot):
            await search(app, pilot, "(aspirin, reduce, colorectal cancer)")
            from tui_pilot import focus_results

            await focus_results(app, pilot)
            await pilot.press("space", "e")
            await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
            screen = app.screen
            basket = screen.query_one("#basket", DataTable)
            await until(pilot, lambda: basket.row_count == 1 and app.focused is basket, "the basket")
            path = screen.query_one("#export-path", Input)
            await pilot.press("w")
            await until(pilot, lambda: app.focused is path, "the path field")
            before = path.value
            await pilot.press("escape")
            await until(pilot, lambda: app.focused is basket, "out of the path field")
            assert app.screen is screen and path.value == before
            await pilot.press("escape")  # from the list, esc is the app's again: back to Search
            await until(pilot, lambda: not isinstance(app.screen, ExportScreen), "back to search")

    run(flow)
