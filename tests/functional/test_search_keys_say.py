"""Search keys that did nothing visible now say what happened: `u` on a machine without a browser shows the
paper's URL (and copies it) instead of "Opening …" and nothing; `s` when every row has a local verdict says how
to ask an LLM instead of only "every result in view already has a verdict"."""

from __future__ import annotations

from pathlib import Path

import pytest
from tui_pilot import messages, run, search, started, until

from evtui.config import load_config
from evtui.library import Library

CDR = Path(__file__).parents[1] / "fixtures" / "core" / "cdr3.pubtator.txt"


@pytest.fixture
def pubmed_library() -> None:
    with Library(load_config()) as lib:
        lib.ingest([CDR])


def test_u_without_a_browser_shows_and_copies_the_url(pubmed_library: None, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr("sys.platform", "linux")
    opened: list[str] = []
    copied: list[str] = []

    async def flow() -> None:
        async with started() as (app, pilot):
            monkeypatch.setattr(app, "open_url", lambda url, **_kw: opened.append(url))
            monkeypatch.setattr(app, "copy_to_clipboard", copied.append)
            await search(app, pilot, "lithium toxicity newborn", method="bm25")
            app.screen.query_one("#results").focus()
            await pilot.press("u")
            await until(pilot, lambda: any("no web browser here" in m for m in messages(app)), "the URL")
            said = next(m for m in messages(app) if "no web browser here" in m)
            assert "https://pubmed.ncbi.nlm.nih.gov/" in said and not opened
            assert copied and copied[0].startswith("https://pubmed.ncbi.nlm.nih.gov/")

    run(flow)


def test_s_with_every_local_verdict_says_how_to_ask_an_llm(pubmed_library: None) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = app.screen
            await search(app, pilot, "lithium toxicity newborn", method="bm25")
            screen.query_one("#results").focus()
            await pilot.press("s")
            await until(pilot, lambda: not screen.judge_pending and all(  # type: ignore[attr-defined]
                screen.judgments.get(e.sentence.id) is not None  # type: ignore[attr-defined]
                for e in screen.visible_evidence()), "the local verdicts", timeout=120)  # type: ignore[attr-defined]
            await pilot.press("s")
            await until(pilot, lambda: any("already has a local verdict" in m for m in messages(app)), "the hint")
            said = next(m for m in messages(app) if "already has a local verdict" in m)
            assert "to ask an LLM" in said and "judge: llm" in said and "judge_model" in said

    run(flow)
