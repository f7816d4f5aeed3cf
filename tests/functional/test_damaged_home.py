"""A user's worst days: a library cut short, killed writers, two apps on one home."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config


@pytest.mark.parametrize("keep", ["half", "100-bytes"])
def test_a_database_cut_short_is_one_damage_line(papers_ingested: Path, keep: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """A library.duckdb truncated (a copy that stopped, a full disk) used to open, print "could not finish indexing 0
    paper(s)" and then fail with a raw "Could not read enough bytes"; it is one line naming the damage and the way
    out, and the file is left as it was (nothing guessed over it)."""
    db = load_config().db_path
    size = db.stat().st_size
    cut = size // 2 if keep == "half" else 100
    os.truncate(db, cut)
    # a fresh process: this one's DuckDB may still cache the file's blocks
    proc = subprocess.run([sys.executable, "-m", "evtui.cli", "search", "aspirin", "--method", "bm25"],
                          capture_output=True, text=True, timeout=120)
    err = " ".join(proc.stderr.split())
    assert proc.returncode == 2, err
    assert "is damaged" in err and "Restore library.duckdb from a backup" in err, err
    assert "could not finish indexing" not in err and "Traceback" not in err, err
    assert err.count("error:") == 1, err
    assert db.stat().st_size == cut


def test_an_intact_library_still_opens(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The length check must not call a healthy file (nor one written since) damaged."""
    assert main(["search", "aspirin", "--method", "bm25", "-k", "1"]) == 0
    assert main(["stats", "--check"]) == 0
    assert "damaged" not in capsys.readouterr().err


def test_a_multi_line_paste_into_the_query_bar_keeps_every_line(papers_ingested: Path) -> None:
    """A claim copied from a PDF wraps: Textual's Input kept only the first line of a paste, so the search ran for
    "Aspirin use reduced" and the rest of the claim was silently lost."""
    from textual import events
    from textual.widgets import Input
    from tui_pilot import run, started, until

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            query = app.screen.query_one("#query", Input)
            query.post_message(events.Paste("Aspirin use reduced\r\n  the incidence of\n\ncolorectal cancer"))
            await until(pilot, lambda: query.value != "", "the paste")
            assert query.value == "Aspirin use reduced the incidence of colorectal cancer"
            await pilot.press("enter")
            await until(pilot, lambda: app.result is not None, "the search")
            assert app.result is not None
            assert "colorectal cancer" in {a.label for a in app.result.query.aspects}

    run(flow)


def test_selecting_on_a_full_disk_says_the_disk_is_full(papers_ingested: Path) -> None:
    """space on a full disk notified "cannot change the selection: TransactionContext Error: Failed to commit: …";
    it says what happened in the CLI's words. The full disk is simulated (a real DuckDB error raised by the basket's
    write); nothing else is stood in for."""
    import duckdb
    from tui_pilot import focus_results, messages, notified, run, search, started

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, "aspirin colorectal cancer")
            basket = app.basket
            assert basket is not None

            def full(*_args: object, **_kwargs: object) -> bool:
                raise duckdb.TransactionException('TransactionContext Error: Failed to commit: Could not write file '
                                                  '"/h/library.duckdb.wal": No space left on device')

            basket.toggle = full  # type: ignore[method-assign]
            await focus_results(app, pilot)
            await pilot.press("space")
            await notified(pilot, "cannot change the selection")
            text = " ".join(m for m in messages(app) if "cannot change the selection" in m)
            assert "the disk is full" in text and "TransactionContext" not in text.split("(")[0], text

    run(flow)
