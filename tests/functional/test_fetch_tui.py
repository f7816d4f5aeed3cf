"""The Europe PMC dialog in the app, against recorded answers on 127.0.0.1 (tests/europepmc_server.py): from the
Library screen, IDs are fetched at once and the papers are searchable as they land; a search lists its hits and
fetches them on ctrl+f; escape cancels a run (what landed stays); a search with few hits offers a look further."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Static
from tui_pilot import library_screen, messages, run, search, started, until

sys.path.insert(0, str(Path(__file__).parent.parent))
from europepmc_server import OA_PMCID, EuropePMCServer, europepmc_server  # noqa: E402

from evtui.tui.screens.fetch import FetchScreen  # noqa: E402
from evtui.tui.screens.library import LibraryScreen  # noqa: E402


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[EuropePMCServer]:
    with europepmc_server() as s:
        monkeypatch.setenv("EVTUI_EUROPEPMC_URL", s.url)
        yield s


def _status(screen: FetchScreen) -> str:
    return str(screen.query_one("#fetch-status", Static).render())


async def _dialog(app: object, pilot: object) -> FetchScreen:
    screen = await library_screen(app, pilot)  # type: ignore[arg-type]
    await pilot.press("g")  # type: ignore[attr-defined]
    await until(pilot, lambda: isinstance(app.screen, FetchScreen), "the Europe PMC dialog")  # type: ignore[attr-defined]
    dialog = app.screen  # type: ignore[attr-defined]
    assert isinstance(dialog, FetchScreen) and isinstance(screen, LibraryScreen)
    return dialog


def test_ids_are_fetched_and_searchable_as_they_land(papers_ingested: Path, srv: EuropePMCServer) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            dialog = await _dialog(app, pilot)
            dialog.query_one("#fetch-query", Input).value = f"{OA_PMCID} PMID:40468710"
            await pilot.press("enter")
            await until(pilot, lambda: not dialog.running and "2 paper(s) added" in _status(dialog), "the fetch")
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, LibraryScreen), "the Library screen")
            assert {OA_PMCID, "PMID:40468710"} <= {p.id for p in app.screen.papers}  # type: ignore[attr-defined]
            await pilot.press("escape")  # back to Search: the fetched full text is searchable
            await until(pilot, lambda: app.screen.__class__.__name__ == "SearchScreen", "the Search screen")
            await search(app, pilot, "PD-L1 immune checkpoint tumor immune evasion")
            assert app.result is not None and any(e.sentence.paper_id == OA_PMCID for e in app.result.evidence)

    run(flow)


def test_a_search_lists_hits_then_fetches_them_and_escape_cancels(papers_ingested: Path,
                                                                  srv: EuropePMCServer) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            dialog = await _dialog(app, pilot)
            dialog.query_one("#fetch-query", Input).value = "cancer"
            await pilot.press("enter")
            table = dialog.query_one("#fetch-hits", DataTable)
            await until(pilot, lambda: table.row_count == 20, "the hits")
            assert "20 of 5,059,039 hit(s)" in _status(dialog)
            srv.delay = 0.3  # a slow network: the run is cancelled after its first papers
            await pilot.press("ctrl+f")
            await until(pilot, lambda: dialog.landed > 0, "the first papers", timeout=30)
            await pilot.press("escape")
            await until(pilot, lambda: not dialog.running, "the cancel", timeout=30)
            assert "cancelled" in _status(dialog) and 0 < dialog.landed < 20
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, LibraryScreen), "the Library screen")

    run(flow)


def test_offline_is_said_in_the_dialog(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVTUI_EUROPEPMC_URL", "http://127.0.0.1:9/europepmc/webservices/rest/")

    async def flow() -> None:
        async with started() as (app, pilot):
            dialog = await _dialog(app, pilot)
            dialog.query_one("#fetch-query", Input).value = OA_PMCID
            await pilot.press("enter")
            await until(pilot, lambda: "cannot reach Europe PMC" in _status(dialog), "the failure")
            assert not dialog.running

    run(flow)


def test_a_search_with_few_hits_offers_europe_pmc(papers_ingested: Path, srv: EuropePMCServer) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, "statins lower LDL cholesterol")
            await until(pilot, lambda: any("looks further in Europe PMC" in m for m in messages(app)), "the offer")
            await pilot.press("ctrl+g")
            await until(pilot, lambda: isinstance(app.screen, FetchScreen), "the Europe PMC dialog")
            assert app.screen.query_one("#fetch-query", Input).value == "statins lower LDL cholesterol"

    run(flow)
