"""Official SciFact verification metrics (abstract- and sentence-level), the sentence-index mapping, the
`bench scifact --task verify` task with a test double for the predictor, and `bench scifact-eval`."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import scifact_ids as ids
from evtui.bench import scifact_verify as sv
from evtui.bench.scifact import load_claims
from evtui.cli import main
from evtui.config import Config
from evtui.errors import EvtuiError
from evtui.library import Library

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"
DEV10 = FIX / "scifact_dev10.jsonl"
VERIFY_KEYS = {"task", "dataset", "method", "claims", "papers", "abstract_label_only", "abstract_label_rationale",
               "sentence_selection", "sentence_selection_label", "counts", "per_item", "seconds"}
EVAL_KEYS = {"task", "gold", "predictions", "claims", "abstract_label_only", "abstract_label_rationale",
             "sentence_selection", "sentence_selection_label", "counts"}


def _p(claim_id: int, **docs: tuple[str, list[int]]) -> dict[str, Any]:
    """A prediction: _p(52, d11=("SUPPORT", [1, 11])) -> {"id": 52, "evidence": {"11": {...}}}."""
    return {"id": claim_id, "evidence": {k.removeprefix("d"): {"label": lab, "sentences": s}
                                         for k, (lab, s) in docs.items()}}


def _prf(res: Mapping[str, Any], group: str) -> tuple[float, float, float]:
    g = res[group]
    return g["precision"], g["recall"], g["f1"]


# -- the evaluation guide's worked example (allenai/scifact doc/evaluation.md), number for number ----------
GUIDE_GOLD = {"id": 52, "claim": "ALDH1 expression is associated with poorer prognosis for breast cancer primary tumors.",
              "evidence": {"11": [{"sentences": [0, 1], "label": "SUPPORT"}, {"sentences": [11], "label": "SUPPORT"}],
                           "15": [{"sentences": [4], "label": "SUPPORT"}]},
              "cited_doc_ids": [11, 15]}
# The guide labels abstract 16 "REFUTES", a label its own scorer rejects; 16 is not a gold abstract, so the label
# plays no part in the guide's numbers, and CONTRADICT (the allowed spelling) gives the same counts.
GUIDE_PRED = _p(52, d11=("SUPPORT", [1, 11, 13]), d16=("CONTRADICT", [18, 20]))


def test_evaluation_guide_worked_example() -> None:
    res = sv.score([GUIDE_GOLD], [GUIDE_PRED])
    assert res["counts"] == {"gold_abstracts": 2, "predicted_abstracts": 2, "gold_sentences": 4,
                             "predicted_sentences": 5}
    # Abstract level: 11 is correct (label right, gold set [11] within [1, 11, 13]); 16 is not a gold abstract.
    assert _prf(res, "abstract_label_only") == (1 / 2, 1 / 2, 1 / 2)
    assert _prf(res, "abstract_label_rationale") == (1 / 2, 1 / 2, 1 / 2)
    # Sentence level: only 11 (1 lacks 0 of its set [0, 1]; 13 is no rationale; 18, 20 are in no gold abstract).
    assert _prf(res, "sentence_selection") == pytest.approx((1 / 5, 1 / 4, 2 / 9), abs=1e-15)
    assert _prf(res, "sentence_selection_label") == pytest.approx((1 / 5, 1 / 4, 2 / 9), abs=1e-15)
    with pytest.raises(EvtuiError, match="'REFUTES' is not SUPPORT or CONTRADICT"):
        sv.score([GUIDE_GOLD], [_p(52, d16=("REFUTES", [18]))])


# -- the leaderboard scorer's own test case (allenai/scifact-evaluator, fixture/*_small) -------------------
# Its predictions_small.jsonl against the 10 SciFact dev claims of gold_small.jsonl (= fixtures/bench/scifact_dev10.jsonl);
# expected_metrics_small.json, as the scorer prints it.
EVALUATOR_PRED = [
    _p(1), _p(3), _p(5, d13734012=("CONTRADICT", [4])), _p(13), _p(36, d33409100=("CONTRADICT", [8])),
    _p(42, d18174210=("CONTRADICT", [1, 9, 10])), _p(48, d13734012=("CONTRADICT", [7])),
    _p(49, d5953485=("SUPPORT", [2])), _p(50), _p(51, d2140497=("CONTRADICT", [6, 7])),
]
EVALUATOR_EXPECTED = {
    "abstract_label_only": (0.5, 0.42857142857142855, 0.4615384615384615),
    "abstract_label_rationale": (0.3333333333333333, 0.2857142857142857, 0.30769230769230765),
    "sentence_selection": (0.5555555555555556, 0.4166666666666667, 0.4761904761904762),
    "sentence_selection_label": (0.4444444444444444, 0.3333333333333333, 0.380952380952381),
}


def test_leaderboard_scorer_test_case_exactly() -> None:
    res = sv.score(load_claims(DEV10), EVALUATOR_PRED)
    for group, expected in EVALUATOR_EXPECTED.items():
        assert _prf(res, group) == expected, group


# -- hand-computed edge cases --------------------------------------------------------------------------------
# Claim 1: abstract 10 SUPPORT, evidence sets [0, 1] and [4] (3 gold sentences); claim 2: abstract 20 CONTRADICT,
# set [2]; claim 3: no gold evidence. In all: 2 gold abstracts, 4 gold sentences.
EDGE = [
    {"id": 1, "claim": "c1", "evidence": {"10": [{"sentences": [0, 1], "label": "SUPPORT"},
                                                 {"sentences": [4], "label": "SUPPORT"}]}},
    {"id": 2, "claim": "c2", "evidence": {"20": [{"sentences": [2], "label": "CONTRADICT"}]}},
    {"id": 3, "claim": "c3", "evidence": {}},
]


def test_empty_predictions_score_zero() -> None:
    res = sv.score(EDGE, [_p(1), _p(2), _p(3)])
    for group in sv.GROUPS:
        assert _prf(res, group) == (0.0, 0.0, 0.0)  # 0 predicted: precision 0/0 is 0, recall 0/2 and 0/4
    assert res["counts"] == {"gold_abstracts": 2, "predicted_abstracts": 0, "gold_sentences": 4,
                             "predicted_sentences": 0}


def test_wrong_label_keeps_selection_credit_only() -> None:
    res = sv.score(EDGE, [_p(1), _p(2, d20=("SUPPORT", [2])), _p(3)])
    assert _prf(res, "abstract_label_only") == (0.0, 0.0, 0.0)  # 0 of 1 predicted abstracts right
    assert _prf(res, "abstract_label_rationale") == (0.0, 0.0, 0.0)
    assert _prf(res, "sentence_selection") == (1.0, 0.25, 0.4)  # sentence 2 selected: 1/1, 1/4, F1 2/5
    assert _prf(res, "sentence_selection_label") == (0.0, 0.0, 0.0)


def test_only_the_first_three_rationales_count_at_abstract_level() -> None:
    late = sv.score(EDGE, [_p(1, d10=("SUPPORT", [7, 8, 9, 4])), _p(2), _p(3)])
    assert _prf(late, "abstract_label_only") == (1.0, 0.5, pytest.approx(2 / 3))
    assert _prf(late, "abstract_label_rationale") == (0.0, 0.0, 0.0)  # [4] is the 4th sentence: not read
    assert _prf(late, "sentence_selection") == (0.25, 0.25, 0.25)  # all 4 read at sentence level; 4 is right
    early = sv.score(EDGE, [_p(1, d10=("SUPPORT", [4, 7, 8, 9])), _p(2), _p(3)])
    assert _prf(early, "abstract_label_rationale") == (1.0, 0.5, pytest.approx(2 / 3))
    # An abstract whose shortest gold set has 4 sentences (SciFact train claim 264 has one) is read to 4
    # sentences, as the scorer does since its 2021-12-28 fix; a 5th is still not read.
    long_set = [{"id": 9, "claim": "c", "evidence": {"7": [{"sentences": [7, 8, 9, 10], "label": "SUPPORT"}]}}]
    four = sv.score(long_set, [_p(9, d7=("SUPPORT", [10, 9, 8, 7, 1]))])
    assert _prf(four, "abstract_label_rationale") == (1.0, 1.0, 1.0)
    five = sv.score(long_set, [_p(9, d7=("SUPPORT", [10, 9, 8, 1, 7]))])
    assert _prf(five, "abstract_label_rationale") == (0.0, 0.0, 0.0)
    assert _prf(five, "sentence_selection") == (0.8, 1.0, pytest.approx(8 / 9))  # sentence level reads all 5


def test_a_claim_without_gold_evidence_only_costs_precision() -> None:
    res = sv.score(EDGE, [_p(1, d10=("SUPPORT", [0, 1, 4])), _p(2), _p(3, d30=("SUPPORT", [0, 1]))])
    assert _prf(res, "abstract_label_only") == (0.5, 0.5, 0.5)  # 1 of 2 predicted, 1 of 2 gold
    assert _prf(res, "abstract_label_rationale") == (0.5, 0.5, 0.5)
    # 5 predicted sentences, 3 right (0, 1, 4), 4 gold: P 3/5, R 3/4, F1 2/3.
    assert _prf(res, "sentence_selection") == pytest.approx((0.6, 0.75, 2 / 3))
    assert _prf(res, "sentence_selection_label") == pytest.approx((0.6, 0.75, 2 / 3))


def test_half_an_evidence_set_earns_nothing_and_duplicates_count_as_predicted() -> None:
    half = sv.score(EDGE, [_p(1, d10=("SUPPORT", [1])), _p(2), _p(3)])
    assert _prf(half, "abstract_label_only") == (1.0, 0.5, pytest.approx(2 / 3))
    assert _prf(half, "abstract_label_rationale") == (0.0, 0.0, 0.0)
    assert _prf(half, "sentence_selection") == (0.0, 0.0, 0.0)  # 1 without 0 completes no set
    dup = sv.score(EDGE, [_p(1, d10=("SUPPORT", [4, 4])), _p(2), _p(3)])
    assert dup["counts"]["predicted_sentences"] == 2  # the scorer counts len(sentences)
    assert _prf(dup, "sentence_selection") == (0.5, 0.25, pytest.approx(1 / 3))


def test_claim_order_does_not_matter_and_ids_may_be_strings() -> None:
    preds = [_p(3), _p(1, d10=("SUPPORT", [0, 1])), {"id": "2", "evidence": {20: {"label": "CONTRADICT",
                                                                                   "sentences": [2]}}}]
    res = sv.score(EDGE, preds)
    assert _prf(res, "abstract_label_only") == (1.0, 1.0, 1.0)
    assert _prf(res, "sentence_selection") == (1.0, 0.75, pytest.approx(6 / 7))


@pytest.mark.parametrize(("gold", "preds", "message"), [
    (EDGE, [_p(1), _p(2)], "no prediction for 1 claim"),
    (EDGE, [_p(1), _p(2), _p(3), _p(4)], "prediction(s) for claims not in the gold file"),
    (EDGE, [_p(1), _p(2), _p(3), _p(3)], "two predictions for claim 3"),
    (EDGE, [_p(1, d10=("NEI", [1])), _p(2), _p(3)], "'NEI' is not SUPPORT or CONTRADICT"),
    (EDGE, [_p(1, d10=("SUPPORT", ["1"])), _p(2), _p(3)], "'1' is not an integer"),
    (EDGE, [{"id": 1, "evidence": []}, _p(2), _p(3)], "evidence must be an object"),
    ([{"id": 1, "claim": "c"}], [_p(1)], "no evidence field"),
    ([{"id": 1, "claim": "c", "evidence": {"5": [{"sentences": [1], "label": "SUPPORT"},
                                                 {"sentences": [2], "label": "CONTRADICT"}]}}], [_p(1)],
     "conflicting gold labels"),
])
def test_bad_input_is_a_clear_error(gold: list[dict[str, Any]], preds: list[dict[str, Any]], message: str) -> None:
    with pytest.raises(EvtuiError, match=re.escape(message)):
        sv.score(gold, preds)


# -- stored sentence positions <-> SciFact abstract indices --------------------------------------------------
def test_doc_ids_and_sentence_indices_on_ingested_scifact(tmp_path: Path) -> None:
    raw = {str(o["doc_id"]): o for o in map(json.loads, SF_CORPUS.read_text(encoding="utf-8").splitlines())}
    assert any(o["structured"] for o in raw.values())  # "BACKGROUND: ..." abstracts are among them
    with Library(Config(home=tmp_path / "lib", demo=False)) as lib:
        lib.ingest([SF_CORPUS])
        papers = list(lib.store.papers())
        assert len(papers) == len(raw) == 30
        for paper in papers:
            doc = raw[ids.doc_id_of(paper.id)]
            sentences = lib.store.sentences(paper.id)
            assert len(sentences) == 1 + len(doc["abstract"])  # the title, then every abstract sentence
            assert not any(s.is_heading for s in sentences)
            for s in sentences:
                idx = ids.to_scifact_index(paper.id, s.position)
                if idx is None:
                    assert s.position == 0 and s.section_kind == "title" and s.text == " ".join(doc["title"].split())
                else:
                    assert s.text == " ".join(doc["abstract"][idx].split())
        # A gold rationale of claim 30 (doc 24341590, sentence 10) is stored at position 11.
        stored = lib.store.sentences("scifact:24341590")[11]
        assert ids.to_scifact_index("scifact:24341590", stored.position) == 10
        assert stored.text == " ".join(raw["24341590"]["abstract"][10].split())
    assert ids.to_scifact_index("scifact:1", 3, titled=False) == 3
    with pytest.raises(EvtuiError, match="not a SciFact paper id"):
        ids.doc_id_of("PMID:123")
    with pytest.raises(EvtuiError, match="not a SciFact paper id"):
        ids.to_scifact_index("scifact:", 1)


# -- the bench task, with test doubles in place of evtui.bench.scifact_predict.predict ------------------------------
def _oracle(asked: list[dict[str, Any]] | None = None, stop_after: int | None = None) -> sv.Predictor:
    """A test double for the predictor: the gold answer for each claim, looked up by id (it is handed only the
    claim's id and text), the rationales mapped through the library as a real predictor would map them."""
    gold = {c["id"]: c for c in load_claims(SF_CLAIMS)}

    def predict(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
        for n, claim in enumerate(claims):
            if stop_after is not None and n == stop_after:
                raise KeyboardInterrupt  # as a kill mid-run
            assert set(claim) == {"id", "claim"}  # no labels reach the predictor
            if asked is not None:
                asked.append(claim)
            evidence = {}
            for doc, sets in list(gold[claim["id"]]["evidence"].items())[:papers]:
                pid = f"scifact:{doc}"
                wanted = {i for s in sets for i in s["sentences"]}
                found = [ids.to_scifact_index(pid, s.position) for s in library.store.sentences(pid)]
                evidence[ids.doc_id_of(pid)] = {"label": sets[0]["label"], "sentences": [i for i in found if i in wanted]}
            yield {"id": claim["id"], "evidence": evidence}

    return predict


def test_verify_task_end_to_end_with_an_oracle(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []
    res, params = sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=_oracle(asked), papers=3, home=tmp_path)
    assert set(res) == VERIFY_KEYS and res["claims"] == 6 and len(asked) == 6
    for group in sv.GROUPS:
        assert _prf(res, group) == (1.0, 1.0, 1.0)
    assert res["counts"] == {"gold_abstracts": 5, "predicted_abstracts": 5, "gold_sentences": 10,
                             "predicted_sentences": 10}
    assert res["per_item"] == dict.fromkeys(["30", "69", "76", "88", "10", "20"], 1.0)
    # Only one paper per claim: claim 69 loses its second abstract (4414547) and its single sentence.
    one, _ = sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=_oracle(), papers=1, home=tmp_path)
    assert _prf(one, "abstract_label_only") == (1.0, 0.8, round(8 / 9, 4))  # the bench rounds to 4 places
    assert _prf(one, "sentence_selection") == (1.0, 0.9, round(18 / 19, 4))
    assert one["per_item"]["69"] == round(2 / 3, 4)
    limited, p = sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=_oracle(), limit=2, home=tmp_path)
    assert limited["claims"] == 2 and p["limit"] == 2


def test_verify_task_scores_what_the_predictor_said(tmp_path: Path) -> None:
    def contrary(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
        # Test double: every claim gets abstract 24341590 as CONTRADICT, sentences 10 and 0.
        assert papers == sv.DEFAULT_PAPERS and library.store.paper("scifact:24341590") is not None
        for c in claims:
            yield {"id": c["id"], "evidence": {"24341590": {"label": "CONTRADICT", "sentences": [10, 0]}}}

    res, _ = sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=contrary, home=tmp_path)
    # 6 predicted abstracts, 1 of them gold (claim 30, but SUPPORT there); sentence 10 is a whole gold set.
    assert _prf(res, "abstract_label_only") == (0.0, 0.0, 0.0)
    assert _prf(res, "sentence_selection") == (round(1 / 12, 4), 0.1, round(2 / 22, 4))
    assert _prf(res, "sentence_selection_label") == (0.0, 0.0, 0.0)
    assert res["counts"] == {"gold_abstracts": 5, "predicted_abstracts": 6, "gold_sentences": 10,
                             "predicted_sentences": 12}


def test_verify_task_refuses_a_predictor_that_breaks_the_contract(tmp_path: Path) -> None:
    def short(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
        yield {"id": claims[0]["id"], "evidence": {}}

    def stranger(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
        yield {"id": 999999, "evidence": {}}

    def nei(library: Library, claims: list[dict[str, Any]], papers: int) -> Iterator[dict[str, Any]]:
        yield {"id": claims[0]["id"], "evidence": {"24341590": {"label": "NEI", "sentences": []}}}

    for predictor, message in ((short, "answered 1 of 6 claims"), (stranger, "which was not asked"),
                               (nei, "not SUPPORT or CONTRADICT")):
        with pytest.raises(EvtuiError, match=message):
            sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, predict=predictor, home=tmp_path)
    with pytest.raises(EvtuiError, match="no evidence field"):  # a test-split file: no labels to score against
        sv.run_scifact_verify(SF_CORPUS, FIX / "checkcovid_claims.json", predict=short, home=tmp_path)


# -- CLI -----------------------------------------------------------------------------------------------------
def _bench(*extra: str) -> list[str]:
    return ["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--task", "verify",
            "--papers", "3", *extra]


def test_cli_verify_json_stored_run_and_resume(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sv, "default_predictor", lambda: _oracle(stop_after=4))
    assert main(_bench("--json")) == 130  # interrupted: the four finished claims stay stored
    capsys.readouterr()
    assert main(["bench", "runs", "--json"]) == 0
    killed = json.loads(capsys.readouterr().out)
    assert [(r["task"], r["status"], r["n_items"]) for r in killed] == [("verify", "running", 4)]
    asked: list[dict[str, Any]] = []
    monkeypatch.setattr(sv, "default_predictor", lambda: _oracle(asked))
    assert main(_bench("--resume", "--json")) == 0
    res = json.loads(capsys.readouterr().out)
    assert [c["id"] for c in asked] == [10, 20]  # only the two claims the kill left
    assert set(res) == VERIFY_KEYS | {"in_sample"} and res["task"] == "verify" and res["claims"] == 6 and res["papers"] == 3
    assert res["abstract_label_only"] == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert main(["bench", "runs", "--json"]) == 0
    (stored,) = json.loads(capsys.readouterr().out)
    assert stored["status"] == "done" and stored["n_items"] == 6 and stored["method"] == "verifier"
    assert list(stored["metrics"])[:4] == [f"{g}_f1" for g in sv.GROUPS] and len(stored["metrics"]) == 12
    assert stored["metrics"]["abstract_label_only_f1"] == 1.0 and stored["metrics"]["sentence_selection_label_f1"] == 1.0
    assert stored["parameters"]["papers"] == 3 and stored["parameters"]["model"] == sv.verifier_version()
    assert main(_bench("--limit", "2", "--papers", "1", "--no-save")) == 0
    out = capsys.readouterr().out
    assert "verify · 2 claims · top 1 papers" in out and "abstract · label + rationale" in out


def test_cli_verify_bad_arguments(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sv, "default_predictor", lambda: _oracle())
    for extra, message in ((("--method", "bm25"), "--method goes with the retrieval task"),
                           (("--engine", "ray"), "local engine only"),
                           (("--papers", "0"), "at least 1"),
                           (("--resume", "--no-save"), "cannot go with --no-save")):
        assert main(_bench(*extra, "--json")) == 2
        assert message in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--json"]) == 2
    assert "--method is required" in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # failed runs leave nothing behind


def test_cli_retrieval_is_still_the_default(capsys: pytest.CaptureFixture[str]) -> None:
    base = ["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
            "--limit", "2", "--no-save", "--json"]
    assert main(base) == 0
    default = json.loads(capsys.readouterr().out)
    assert main([*base, "--task", "retrieval"]) == 0
    explicit = json.loads(capsys.readouterr().out)
    assert "ndcg@10" in default and default.keys() == explicit.keys()
    assert default["per_item"] == explicit["per_item"]


def test_cli_scifact_eval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pred = tmp_path / "pred.jsonl"
    pred.write_text("".join(json.dumps(p) + "\n" for p in EVALUATOR_PRED), encoding="utf-8")
    assert main(["bench", "scifact-eval", "--gold", str(DEV10), "--pred", str(pred), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert set(res) == EVAL_KEYS and res["claims"] == 10 and res["task"] == "verify"
    for group, expected in EVALUATOR_EXPECTED.items():
        assert _prf(res, group) == expected
    assert main(["bench", "scifact-eval", "--gold", str(DEV10), "--pred", str(pred)]) == 0
    out = capsys.readouterr().out
    assert "pred.jsonl against scifact_dev10.jsonl · 10 claims" in out and "0.4615" in out
    pred.write_text(json.dumps(EVALUATOR_PRED[0]) + "\n{not json\n", encoding="utf-8")
    assert main(["bench", "scifact-eval", "--gold", str(DEV10), "--pred", str(pred), "--json"]) == 2
    assert "cannot read SciFact predictions" in json.loads(capsys.readouterr().out)["error"]
    pred.write_text(json.dumps(EVALUATOR_PRED[0]) + "\n", encoding="utf-8")
    assert main(["bench", "scifact-eval", "--gold", str(DEV10), "--pred", str(pred), "--json"]) == 2
    assert "no prediction for 9 claim(s)" in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "scifact-eval", "--gold", str(tmp_path / "nope.jsonl"), "--pred", str(pred)]) == 2
    assert "cannot read SciFact claims" in capsys.readouterr().err


def test_figures_on_the_verifiers_own_training_claims_are_called_in_sample(tmp_path: Path) -> None:
    assert "in-sample" in sv.trained_on(Path("somewhere/claims_train.jsonl"))  # model.json names its training file
    assert sv.trained_on(Path("claims_dev.jsonl")) == ""
    # the fixture's six claims are claims_train.jsonl's: in-sample whatever the file is called; new claims are not
    assert "in-sample" in sv.trained_on(SF_CLAIMS)
    mine = tmp_path / "mine.jsonl"
    mine.write_text(json.dumps({"id": 1, "claim": "A claim of the user's own, in no training set."}) + "\n")
    assert sv.trained_on(mine) == ""
