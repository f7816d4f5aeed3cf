"""Long texts are embedded in smaller batches (attention memory grows with batch x length²: 64 long methods
sentences took `evtui embed` to a 5.3 GB peak), with the same vectors."""

from __future__ import annotations

import numpy as np
import pytest

from evtui.embed import SHORT_TOKENS, get_embedder, model_available, token_batches


def test_batch_size_shrinks_with_the_square_of_length() -> None:
    lengths = [40, 300, 500, 600, 1000, 2000, 2000, 4000]  # characters, sorted as Embedder.embed sorts them
    runs = token_batches(lengths, 64)
    assert runs[0] == (0, 3, 64)  # up to SHORT_TOKENS word pieces (~4 characters each): the full batch
    assert [end for _, end, _ in runs][-1] == len(lengths) and all(a[1] == b[0] for a, b in zip(runs, runs[1:], strict=False))
    sizes = [size for _, _, size in runs]
    assert sizes == sorted(sizes, reverse=True) and sizes[-1] == 1
    for _start, end, size in runs:  # no batch costs more than 64 short texts (batch x tokens²)
        tokens = max(SHORT_TOKENS, lengths[end - 1] // 4)
        assert size * tokens**2 <= 64 * SHORT_TOKENS**2


@pytest.mark.skipif(not model_available(), reason="the offline embedding model is not installed")
def test_vectors_do_not_depend_on_the_batching(tmp_path) -> None:  # type: ignore[no-untyped-def]
    emb = get_embedder(tmp_path / "cache")
    texts = ["Aspirin lowered colorectal cancer risk."] * 3 + ["Serum samples were stored at -80 °C. " * 40]
    together = emb.embed(texts)
    alone = np.stack([emb.embed([t])[0] for t in texts])
    assert np.allclose(together, alone, atol=1e-5)
