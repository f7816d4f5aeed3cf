"""The rule-made claim pairs of experiments/verifier/synth_claims.py (a measured first training stage, not shipped): a title or
finding turned into a claim, reversed into its refutation, and never a held-out paper's text."""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "experiments" / "verifier"))
import synth_claims as sc  # noqa: E402

ABSTRACT = [
    "The aim of this study was to test whether carvedilol protects the heart from doxorubicin.",
    "Rats were randomized to doxorubicin alone or doxorubicin with carvedilol.",
    "Carvedilol significantly reduced mitochondrial damage in cardiac tissue (p < 0.01).",
    "Body weight did not differ between the groups.",
    "In conclusion, carvedilol protects against doxorubicin-induced mitochondrial cardiomyopathy.",
]


def test_negate_reverses_direction_or_finite_verb_only() -> None:
    assert sc.negate("Carvedilol reduces cardiac damage") == "Carvedilol increases cardiac damage"
    assert sc.negate("Ketanserin pretreatment reverses muscle rigidity") == \
        "Ketanserin pretreatment does not reverse muscle rigidity"
    assert sc.negate("Mesna given to prevent cystitis") is None  # an infinitive, not a finding's verb
    assert sc.negate("Statins do not cause myopathy") is None  # a negated claim is not reversed by rule


def test_titles_and_statistics() -> None:
    assert sc.declarative("Carvedilol protects against doxorubicin-induced mitochondrial cardiomyopathy")
    assert not sc.declarative("Late, late doxorubicin cardiotoxicity")
    assert not sc.declarative("Does carvedilol protect the heart?")
    assert sc.clean("In conclusion, X significantly reduced Y (HR 0.74, 95% CI 0.56-0.97), p = 0.02.") == \
        "X significantly reduced Y."


def test_pairs_for_one_abstract() -> None:
    title = "Carvedilol protects against doxorubicin-induced mitochondrial cardiomyopathy."
    pairs = sc.pairs_for("pmid:1", title, ABSTRACT, random.Random(0))
    by_kind = {p["kind"]: p for p in pairs}
    assert by_kind["synth-title"]["label"] == "supports"
    assert by_kind["synth-title"]["sentence"] == ABSTRACT[4]  # the closing sentence that restates the title
    assert by_kind["synth-title-flip"]["label"] == "refutes"
    assert "predisposes" in by_kind["synth-title-flip"]["claim"]  # flip_claim's antonym comes first
    assert by_kind["synth-title-neutral"]["position"] in (0, 1)
    self_pair = by_kind["synth-self"]
    assert self_pair["sentence"] == ABSTRACT[2] and "p < 0.01" not in self_pair["claim"]
    assert "increased" in by_kind["synth-self-flip"]["claim"]
    assert {p["split"] for p in pairs} == {"train"}


def test_build_reads_no_held_out_paper(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / "scifact").mkdir(parents=True)
    (shared / "check-covid").mkdir()
    (shared / "bc5cdr").mkdir()
    corpus = [{"doc_id": d, "title": title, "abstract": ABSTRACT}
              for d, title in ((1, "Carvedilol protects the heart from doxorubicin"),
                               (2, "Aspirin reduces colorectal adenoma recurrence"))]
    (shared / "scifact" / "corpus.jsonl").write_text("".join(json.dumps(c) + "\n" for c in corpus))
    (shared / "check-covid" / "corpus.json").write_text("")
    (shared / "bc5cdr" / "CDR_TrainingSet.PubTator.txt").write_text(
        "9|t|Aspirin reduces colorectal adenoma recurrence\n9|a|" + " ".join(ABSTRACT) + "\n\n"   # a held-out title
        "7|t|Naloxone reverses the antihypertensive effect of clonidine.\n7|a|" + " ".join(ABSTRACT) + "\n")
    examples = tmp_path / "examples.jsonl.gz"
    with gzip.open(examples, "wt") as fh:
        for paper, split in (("scifact:1", "train"), ("scifact:2", "cal")):
            fh.write(json.dumps({"paper": paper, "split": split}) + "\n")
    papers = {p["paper"] for p in sc.build(shared, examples)}
    assert papers == {"scifact:1", "pmid:7"}


def test_abstract_pairs_take_the_papers_label_and_never_leave_their_split() -> None:
    import train_abstract_verifier as tav

    def ex(claim_id: str, paper: str, label: str, kind: str, split: str = "train") -> dict:
        return {"claim": f"claim {claim_id}", "claim_id": claim_id, "paper": paper, "label": label, "kind": kind,
                "split": split, "source": "scifact"}

    docs = {f"scifact:{i}": f"Paper {i}. Its abstract." for i in range(1, 5)}
    exs = [ex("c1", "scifact:1", "supports", "gold"), ex("c1", "scifact:1", "neutral", "non-rationale"),
           ex("c1-flip", "scifact:1", "refutes", "flip"), ex("c2", "scifact:2", "neutral", "nei"),
           ex("c3", "scifact:3", "refutes", "gold", "cal"), ex("c1", "scifact:1", "neutral", "offtopic")]
    pairs = tav.doc_examples(exs, docs)
    own = {(p["claim_id"], p["paper"]): p["label"] for p in pairs if p["kind"] == "abstract"}
    assert own == {("c1", "scifact:1"): "supports", ("c1-flip", "scifact:1"): "refutes",
                   ("c2", "scifact:2"): "neutral", ("c3", "scifact:3"): "refutes"}
    assert all(p["split"] == "train" and p["label"] == "neutral" and p["paper"] != "scifact:3"
               for p in pairs if p["kind"] == "offtopic")  # another training paper, never a held-out one
