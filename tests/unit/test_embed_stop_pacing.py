"""While a cancel is possible (the Library screen's `c`), embedding calls the model in pieces sized to take about
STOP_SECONDS each, so a cancel waits for one short call even where a batch of 64 takes seconds (a loaded machine);
a run that cannot be cancelled keeps whole batches. A fake clock stands for time: nothing here is timed."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from evtui import embed as embed_mod
from evtui.embed import DIM, STOP_SECONDS, Embedder, EmbedStopped


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class _Model:
    """A model whose call costs `per_char` seconds per text-character of its padded batch (on the fake clock),
    returning each text's index in its vector (the second component over the first) so the order of the rows can be checked."""

    def __init__(self, clock: _Clock, per_char: float) -> None:
        self.clock, self.per_char, self.calls = clock, per_char, []

    def embed(self, texts: list[str], batch_size: int) -> list[np.ndarray]:
        self.calls.append(len(texts))
        self.clock.now += len(texts) * max(len(t) for t in texts) * self.per_char
        return [np.array([1.0, float(t.split()[1])] + [0.0] * (DIM - 2), dtype=np.float32) for t in texts]


def _setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seconds_per_batch_of_64: float) -> tuple[Embedder, _Model,
                                                                                                       list[str]]:
    clock = _Clock()
    monkeypatch.setattr(embed_mod.time, "perf_counter", clock)
    texts = [f"sentence {i} " + "x" * (100 + i % 7) for i in range(640)]
    model = _Model(clock, seconds_per_batch_of_64 / (64 * 106))
    emb = Embedder(tmp_path)
    emb._load = lambda: model  # type: ignore[method-assign]
    return emb, model, texts


def test_cancellable_calls_are_short_on_a_loaded_machine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    emb, model, texts = _setup(tmp_path, monkeypatch, seconds_per_batch_of_64=4.0)  # load ~10: 4 s a batch
    mat = emb.embed(texts, batch_size=64, stop=lambda: False)
    # every call after the first (which measures) takes at most about STOP_SECONDS: a cancel waits for one
    longest = max(len(t) for t in texts)
    assert all(n * longest * model.per_char <= STOP_SECONDS * 1.05 for n in model.calls[1:])
    assert max(model.calls) < 64 and sum(model.calls) == len(texts)
    # the rows are the texts' own, in their order, whatever the pieces
    assert np.allclose(mat[:, 1] / mat[:, 0], np.arange(len(texts)), atol=1e-2)


def test_stop_is_asked_before_every_piece(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    emb, model, texts = _setup(tmp_path, monkeypatch, seconds_per_batch_of_64=4.0)
    asked: list[int] = []

    def stop() -> bool:
        asked.append(len(model.calls))
        return len(asked) > 5

    with pytest.raises(EmbedStopped):
        emb.embed(texts, batch_size=64, stop=stop)
    assert asked == [0, 1, 2, 3, 4, 5]  # one question per call to the model, the sixth answered before a sixth call
    assert sum(model.calls) < 64  # less than one old batch was computed before the stop


def test_idle_and_uncancellable_runs_keep_large_batches(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    emb, model, texts = _setup(tmp_path, monkeypatch, seconds_per_batch_of_64=0.1)  # fast machine: whole batches
    emb.embed(texts, batch_size=64, stop=lambda: False)
    assert max(model.calls) == 64
    model.calls.clear()
    emb2, model2, _ = _setup(tmp_path, monkeypatch, seconds_per_batch_of_64=4.0)
    emb2.embed(texts, batch_size=64)  # no stop: nothing to answer, whole batches as before
    assert model2.calls == [64] * 10
