"""q during the first launch's demo load quits at the load's next step (it waited for the whole load), and the next
launch finishes the load."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.demo import ensure_demo
from evtui.library import Library
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.loading import LoadingScreen

PAPERS = 400
FOLDER = 200  # 60,000 sentences: seconds of ingest, so q arrives long before its end


@pytest.fixture
def big_demo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    src = tmp_path / "demo"
    src.mkdir()
    for i in range(PAPERS):
        (src / f"note{i:04d}.txt").write_text(
            f"Finding {i}\n\nAspirin dose {i} reduced the incidence of adenoma {i} in the cohort. "
            f"The effect of dose {i} was stable over follow-up.\n", encoding="utf-8")
    monkeypatch.setenv("EVTUI_DEMO_DIR", str(src))
    monkeypatch.setenv("EVTUI_DEMO", "true")
    return src


def test_q_while_the_demo_loads_quits_and_the_next_launch_finishes(big_demo: Path) -> None:
    async def flow() -> None:
        app = EvtuiApp(load_config())
        async with app.run_test(size=(80, 24)) as pilot:
            for _ in range(400):
                if isinstance(app.screen, LoadingScreen) and "papers" in str(app.screen.query_one("#loading-text")
                                                                               .render()):
                    break
                await pilot.pause(0.01)
            await pilot.press("q")
            await pilot.pause(0.2)
        assert app.library is None  # it never opened: the load stopped at its next step

    asyncio.run(flow())
    with Library(load_config()) as lib:
        assert lib.store.get_meta("demo_loaded") is None and lib.store.get_meta("demo_loading")
        assert lib.store.stats()["papers"] < PAPERS  # stopped early (before: the whole demo, then the exit)
        report = ensure_demo(lib)  # the next launch
        assert report is not None and lib.store.stats()["papers"] == PAPERS


def test_q_during_an_ingest_from_the_library_screen_quits_at_its_next_step(papers_ingested: Path,
                                                                           tmp_path: Path) -> None:
    from tui_pilot import library_screen, started, until

    folder = tmp_path / "many"
    folder.mkdir()
    for i in range(FOLDER):
        body = " ".join(f"Statin dose {i} lowered LDL cholesterol by {j}% in group {j}." for j in range(300))
        (folder / f"n{i:04d}.txt").write_text(f"Note {i}\n\n{body}\n", encoding="utf-8")
    with Library(load_config()) as lib:
        before = lib.store.stats()["papers"]

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            screen.ingesting = True
            screen.ingest_worker(folder)  # as `a` + enter starts it
            await until(pilot, lambda: app.library is not None and "n00" in str(
                screen.query_one("#ingest-text").render()), "the ingest's first step", timeout=60)
            app.exit()  # as q does (Pilot's own key press would wait for the whole ingest: the app is never idle)

    # In a thread with a deadline: closing the library under db_lock while the ingest waited for it hung for good.
    runner = threading.Thread(target=asyncio.run, args=(flow(),), daemon=True)
    runner.start()
    runner.join(120)
    assert not runner.is_alive(), "quitting during an ingest hung"
    with Library(load_config()) as lib:
        assert lib.store.stats()["papers"] < before + FOLDER  # stopped early (it used to read the whole folder)
