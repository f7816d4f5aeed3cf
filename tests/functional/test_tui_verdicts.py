"""The claim-level verdicts screen (`c` on Search): the query verified paper by paper, the same summary as
`evtui verify` gives for it (one default number of papers), and back to the results with Esc."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import OptionList, Static
from tui_pilot import run, search, started, until

from evtui.cli import main
from evtui.judge.claims import CLAIM_PAPERS
from evtui.tui.screens.search import SearchScreen
from evtui.tui.screens.verdicts import VerdictsScreen

CLAIM = "Aspirin reduces the incidence of colorectal cancer"


def test_c_verifies_the_query_as_the_cli_does(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", CLAIM, "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    counts = cli["verdict"]
    assert len(cli["papers"]) <= CLAIM_PAPERS

    async def flow() -> None:
        async with started((100, 30)) as (app, pilot):
            await search(app, pilot, CLAIM, method="best")
            app.screen.query_one("#results").focus()
            await pilot.press("c")
            await until(pilot, lambda: isinstance(app.screen, VerdictsScreen), "the verdicts screen")
            screen = app.screen
            assert isinstance(screen, VerdictsScreen) and screen.papers == CLAIM_PAPERS
            await until(pilot, lambda: screen.verdict is not None, "the verdicts", timeout=60)
            v = screen.verdict
            assert v is not None
            assert [p.paper_id for p in v.papers] == [p["paper_id"] for p in cli["papers"]]
            assert [p.label for p in v.papers] == [p["label"] for p in cli["papers"]]
            head = str(screen.query_one("#verdicts-head", Static).render())
            assert v.summary_line() in head
            assert sum(p.label == "SUPPORT" for p in v.papers) == counts["supports"]
            assert screen.query_one(OptionList).option_count == len(v.papers)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "back on Search")

    run(flow)
