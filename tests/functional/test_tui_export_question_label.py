"""The Export screen with items for 2+ questions: at 80x24 the list shows a few rows, so a long group's "Qn …" heading
row scrolls away; a label over the list follows the cursor ("Q2 of 3 · <question>", cut to the width), and with one
question it takes no line (that layout stays as it was)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from tui_pilot import open_screen, plain_text, run, started, until

from evtui.cli import main
from evtui.tui.screens.export import ExportScreen

pytestmark = pytest.mark.usefixtures("papers_ingested")

CLAIM = "aspirin reduces colorectal cancer"
ACE = "ACE inhibitors cause cough"
LONG = ("does daily low dose aspirin taken for many years by older adults with several risk factors lower the risk "
        "of colorectal adenoma recurrence")


def select(capsys: pytest.CaptureFixture[str], query: str, k: int) -> list[str]:
    assert main(["select", query, "--k", str(k), "--method", "bm25-coverage", "--no-judge", "--json"]) == 0
    return list(json.loads(capsys.readouterr().out)["added"])


def label(export: ExportScreen) -> str:
    return plain_text(export.query_one("#basket-question").render()).strip()


def test_label_names_the_question_of_the_row_under_the_cursor(capsys: pytest.CaptureFixture[str]) -> None:
    claim = select(capsys, CLAIM, 8)
    ace = select(capsys, ACE, 2)
    long = select(capsys, LONG, 2)
    assert len(claim) >= 6 and ace and long

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            export = await open_screen(app, pilot, "e", ExportScreen)
            table: Any = export.query_one("#basket")
            n = len(claim) + len(ace) + len(long)
            await until(pilot, lambda: table.row_count == n, "the items listed")
            await pilot.pause(0.2)
            q = export.query_one("#basket-question")
            assert q.display and label(export) == f"Q1 of 3 · {CLAIM}"
            # down past the claim's group: the list scrolled, its Q1 heading row out of sight
            await pilot.press(*["j"] * (len(claim) + 1))
            await until(pilot, lambda: table.cursor_row == len(claim) + 1, "the cursor in the ACE group")
            await pilot.pause(0.1)
            assert table.scroll_offset.y > 0
            assert label(export) == f"Q2 of 3 · {ACE}"
            await pilot.press("end")
            await until(pilot, lambda: table.cursor_row == n - 1, "the last row")
            await pilot.pause(0.1)
            text = label(export)
            # the long question cut to the pane, on one line, within 80 columns
            assert text.startswith("Q3 of 3 · does daily low dose aspirin") and text.endswith("…")
            assert q.region.right <= 80 and q.region.height == 1 and len(text) <= q.region.width
            # the list's title line says the count, as before
            assert "3 questions" in plain_text(export.query_one("#basket-title").render())
            await pilot.press("home")
            await until(pilot, lambda: label(export) == f"Q1 of 3 · {CLAIM}", "back on the first question")

    run(flow)


def test_one_question_keeps_the_label_out_of_the_layout(capsys: pytest.CaptureFixture[str]) -> None:
    select(capsys, CLAIM, 3)

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            export = await open_screen(app, pilot, "e", ExportScreen)
            table: Any = export.query_one("#basket")
            await until(pilot, lambda: table.row_count == 3, "the items listed")
            await pilot.pause(0.2)
            assert not export.query_one("#basket-question").display
            # the list right under the title line, as before the label existed
            assert table.region.y == export.query_one("#basket-title").region.bottom

    run(flow)
