"""`evtui bench scifact` with a corpus that lacks the claims' documents (Check-COVID's corpus, a subset) scored every
claim 0 and stored it as a finished run; it now stops with one line naming the corpus and stores nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"
CC_CORPUS = FIX / "checkcovid_corpus6.json"


def _bench(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, object]]:
    rc = main(["bench", "scifact", "--claims", str(SF_CLAIMS), *args, "--json"])
    return rc, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("task", [["--task", "retrieval", "--method", "bm25"], ["--task", "verify"]])
def test_another_corpus_is_refused(capsys: pytest.CaptureFixture[str], task: list[str]) -> None:
    rc, out = _bench(capsys, "--corpus", str(CC_CORPUS), *task, "--limit", "3")
    assert rc == 2
    assert str(out["error"]).startswith(f"none of the claims' documents are in the corpus {CC_CORPUS} (e.g. ")
    assert main(["bench", "runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # no run of zeros is stored


def test_a_corpus_missing_some_documents_is_refused(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    claims = [json.loads(line) for line in SF_CLAIMS.read_text().splitlines() if line.strip()]
    gone = {str(d) for d in claims[0]["evidence"] or claims[0]["cited_doc_ids"]}
    docs = [line for line in SF_CORPUS.read_text().splitlines()
            if line.strip() and str(json.loads(line)["doc_id"]) not in gone]
    subset = tmp_path / "corpus.jsonl"
    subset.write_text("\n".join(docs) + "\n")
    rc, out = _bench(capsys, "--corpus", str(subset), "--method", "bm25")
    assert rc == 2 and f"{len(gone)} of " in str(out["error"]) and str(subset) in str(out["error"])
    rc, out = _bench(capsys, "--corpus", str(SF_CORPUS), "--method", "bm25")  # the right corpus still runs
    assert rc == 0 and out["n_queries"] == len(claims)
