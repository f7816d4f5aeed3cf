"""`evtui select` while the app is open: the app holds the library (DuckDB allows no second writer), so the CLI
searches and judges read-only beside it and hands the rows to the app, which writes them; the app's ✓ marks
and selection follow. With no app taking them, the CLI says so in one line and nothing is added."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from evtui import inbox
from evtui.config import load_config
from evtui.judge.cache import JudgmentCache
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.search import SearchScreen
from tests.tui_pilot import TRIPLET, messages, run, search, started, until

pytestmark = pytest.mark.usefixtures("papers_ingested")


def _select(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "evtui.cli", "select", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "COLUMNS": "200"})


def test_select_beside_the_open_app_lands_in_its_selection() -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and screen.result is not None
            proc = _select(TRIPLET, "--k", "2", "--method", "bm25-coverage", "--json")
            await until(pilot, lambda: proc.poll() is not None, "evtui select", timeout=120)
            out, errs = proc.communicate()
            assert proc.returncode == 0, errs
            doc = json.loads(out)
            assert len(doc["added"]) == 2 and doc["selection"] == doc["added"] and doc["judged"] == 2
            assert app.selected_ids() == doc["added"]  # the app's own basket has them
            await until(pilot, lambda: any("added by evtui select" in m for m in messages(app)), "the toast")
            marks = [str(screen.rank_cell(e, e.sentence.id in app.selected_ids())) for e in screen.rows[:2]]
            assert all(m.startswith("✓") for m in marks)
            # the verdicts the CLI computed are in the cache (an export carries them)
            assert app.library is not None
            assert JudgmentCache(app.library.store.con).count(status="ok") >= 2
            # --clear goes through the app as well
            proc = _select("--clear", "--json")
            await until(pilot, lambda: proc.poll() is not None, "evtui select --clear", timeout=120)
            out, errs = proc.communicate()
            assert proc.returncode == 0, errs
            assert json.loads(out)["selection"] == [] and app.selected_ids() == []

    run(flow)


def test_with_nobody_taking_the_rows_select_says_so_and_adds_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    # an app that never looks (still loading); patched on the class: the timer holds the method it was given
    monkeypatch.setattr(EvtuiApp, "check_inbox", lambda self: None)

    async def flow() -> None:
        async with started() as (app, pilot):
            # the CLI in a process of its own (DuckDB's locks are per process), waiting half a second, not 15
            code = ("import sys; from evtui.cli import main, selection; selection.APP_TAKES = 0.5; "
                    "sys.exit(main(sys.argv[1:]))")
            proc = subprocess.Popen([sys.executable, "-c", code, "select", TRIPLET, "--k", "1", "--method",
                                     "bm25-coverage", "--no-judge"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    text=True, env={**os.environ, "COLUMNS": "300"})
            await until(pilot, lambda: proc.poll() is not None, "evtui select", timeout=120)
            _out, errs = proc.communicate()
            assert proc.returncode == 2, errs  # the CLI's error status
            lines = [x for x in errs.splitlines() if x.startswith("error:")]
            assert len(lines) == 1 and "did not take the selection" in lines[0] and "nothing was added" in lines[0]
            assert app.selected_ids() == [] and not inbox.pending(load_config().home)

    run(flow)
