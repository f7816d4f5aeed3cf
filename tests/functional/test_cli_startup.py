"""A cold `evtui search --method bm25 --json` imports only what the verb needs: neither the app (Textual), the judge,
the verifier, the embedding model, the bench harness nor the file readers, and not Rich (nothing is drawn). Which
modules, not how fast: the time is measured by benchmarks/bench_cli_startup.py (docs/experiments/refactors.md, "The CLI package and its start-up")."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

# What a bm25 search never needs; each was, or could easily become, an import on its path.
HEAVY = ("textual", "rich", "evtui.tui", "evtui.judge", "evtui.verify", "evtui.bench", "evtui.scale", "evtui.ingest",
         "fastembed", "onnxruntime", "lightgbm", "litellm")
REPORT = ("import json, sys; from evtui.cli import main; rc = main(sys.argv[1:]); "
          "sys.stderr.write('\\n' + json.dumps(sorted(sys.modules)) + '\\n'); sys.exit(rc)")


def _run(*argv: str) -> tuple[str, set[str]]:
    """The command's stdout and the modules its process had imported when it finished."""
    proc = subprocess.run([sys.executable, "-c", REPORT, *argv], capture_output=True, text=True, timeout=300,
                          check=False)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, set(json.loads(proc.stderr.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_a_bm25_search_under_json_loads_no_app_judge_model_nor_rich(papers_ingested: Path) -> None:
    out, modules = _run("search", "aspirin colorectal cancer", "--method", "bm25", "--json")
    assert json.loads(out)["results"], "the search found nothing: it did not exercise the search path"
    assert "evtui.search" in modules and "duckdb" in modules  # it did search the library
    assert _heavy(modules) == []


def test_the_table_of_the_same_search_loads_rich_only_for_drawing(papers_ingested: Path) -> None:
    out, modules = _run("search", "aspirin colorectal cancer", "--method", "bm25")
    assert "aspirin" in out.lower()
    assert "rich.table" in modules  # the table is drawn with Rich, and nothing else heavy comes with it
    assert [m for m in _heavy(modules) if not (m == "rich" or m.startswith("rich."))] == []
