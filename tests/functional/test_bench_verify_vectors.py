"""`bench scifact --task verify` verifies claims over the papers `best` finds, and `best` fuses each paper's vector
into its paper channel once every paper has one: the bench library got none, so the benchmark measured a weaker
retrieval than `evtui verify --claims` on an embedded library (claims30: label-only F1 0.42 against 0.53)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import scifact_verify as sv
from evtui.bench.driver import bench_library
from evtui.embed import model_available
from evtui.paper_vectors import coverage

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"


def _nothing(library: Any, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
    """Test double for the predictor: no evidence for any claim (only the library it is handed matters here)."""
    for claim in claims:
        yield {"id": claim["id"], "evidence": {}}


@pytest.mark.skipif(not model_available(), reason="the MiniLM embedding model is not installed")
def test_the_verify_benchmark_embeds_every_paper_for_best(tmp_path: Path) -> None:
    sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=_nothing, home=tmp_path)
    lib = bench_library("scifact", SF_CORPUS, tmp_path)
    try:
        done, total = coverage(lib)
    finally:
        lib.close()
    assert total == 30 and done == total
