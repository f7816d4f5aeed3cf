"""A `bench scifact --task verify` run on the claims the shipped verifier was trained on is in-sample: the CLI said
so when it ran, but the stored run (`bench runs`, --json's `in_sample`, the CSV, the Bench screen) did not, since
in-sample was read from the ranker's training files only."""

from __future__ import annotations

import json
from pathlib import Path

from rich.console import Console

from evtui.bench.csvout import write_runs_csv
from evtui.bench.provenance import in_sample, verifier_training_files
from evtui.bench.report import runs_table


def _verify_run(claims: str) -> dict[str, object]:
    return {"id": "6b6d858f081b", "created_at": "2026-11-26T12:00:00", "dataset": f"scifact:{Path(claims).name}",
            "task": "verify", "method": "verifier", "parameters": {"claims": claims, "papers": 1}, "n_items": 5,
            "n_skipped": 0, "metrics": {"abstract_label_only_f1": 0.8}, "seconds": 5.6, "status": "done"}


def test_the_verifier_reads_its_training_files_from_its_manifest(tmp_path: Path) -> None:
    manifest = tmp_path / "model.json"
    manifest.write_text(json.dumps({"training_data": {
        "scifact": "../shared/datasets/scifact claims_train.jsonl + corpus.jsonl (CC BY 4.0); fold 0 held out",
        "checkcovid": "check-covid train/covidCheck_train_composed+extracted.json (MIT); dev held out",
        "counts": {"scifact:gold:supports": 540}}}))
    assert verifier_training_files(manifest) == {"claims_train.jsonl", "corpus.jsonl",
                                                 "covidCheck_train_composed+extracted.json"}
    assert verifier_training_files(tmp_path / "missing.json") == frozenset()


def test_a_verify_run_on_the_verifiers_training_claims_is_in_sample(tmp_path: Path) -> None:
    trained = frozenset({"claims_train.jsonl"})
    assert in_sample(_verify_run("/data/scifact/claims_train.jsonl"), trained)
    assert not in_sample(_verify_run("/data/scifact/claims_dev.jsonl"), trained)
    # the shipped verifier's own manifest names claims_train.jsonl
    run = _verify_run("/data/scifact/claims_train.jsonl")
    assert in_sample(run)
    table, notes = runs_table([run], width=80)
    console = Console(width=80, record=True)
    console.print(table)
    assert "in-sample" in console.export_text() and any(n.startswith("in-sample") for n in notes)
    out = tmp_path / "runs.csv"
    write_runs_csv(out, [run])
    assert ",yes," in out.read_text().splitlines()[1]
