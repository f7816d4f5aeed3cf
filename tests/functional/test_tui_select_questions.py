"""The app with a sentence selected for one question, searching another: its row is not ✓ (a dim ◦: selected for
another question only), space selects it for this question too and space again deselects it for this one only; the
Export screen's x removes the (sentence, question) item under the cursor, not the sentence's every item."""

from __future__ import annotations

import json
from typing import Any

import pytest
from textual.coordinate import Coordinate
from tui_pilot import TRIPLET, focus_results, open_screen, run, search, started, until

from evtui.cli import main
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.search import SearchScreen

pytestmark = pytest.mark.usefixtures("papers_ingested")

CLAIM = "aspirin reduces colorectal cancer"


def keys(app: Any) -> list[tuple[str, str]]:
    """The app's selection items, (sentence id, query), in basket order."""
    return [(r[0], r[1]) for r in app.basket.con.execute(
        "SELECT sentence_id, query FROM selections ORDER BY position").fetchall()]


def test_space_under_a_second_question_keeps_the_first(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["select", CLAIM, "--k", "1", "--method", "bm25-coverage", "--no-judge", "--json"]) == 0
    (sid,) = json.loads(capsys.readouterr().out)["added"]

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and app.result is not None and app.basket is not None
            rows = [e.sentence.id for e in screen.rows]
            assert sid in rows, "the claim's top hit is not among the triplet's results: the test proves nothing"
            i = rows.index(sid)
            table = screen.query_one("#results")

            def mark() -> str:
                return str(table.get_cell_at(Coordinate(i, 0)))[0]  # type: ignore[attr-defined]

            assert mark() == "◦"  # selected, but for the other question
            await focus_results(app, pilot)
            for _ in range(i):
                await pilot.press("j")
            await until(pilot, lambda: table.cursor_row == i, "the cursor on the row")  # type: ignore[attr-defined]
            await pilot.press("space")
            await until(pilot, lambda: (sid, TRIPLET) in keys(app), "the triplet's item")
            assert (sid, CLAIM) in keys(app) and mark() == "✓"
            await pilot.press("space")  # off for the triplet: the claim keeps it
            await until(pilot, lambda: (sid, TRIPLET) not in keys(app), "the triplet's item gone")
            assert keys(app) == [(sid, CLAIM)] and mark() == "◦"
            await pilot.press("space")  # on again, then x in the Export screen on the triplet's item only
            await until(pilot, lambda: len(keys(app)) == 2, "two items")
            export = await open_screen(app, pilot, "e", ExportScreen)
            basket = export.query_one("#basket")
            await until(pilot, lambda: basket.row_count == 2, "both items listed")  # type: ignore[attr-defined]
            await pilot.press("j")
            assert export.current() is not None and export.current().query == TRIPLET
            await pilot.press("x")
            await until(pilot, lambda: len(keys(app)) == 1, "the item removed")
            assert keys(app) == [(sid, CLAIM)]

    run(flow)
