"""Embedding the whole library from the Library screen: `m` says what it will take and asks first when that is long,
and a cancel stops between two batches (a fraction of a second), not after a whole chunk (over a minute)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tui_pilot import library_screen, run, started, until

from evtui import paper_vectors
from evtui.embed import DIM, Embedder, EmbedStopped
from evtui.tui.screens.modals import ConfirmScreen


class _SlowModel:
    """A stand-in for the ONNX model: each batch takes `pause` seconds."""

    def __init__(self, pause: float) -> None:
        self.pause, self.batches = pause, 0

    def embed(self, texts: list[str], batch_size: int) -> list[np.ndarray]:
        self.batches += 1
        time.sleep(self.pause)
        return [np.ones(DIM, dtype=np.float32) for _ in texts]


def test_a_stop_is_answered_between_batches_not_after_the_chunk(tmp_path: Path) -> None:
    emb = Embedder(tmp_path)
    model = _SlowModel(0.05)
    emb._load = lambda: model  # type: ignore[method-assign]
    texts = [f"sentence {i} of a chunk" for i in range(512)]  # one chunk: 8 batches of 64
    asked = []

    def stop() -> bool:
        asked.append(time.monotonic())
        return len(asked) > 2

    t0 = time.monotonic()
    with pytest.raises(EmbedStopped):
        emb.embed(texts, batch_size=64, stop=stop)
    assert model.batches == 2  # the chunk's other 6 batches were never computed
    assert time.monotonic() - t0 < 1.0
    assert emb.embed(texts[:3], batch_size=64).shape == (3, DIM)  # without `stop`: as before


def test_m_asks_first_saying_how_long_and_no_starts_nothing(papers_ingested: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's `m` started ~13 minutes of embedding without a word; a long run is now confirmed first."""
    monkeypatch.setattr(paper_vectors, "EMBED_SENTENCES_PER_SECOND", 0.05)  # the small library "takes minutes"

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await library_screen(app, pilot)
            await pilot.press("m")
            await until(pilot, lambda: isinstance(app.screen, ConfirmScreen), "the confirm step")
            dialog: Any = app.screen
            assert dialog.title_text == "Embed the whole library?"
            body = str(dialog.body)
            assert "sentences have no embedding yet: about" in body and "min" in body and "c cancels" in body
            await pilot.press("n")
            await until(pilot, lambda: not isinstance(app.screen, ConfirmScreen), "the dialog to close")
            assert not screen.embedding

    run(flow)
