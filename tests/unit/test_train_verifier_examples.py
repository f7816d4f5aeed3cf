"""The verifier's training pairs (scripts/train_verifier.py) on a tiny SciFact + Check-COVID layout: flipped claims
take the opposite side, only training claims are flipped, and `--symmetric-flips` flips refutations and Check-COVID
claims too while leaving the default recipe's pairs as they were."""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_verifier as tv  # noqa: E402


def _write(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))


@pytest.fixture()
def shared(tmp_path: Path) -> Path:
    sents = ["Aspirin lowered the incidence of colorectal cancer.", "Patients were followed for ten years.",
             "Adverse events were rare."]
    corpus = [{"doc_id": d, "title": f"Paper {d}", "abstract": sents} for d in range(1, 41)]
    claims = []
    for i in range(1, 41):  # one paper per claim: the paper-grouped folds put some claims in the held-out fold
        label = "SUPPORT" if i % 2 else "CONTRADICT"
        claims.append({"id": i, "claim": f"Aspirin reduces colorectal cancer risk {i}.",
                       "evidence": {str(i): [{"sentences": [0], "label": label}]}, "cited_doc_ids": [i]})
    _write(tmp_path / "scifact" / "corpus.jsonl", corpus)
    _write(tmp_path / "scifact" / "claims_train.jsonl", claims)
    cc_corpus = [{"cord_id": "c1", "title": "Masks", "abstract": ["Masks lowered transmission.", "Other text."]}]
    _write(tmp_path / "check-covid" / "corpus.json", cc_corpus)
    cc = [{"id": 1, "cord_id": "c1", "claim": "Masks reduce transmission.", "label": "SUPPORT",
           "evidence_set": [{"sent_index": 0}]},
          {"id": 2, "cord_id": "c1", "claim": "Masks increase transmission.", "label": "REFUTE",
           "evidence_set": [{"sent_index": 0}]}]
    _write(tmp_path / "check-covid" / "train" / "covidCheck_train_composed+extracted.json", cc)
    _write(tmp_path / "check-covid" / "dev" / "covidCheck_dev_composed+extracted.json", cc[:1])
    return tmp_path


def _flips(exs: list[dict]) -> list[dict]:
    return [e for e in exs if e["kind"] == "flip"]


def test_default_recipe_flips_supporting_training_claims_only(shared: Path) -> None:
    exs = tv.build_examples(shared, aug=True)
    flips = _flips(exs)
    assert flips and all(e["label"] == "refutes" and e["source"] == "scifact" for e in flips)
    assert all(e["split"] == "train" for e in flips)  # the held-out fold is never augmented
    assert {e["split"] for e in exs if e["source"] == "scifact"} == {"train", "cal"}
    assert all("increases" in e["claim"] for e in flips)  # "reduces" swapped for its antonym


def test_symmetric_flips_go_both_ways_and_keep_the_default_pairs(shared: Path) -> None:
    default = tv.build_examples(shared, aug=True)
    sym = tv.build_examples(shared, aug=True, symmetric=True)
    assert [e for e in sym if e["kind"] != "flip"] == [e for e in default if e["kind"] != "flip"]
    flips = _flips(sym)
    by_source = Counter((e["source"], e["label"]) for e in flips)
    assert by_source[("scifact", "supports")] and by_source[("scifact", "refutes")]
    assert by_source[("checkcovid", "supports")] == 1 and by_source[("checkcovid", "refutes")] == 1
    gold = {e["claim_id"]: e["label"] for e in sym if e["kind"] == "gold"}
    for e in flips:  # each flip takes the opposite side of the claim it came from
        assert {gold[e["claim_id"].removesuffix("-flip")], e["label"]} == {"supports", "refutes"}
    assert all(e["split"] == "train" for e in flips)
    assert tv.build_examples(shared, aug=False, symmetric=True) == tv.build_examples(shared, aug=False)
