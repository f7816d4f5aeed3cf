"""Selection items are (sentence, question). The Export screen's list shows which question each row is under
(grouped as the export is, the question above its first row, `#` counting within it) and J/K move an item past its
neighbour under the same question; the reader marks a sentence selected for another question with a dim ◦, not ✓,
also when opened from the Library without a query, where space selects for the reading's own question."""

from __future__ import annotations

import json
from typing import Any

import pytest
from textual.coordinate import Coordinate
from tui_pilot import TRIPLET, open_screen, plain_text, run, search, started, until

from evtui.cli import main
from evtui.tui.screens.export import ExportScreen
from evtui.tui.screens.reader import ReaderScreen

pytestmark = pytest.mark.usefixtures("papers_ingested")

CLAIM = "aspirin reduces colorectal cancer"
ACE = "ACE inhibitors cause cough"


def keys(app: Any) -> list[tuple[str, str]]:
    """The app's selection items, (sentence id, query), in basket order."""
    return [(r[0], r[1]) for r in app.basket.con.execute(
        "SELECT sentence_id, query FROM selections ORDER BY position").fetchall()]


def select(capsys: pytest.CaptureFixture[str], query: str, k: int) -> list[str]:
    assert main(["select", query, "--k", str(k), "--method", "bm25-coverage", "--no-judge", "--json"]) == 0
    return list(json.loads(capsys.readouterr().out)["added"])


def test_export_list_groups_rows_by_question_and_moves_within_one(capsys: pytest.CaptureFixture[str]) -> None:
    (a1,) = select(capsys, CLAIM, 1)
    (c1,) = select(capsys, ACE, 1)
    (a2,) = select(capsys, CLAIM, 2)  # the claim's second hit, selected after the ACE one: stored between them
    assert len({a1, c1, a2}) == 3

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            assert keys(app) == [(a1, CLAIM), (c1, ACE), (a2, CLAIM)]
            export = await open_screen(app, pilot, "e", ExportScreen)
            table: Any = export.query_one("#basket")
            await until(pilot, lambda: table.row_count == 3, "the three items listed")

            def rows() -> list[tuple[str, str]]:
                return [(it.sentence_id, it.query) for it in export.items]

            def cell(row: int, col: int) -> str:
                return str(table.get_cell_at(Coordinate(row, col)))

            # as the export lists them: the claim's two, then the ACE one, each group headed by its question
            assert rows() == [(a1, CLAIM), (a2, CLAIM), (c1, ACE)]
            assert cell(0, 3).startswith(f"Q1 {CLAIM}\n") and cell(2, 3).startswith(f"Q2 {ACE}\n")
            assert not cell(1, 3).startswith("Q")  # (column 1: the verdict mark)
            assert [cell(r, 0).strip() for r in range(3)] == ["1", "2", "1"]  # as the preview's ### n.
            assert "2 questions" in str(export.query_one("#basket-title").render())

            assert table.cursor_row == 0
            await pilot.press("J")  # the claim's first item past its second: the ACE item stays where it is
            await until(pilot, lambda: rows()[0] == (a2, CLAIM), "the item moved")
            assert rows() == [(a2, CLAIM), (a1, CLAIM), (c1, ACE)] and table.cursor_row == 1
            assert keys(app) == [(a2, CLAIM), (c1, ACE), (a1, CLAIM)]
            await pilot.press("J")  # last under its question: nothing moves under another question
            await pilot.pause(0.2)
            assert rows() == [(a2, CLAIM), (a1, CLAIM), (c1, ACE)]
            assert export.current() is not None and export.current().query == CLAIM
            await pilot.press("j", "x")  # the ACE item under the cursor, only it
            await until(pilot, lambda: len(keys(app)) == 2, "the item removed")
            assert keys(app) == [(a2, CLAIM), (a1, CLAIM)]
            await until(pilot, lambda: table.row_count == 2, "the list redrawn")
            # one question left: no heading, the title without a question count
            assert not cell(0, 2).startswith("Q1") and "questions" not in str(
                export.query_one("#basket-title").render())

    run(flow)


def mark(reader: ReaderScreen, sid: str) -> str:
    """The reader's mark before the sentence: ✓, ◦ or a space."""
    return plain_text(reader.prompt(reader.sentences[sid]))[0]


def test_reader_marks_a_sentence_selected_for_another_question(capsys: pytest.CaptureFixture[str]) -> None:
    (sid,) = select(capsys, CLAIM, 1)

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            assert app.result is not None
            paper = sid.rsplit(":", 1)[0]
            app.push_screen(ReaderScreen(paper, app.result.query, app.result.method, app.result.evidence,
                                         focus=sid))
            await until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
            reader = app.screen
            assert isinstance(reader, ReaderScreen)
            await until(pilot, lambda: reader.paper is not None and reader.current_id() == sid, "the sentence")
            assert mark(reader, sid) == "◦"  # selected, for the claim: not this question's ✓
            assert "for another question" in str(reader.query_one("#reader-status").render())
            await pilot.press("space")
            await until(pilot, lambda: (sid, TRIPLET) in keys(app), "the triplet's item")
            assert mark(reader, sid) == "✓" and (sid, CLAIM) in keys(app)
            await pilot.press("space")
            await until(pilot, lambda: (sid, TRIPLET) not in keys(app), "the triplet's item gone")
            assert mark(reader, sid) == "◦" and keys(app) == [(sid, CLAIM)]

    run(flow)


def test_reader_without_a_query_marks_and_toggles_its_own_question(capsys: pytest.CaptureFixture[str]) -> None:
    (sid,) = select(capsys, CLAIM, 1)
    paper = sid.rsplit(":", 1)[0]
    own = f"read in {paper}"

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            app.push_screen(ReaderScreen(paper))  # as the Library's `o` opens it
            await until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
            reader = app.screen
            assert isinstance(reader, ReaderScreen)
            await until(pilot, lambda: reader.paper is not None, "the paper")
            reader.goto(sid)
            await until(pilot, lambda: reader.current_id() == sid, "the sentence")
            # was ✓: space then selected it a second time (for the reading) and showed no change
            assert mark(reader, sid) == "◦"
            await pilot.press("space")
            await until(pilot, lambda: (sid, own) in keys(app), "the reading's item")
            assert mark(reader, sid) == "✓" and keys(app) == [(sid, CLAIM), (sid, own)]
            await pilot.press("space")  # off for the reading: still selected for the claim, and marked so
            await until(pilot, lambda: (sid, own) not in keys(app), "the reading's item gone")
            assert mark(reader, sid) == "◦" and keys(app) == [(sid, CLAIM)]

    run(flow)
