"""The Search screen's aspect chips, from the keyboard: after an edit, the key the status line names searches."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from tui_pilot import TRIPLET, run, search, started, until

from evtui.tui.widgets import AspectBar


def test_a_key_in_the_chips_searches_with_the_edited_aspects(papers_ingested: Path) -> None:
    """a, then d (drop an aspect): the status said "enter searches with them", but enter in the chips opens the
    aspect dialog again, and nothing in the chips searched. `s` there searches with the aspects as edited, and the
    status and the key bar say so."""

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = app.screen
            chips = screen.query_one(AspectBar)
            await pilot.press("a")
            await until(pilot, lambda: chips.has_focus, "the chips")
            await pilot.press("right", "right", "d")  # drop the tail
            await until(pilot, lambda: chips.edited and len(chips.aspects) == 2, "the aspect dropped")
            status = screen.query_one("#status", Static)
            await until(pilot, lambda: "s searches with them" in str(status.render()), "the status naming s")
            app.result = None
            await pilot.press("s")
            await until(pilot, lambda: app.result is not None, "results for the edited aspects")
            assert app.result is not None
            assert "aspects edited by hand" in app.result.query.notes
            assert [a.role for a in app.result.query.aspects] == ["head", "relation"]

    run(flow)


def test_picking_three_results_shows_one_count_not_three_toasts(papers_ingested: Path) -> None:
    """space, j, space, j, space at 80x24: three "n sentence(s) selected" toasts stacked over the right half of the
    results (12 of their rows) while the user read the next sentence; the latest count replaces the earlier."""
    from tui_pilot import messages

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            await pilot.press("space", "j", "space", "j", "space")
            await until(pilot, lambda: any(m.startswith("3 sentence(s) selected") for m in messages(app)),
                        "the third pick's count")
            await pilot.pause(0.1)
            counts = [m for m in messages(app) if "selected · e to export" in m]
            assert counts == [counts[-1]] and counts[0].startswith("3 sentence(s) selected"), counts
            assert len(app.selected_ids()) == 3

    run(flow)
