"""A run on a file that holds some of a model's training queries is in-sample, whatever the file is called."""

from __future__ import annotations

import json
from pathlib import Path

from evtui.bench.provenance import MODEL_DIR, VERIFIER_DIR, in_sample, item_key, trained_items

# SciFact training claims (claims_train.jsonl ids 0 and 2): both models were trained on that file.
TRAINED = ["0-dimensional biomaterials lack inductive properties.",
           "1 in 5 million in UK have abnormal PrP positivity."]


def _claims(path: Path, claims: list[str]) -> str:
    path.write_text("".join(json.dumps({"id": i, "claim": c}) + "\n" for i, c in enumerate(claims)))
    return str(path)


def test_the_shipped_lists_hold_the_training_claims() -> None:
    for model_dir in (MODEL_DIR, VERIFIER_DIR):
        keys = trained_items(model_dir)
        assert len(keys) > 1000 and all(item_key(c) in keys for c in TRAINED)
    assert item_key("  0-Dimensional biomaterials   lack inductive properties. ") == item_key(TRAINED[0])


def test_a_renamed_subset_of_the_training_claims_is_in_sample(tmp_path: Path) -> None:
    # `head -20 claims_train.jsonl > c20.jsonl`: the file name matched nothing, so the figure read as held-out
    sub = _claims(tmp_path / "c20.jsonl", TRAINED)
    run = {"method": "best", "dataset": "scifact:c20.jsonl", "parameters": {"claims": sub}}
    assert in_sample(run)
    assert in_sample({**run, "method": "verifier"})
    assert not in_sample({**run, "method": "bm25"})  # an untrained method fits nothing


def test_new_claims_are_not_in_sample(tmp_path: Path) -> None:
    mine = _claims(tmp_path / "mine.jsonl", ["Metformin lowers HbA1c in type 2 diabetes in a new cohort."])
    assert not in_sample({"method": "best", "dataset": "scifact:mine.jsonl", "parameters": {"claims": mine}})
    # a file gone since the run: judged by its name alone
    assert not in_sample({"method": "best", "dataset": "scifact:gone.jsonl",
                          "parameters": {"claims": str(tmp_path / "gone.jsonl")}})


def test_an_evidencebench_style_file_is_read_by_its_hypotheses(tmp_path: Path) -> None:
    doc = {"item_1": {"hypothesis": TRAINED[1], "paper_as_candidate_pool": []}}
    (tmp_path / "eb_part.json").write_text(json.dumps(doc))
    assert in_sample({"method": "best", "dataset": "evidencebench:eb_part.json",
                      "parameters": {"data": str(tmp_path / "eb_part.json")}})
