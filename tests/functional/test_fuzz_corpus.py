"""The fuzz harness (benchmarks/fuzz_loaders.py) on a slice of its mutated corpus, through every loader and a
library: a whole-pipeline check (minutes on 2 cores), so it lives with the functional tests; the fast property tests
of the loaders, splitter and query parser stay in tests/unit/test_fuzz.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))
import fuzz_loaders  # noqa: E402 - the harness lives in benchmarks/, which is no package


# -- a slice of the mutated corpus, through every loader and a library that must lose nothing ----------------------
def test_mutated_corpus_sample(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The harness itself on the fixed hostile files plus 50 mutants of tests/fixtures (no ../shared, no 50 MB
    files): no crash, no hang, nothing leaked, the library's earlier papers intact."""
    code = fuzz_loaders.main(["--out", str(tmp_path / "fuzz"), "--mutants", "50", "--big", "0", "--no-shared",
                              "--seed", "7", "--chunk", "60"])
    summary = json.loads(capsys.readouterr().out)
    assert summary["failures"] == [] and code == 0
    assert summary["files"] >= 150 and summary["crashes"] == summary["hangs"] == 0
    assert {"xxe", "billion-laughs", "deep-xml", "binary", "zero-byte", "reencode", "odd-name"} <= set(
        summary["files_by_kind"])
    # Rich markup, terminal escapes, newline bombs and oversize sentences (checked in check_file)
    assert {"markup", "control-chars", "newline-bomb", "oversize-sentence"} <= set(summary["files_by_kind"])
    assert summary["network_requests"] == 0
    lib = summary["library"]
    assert lib["baseline_intact"] and lib["consistent"] and lib["marker_rows"] == 0
    assert lib["papers_added"] > 0  # the mutants that still parse are loaded, next to the baseline
