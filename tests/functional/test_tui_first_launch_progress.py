"""The first launch's progress screen counts the demo in papers and says about how long is left: by files it read
93% ("file 13/14") while the demo's last file, three quarters of its papers, was still being read."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from textual.app import App
from textual.widgets import ProgressBar, Static

from evtui.demo import demo_papers
from evtui.library import IngestProgress
from evtui.tui.messages import IngestStep
from evtui.tui.screens.loading import LoadingScreen, time_left


@pytest.fixture
def demo(small_demo: Path) -> Path:
    return small_demo


def test_the_demo_is_counted_in_papers(demo: Path) -> None:
    assert demo_papers() == 5 + 3 + 1


def test_progress_in_papers_with_the_time_left(demo: Path) -> None:
    async def flow() -> None:
        app: App[None] = App()
        async with app.run_test(size=(80, 24)) as pilot:
            screen = LoadingScreen()
            await app.push_screen(screen)
            screen.step(IngestStep(IngestProgress(files_done=1, files_total=3, papers_seen=1, current="a.xml")))
            screen.step(IngestStep(IngestProgress(files_done=2, files_total=3, papers_seen=4,
                                                  current=str(demo / "scifact5.jsonl"))))
            await pilot.pause()
            text = str(screen.query_one("#loading-text", Static).render())
            assert "4 of 9 papers" in text and "seconds left" in text and "scifact5.jsonl" in text
            assert "file 2/3" not in text
            assert screen.query_one(ProgressBar).percentage == pytest.approx(4 / 9)
            assert all(len(line) <= 74 for line in text.splitlines())  # each on one line of the 80-column box

    asyncio.run(flow())


def test_time_left_reads_plainly() -> None:
    assert time_left(3) == "a few seconds left"
    assert time_left(42) == "about 40 s left"
    assert time_left(600) == "about 10 min left"
