"""The app's `s` (LLM judge) against a server nobody listens on: the local verdicts stay, the reason is said once."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest
from textual.widgets import DataTable, Select, Static
from tui_pilot import TRIPLET, answer_confirm, local_judge_missing, run, search, started, until

from evtui.tui.screens.search import SearchScreen


@pytest.mark.skipif(local_judge_missing() is not None, reason=str(local_judge_missing()))
def test_a_dead_llm_server_keeps_the_local_verdicts(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import evtui.judge.llm as llm

    monkeypatch.setattr(llm, "CONNECT_BACKOFF", 0.01, raising=False)
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        base = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    monkeypatch.setenv("EVTUI_JUDGE_MODEL", "openai/x")
    monkeypatch.setenv("EVTUI_JUDGE_API_BASE", base)

    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            table = screen.query_one("#results", DataTable)
            await until(pilot, lambda: not screen.judge_pending and len(screen.judgments) >= table.row_count,
                        "the local verdicts")
            before = {sid: (j.judge, j.status, j.score) for sid, j in screen.judgments.items()}
            assert before and all(v[:2] == ("local", "ok") for v in before.values())
            cells = [str(table.get_cell_at((i, 1))) for i in range(table.row_count)]
            screen.query_one("#judge", Select).value = "llm"
            table.focus()
            await pilot.press("s")
            await answer_confirm(app, pilot, what="the cost estimate")
            status = screen.query_one("#status", Static)
            await until(pilot, lambda: "judged" in str(status.render()), "the judge's end", timeout=30)
            assert {sid: (j.judge, j.status, j.score) for sid, j in screen.judgments.items()} == before
            assert [str(table.get_cell_at((i, 1))) for i in range(table.row_count)] == cells  # no ✗ over a verdict
            line = (f"the LLM judge could not reach {base} (connection refused, gave up after 4 attempt(s)): "
                    "no verdicts; the local judge's verdicts are unchanged")
            assert line in str(screen.query_one("#notes", Static).render())
            assert [m for m in app.notified if "could not reach" in m] == [f"Judge: {line}"]  # type: ignore[attr-defined]
            assert str(status.render()).startswith("judged 0 sentence(s)") and "(why: the line below)" in str(status.render())

    run(flow)
