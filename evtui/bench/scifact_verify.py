"""SciFact claim verification scored as the official SciFact evaluator scores it (Wadden et al., EMNLP 2020).

The definitions follow allenai/scifact `doc/evaluation.md` and the leaderboard scorer (allenai/scifact-evaluator,
`evaluator/eval.py`), count for count:

- abstract level: a predicted abstract is correct (label-only) when it is a gold evidence abstract of the claim and
  its label matches; correct (label+rationale) when, besides, some gold evidence set is contained in its first
  three predicted sentences (first k when the abstract's shortest gold set has k > 3 sentences: the scorer's
  fix of 2021-12-28, commit 6e3ed95, which the guide's text predates). Precision over predicted abstracts,
  recall over gold abstracts.
- sentence level: a predicted sentence of a gold abstract is correctly selected when it belongs to a gold evidence
  set all of whose sentences were predicted (all predicted sentences count, not only three); selection+label
  also needs the abstract's label right. Precision over predicted sentences (duplicates included, as the scorer
  counts `len(sentences)`), recall over gold evidence sentences.

F1 is 2PR/(P+R), and any 0/0 is 0, as in the scorer. Predictions are in the official format, one per claim:
`{"id", "evidence": {doc_id: {"label": "SUPPORT"|"CONTRADICT", "sentences": [abstract indices, 0-based]}}}`,
NEI abstracts left out. Sentence indices count the abstract's sentences only (the title is not one of them).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from evtui.bench import scifact_predict
from evtui.bench.driver import Benchmark, Engine, ProgressFn, RunResult, Timings, run_benchmark
from evtui.bench.jsonl import read_json_lines
from evtui.bench.runs import ItemResult
from evtui.bench.scifact import check_documents, check_limit, load_claims, paper_id
from evtui.bench.scifact_ids import PREFIX
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

LABELS: tuple[str, ...] = ("SUPPORT", "CONTRADICT")
MAX_ABSTRACT_SENTS = 3  # abstract level reads the first 3 rationale sentences (more if no gold set fits in 3)
# The four official metric groups, under the names `--json` uses (the scorer's own names in comments).
GROUPS: tuple[str, ...] = (
    "abstract_label_only",  # abstract_label_only
    "abstract_label_rationale",  # abstract_rationalized
    "sentence_selection",  # sentence_selection
    "sentence_selection_label",  # sentence_label
)
DEFAULT_PAPERS = 1  # as evtui.bench.scifact_predict chose it by CV

# predict(library, claims, papers) -> one official prediction per claim (evtui.bench.scifact_predict.predict).
Predictor = Callable[[Library, list[Mapping[str, Any]], int], Iterable[Mapping[str, Any]]]


# -- the official scorer -----------------------------------------------------------------------------------
@dataclass
class Counts:
    gold_abstracts: int = 0
    predicted_abstracts: int = 0
    correct_label_only: int = 0
    correct_label_rationale: int = 0
    gold_sentences: int = 0
    predicted_sentences: int = 0
    correct_selection: int = 0
    correct_selection_label: int = 0

    def __iadd__(self, other: Counts) -> Counts:
        for f in fields(self):
            setattr(self, f.name, getattr(self, f.name) + getattr(other, f.name))
        return self


def prf(correct: int, predicted: int, gold: int) -> dict[str, float]:
    precision = correct / predicted if predicted else 0.0
    recall = correct / gold if gold else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


def metrics(c: Counts) -> dict[str, Any]:
    """The four metric groups and the counts behind them."""
    return {
        "abstract_label_only": prf(c.correct_label_only, c.predicted_abstracts, c.gold_abstracts),
        "abstract_label_rationale": prf(c.correct_label_rationale, c.predicted_abstracts, c.gold_abstracts),
        "sentence_selection": prf(c.correct_selection, c.predicted_sentences, c.gold_sentences),
        "sentence_selection_label": prf(c.correct_selection_label, c.predicted_sentences, c.gold_sentences),
        "counts": {"gold_abstracts": c.gold_abstracts, "predicted_abstracts": c.predicted_abstracts,
                   "gold_sentences": c.gold_sentences, "predicted_sentences": c.predicted_sentences},
    }


def _index(value: Any, where: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise EvtuiError(f"{where}: sentence index {value!r} is not an integer")
    if value < 0:  # no abstract has one; it would count as a predicted sentence, silently lowering precision
        raise EvtuiError(f"{where}: sentence index {value} is negative (abstract sentences count from 0, the title "
                         "is not one of them)")
    return value


def gold_evidence(claim: Mapping[str, Any]) -> dict[str, tuple[str, list[set[int]]]]:
    """{doc_id: (label, evidence sets)} of a gold claim; one label per abstract, as the scorer requires."""
    if "evidence" not in claim:
        raise EvtuiError(f"claim {claim.get('id')}: no evidence field (the SciFact test split has no labels)")
    evidence = claim["evidence"]
    if not isinstance(evidence, dict):
        raise EvtuiError(f"claim {claim.get('id')}: evidence is not an object of doc_id -> evidence sets")
    gold: dict[str, tuple[str, list[set[int]]]] = {}
    for doc, sets in evidence.items():
        where = f"claim {claim.get('id')} doc {doc}"
        if not isinstance(sets, list) or not sets or not all(
                isinstance(s, dict) and isinstance(s.get("sentences"), list) for s in sets):
            raise EvtuiError(f"{where}: gold evidence must be a list of {{sentences, label}}")
        labels = {s.get("label") for s in sets}
        if len(labels) > 1:
            raise EvtuiError(f"{where}: conflicting gold labels {sorted(map(str, labels))}")
        label = labels.pop()
        if label not in LABELS:
            raise EvtuiError(f"{where}: gold label {label!r} is not SUPPORT or CONTRADICT")
        gold[str(doc)] = (label, [{_index(i, where) for i in s["sentences"]} for s in sets])
    return gold


def check_prediction(pred: Any, where: str = "prediction") -> dict[str, dict[str, Any]]:
    """A prediction's evidence as {doc_id: {"label", "sentences"}}, or a clear error for anything off-format."""
    if not isinstance(pred, Mapping) or "id" not in pred:
        raise EvtuiError(f"{where}: not a SciFact prediction (needs id and evidence)")
    evidence = pred.get("evidence")
    where = f"{where} for claim {pred['id']}"
    if not isinstance(evidence, Mapping):
        raise EvtuiError(f"{where}: evidence must be an object of doc_id -> {{label, sentences}}")
    out: dict[str, dict[str, Any]] = {}
    for doc, ev in evidence.items():
        w = f"{where} doc {doc}"
        if not isinstance(ev, Mapping) or not isinstance(ev.get("sentences"), list):
            raise EvtuiError(f"{w}: needs a label and a sentences list")
        if ev.get("label") not in LABELS:
            raise EvtuiError(f"{w}: label {ev.get('label')!r} is not SUPPORT or CONTRADICT (NEI docs are left out)")
        out[str(doc)] = {"label": ev["label"], "sentences": [_index(i, w) for i in ev["sentences"]]}
    return out


def _rationale_sentences(gold_sets: list[set[int]], predicted: set[int], where: str) -> int:
    """Predicted sentences that complete a gold evidence set (every other sentence of the set predicted too)."""
    n = 0
    for ix in predicted:
        owners = [s for s in gold_sets if ix in s]
        if len(owners) > 1:  # the scorer asserts this never happens
            raise EvtuiError(f"{where}: sentence {ix} is in two gold evidence sets; the official scorer cannot score it")
        if owners and owners[0] <= predicted:
            n += 1
    return n


def score_claim(claim: Mapping[str, Any], prediction: Mapping[str, Any]) -> Counts:
    gold = gold_evidence(claim)
    # Gold sentences are counted as listed, as the scorer does (`len` of each evidence set's list).
    c = Counts(gold_abstracts=len(gold),
               gold_sentences=sum(len(s["sentences"]) for sets in claim["evidence"].values() for s in sets))
    for doc, ev in check_prediction(prediction).items():
        sentences: list[int] = ev["sentences"]
        c.predicted_abstracts += 1
        c.predicted_sentences += len(sentences)
        if doc not in gold:
            continue
        label, sets = gold[doc]
        right = ev["label"] == label
        if right:
            c.correct_label_only += 1
            first = set(sentences[:max(MAX_ABSTRACT_SENTS, min(len(s) for s in sets))])
            if any(s <= first for s in sets):
                c.correct_label_rationale += 1
        n = _rationale_sentences(sets, set(sentences), f"claim {claim.get('id')} doc {doc}")
        c.correct_selection += n
        c.correct_selection_label += n if right else 0
    return c


def claim_f1(c: Counts) -> float:
    """One claim's abstract label-only F1 (a run's per-item score); 1.0 for rightly predicting nothing."""
    if not c.gold_abstracts and not c.predicted_abstracts:
        return 1.0
    return prf(c.correct_label_only, c.predicted_abstracts, c.gold_abstracts)["f1"]


def _check_doc_ids(claims: Sequence[Mapping[str, Any]], predictions: Iterable[Mapping[str, Any]]) -> None:
    """Refuse doc ids written as evtui's paper ids (`scifact:4983`) when the gold file's are bare corpus doc_ids:
    the official scorer matches doc ids as text, so every such abstract would silently count as wrong (all four
    F1s 0) instead of being scored."""
    if any(str(doc).startswith(PREFIX) for c in claims for doc in (c.get("evidence") or {})):
        return  # a gold file that names its documents this way: compared as they are
    for pred in predictions:
        evidence = pred.get("evidence")
        for doc in evidence if isinstance(evidence, Mapping) else ():
            if str(doc).startswith(PREFIX):
                bare = str(doc)[len(PREFIX):]
                raise EvtuiError(f"prediction for claim {pred['id']}: doc id {str(doc)!r} is evtui's paper id; the "
                                 f"SciFact format names the corpus doc_id alone ({bare!r}), as the gold file does")


def score(claims: Sequence[Mapping[str, Any]], predictions: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """The official metrics of predictions against gold claims: exactly one prediction per claim (any order)."""
    by_id: dict[str, Mapping[str, Any]] = {}
    for n, pred in enumerate(predictions, 1):
        if not isinstance(pred, Mapping) or "id" not in pred:
            raise EvtuiError(f"prediction {n}: not a SciFact prediction (needs id and evidence)")
        key = str(pred["id"])
        if key in by_id:
            raise EvtuiError(f"two predictions for claim {pred['id']}")
        by_id[key] = pred
    ids = [str(c["id"]) for c in claims]
    if len(set(ids)) != len(ids):
        raise EvtuiError("the gold claims repeat a claim id")
    _check_doc_ids(claims, by_id.values())
    missing = [i for i in ids if i not in by_id]
    extra = sorted(set(by_id) - set(ids))
    if missing or extra:
        what = []
        if missing:
            what.append(f"no prediction for {len(missing)} claim(s) ({', '.join(missing[:5])}"
                        f"{', ...' if len(missing) > 5 else ''})")
        if extra:
            what.append(f"{len(extra)} prediction(s) for claims not in the gold file ({', '.join(extra[:5])}"
                        f"{', ...' if len(extra) > 5 else ''})")
        raise EvtuiError("; ".join(what) + ": the scorer needs exactly one prediction per gold claim")
    total = Counts()
    for claim in claims:
        total += score_claim(claim, by_id[str(claim["id"])])
    return {"claims": len(claims), **metrics(total)}


def load_predictions(path: Path) -> list[dict[str, Any]]:
    return read_json_lines(path, "SciFact predictions", check_prediction, unique="id")


def evaluate_files(gold_path: Path, pred_path: Path) -> dict[str, Any]:
    """`evtui bench scifact-eval`: any system's prediction file scored against a gold claims file."""
    claims = load_claims(gold_path)
    return {"task": "verify", "gold": str(gold_path), "predictions": str(pred_path),
            **score(claims, load_predictions(pred_path))}


# -- the benchmark task ------------------------------------------------------------------------------------
def default_predictor() -> Predictor:
    """The shipped pipeline (evtui.bench.scifact_predict.predict); tests put an oracle in its place."""
    return scifact_predict.predict


def _verifier_manifest() -> dict[str, Any] | None:
    """The shipped verifier's model.json (None when absent or unreadable)."""
    manifest = Path(__file__).resolve().parent.parent / "resources" / "verifier" / "model.json"
    try:
        m = json.loads(manifest.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return m if isinstance(m, dict) else None


def verifier_version() -> str | None:
    """The shipped verifier's identity (model.json: version and sha256), part of a verify run's resume key so
    a run resumed after a retrain never mixes two models' predictions; None before a model ships."""
    m = _verifier_manifest()
    if m is None:
        return None
    digest = (m.get("adapter") or {}).get("sha256") if isinstance(m.get("adapter"), dict) else m.get("sha256")
    return f"{m.get('version', '')}:{str(digest or '')[:12]}"


def trained_on(claims_path: Path) -> str:
    """A note when the shipped verifier was trained on this claims file (model.json `training_data` names it):
    its figures are then in-sample, and a user comparing them with held-out ones should be told ("" otherwise)."""
    # provenance holds the one reading of which files the model was trained on
    from evtui.bench.provenance import VERIFIER_METHOD, in_sample

    # the path too: a file of another name holding training claims (the first 30 of claims_train.jsonl) is in-sample
    if claims_path.name and in_sample({"method": VERIFIER_METHOD, "dataset": f"scifact:{claims_path.name}",
                                       "parameters": {"claims": str(claims_path)}}):
        return (f"in-sample: the verifier was trained on the claims of {claims_path.name} (all but its calibration "
                "fold); BENCHMARKS.md gives the claim-grouped cross-validated figures")
    return ""


class SciFactVerifyRun(Benchmark[dict[str, Any]]):
    """`bench scifact --task verify` as a driver spec: each claim (id and text only) is predicted over the whole
    corpus by `predict`, stored with its label-only F1, and the run is scored with the official metrics."""

    name = "scifact"
    stage = "claims"

    def __init__(self, corpus: Path, claims_path: Path, claims: list[dict[str, Any]], papers: int,
                 predict: Predictor, method: str, done: set[str]) -> None:
        self.corpus, self.claims_path, self.claims = corpus, claims_path, claims
        self.papers, self.predict, self.method, self.seed = papers, predict, method, 0
        self.gold = {str(c["id"]): c for c in claims}
        self.done = done  # claims a killed run already answered: not asked again

    def prepare(self, library: Library) -> None:
        check_documents(library, self.corpus, {paper_id(doc) for c in self.claims for doc in gold_evidence(c)})
        # The claims are verified over papers that `best` finds, and `best`'s paper channel fuses BM25 with each
        # paper's vector once every paper has one (as `evtui embed` leaves a user's library): without them this
        # run measured a weaker retrieval than `evtui verify --claims` on an embedded library (claims30: label-only
        # F1 0.42 here, 0.53 there).
        from evtui.bench.beir import embed_if_needed

        embed_if_needed(library, "best")

    def requests(self) -> list[tuple[str, dict[str, Any] | None]]:
        return [(str(c["id"]), {"id": c["id"], "claim": c["claim"]}) for c in self.claims]

    def local_ranker(self, library: Library) -> Callable[[dict[str, Any]], Any]:
        # One predictor call for every claim still to do, consumed claim by claim: it keeps one searcher and its
        # caches for the whole run, and each answer is stored before the next claim is verified.
        todo: list[Mapping[str, Any]] = [r for qid, r in self.requests() if r is not None and qid not in self.done]
        stream = iter(self.predict(library, todo, self.papers))
        answered = len(self.done)

        def one(claim: dict[str, Any]) -> Mapping[str, Any]:
            nonlocal answered
            pred = next(stream, None)
            if pred is None:
                raise EvtuiError(f"the predictor answered {answered} of {len(self.claims)} claims")
            check_prediction(pred, "the predictor's answer")
            if str(pred["id"]) != str(claim["id"]):
                raise EvtuiError(f"the predictor answered claim {pred['id']}, which was not asked or already answered"
                                 if str(pred["id"]) not in self.gold or str(pred["id"]) in self.done else
                                 f"the predictor answered claim {pred['id']} when asked claim {claim['id']}")
            answered += 1
            return pred

        return one

    def engine_ranker(self, engine: Engine, library: Library, todo: list[dict[str, Any]]) -> Callable[[Any], Any]:
        raise EvtuiError("claim verification runs on the local engine only")

    def item(self, item_id: str, request: dict[str, Any], answer: Any, seconds: float) -> ItemResult:
        return ItemResult(item_id, claim_f1(score_claim(self.gold[item_id], answer)), dict(answer), seconds)

    def score(self, answers: Mapping[str, ItemResult | None], timings: Timings) -> RunResult:
        preds = {k: v.picked for k, v in answers.items() if v is not None}
        if len(preds) < len(self.claims):
            raise EvtuiError(f"the predictor answered {len(preds)} of {len(self.claims)} claims")
        scored = score(self.claims, [preds[str(c["id"])] for c in self.claims])
        r4 = {g: {k: round(v, 4) for k, v in scored[g].items()} for g in GROUPS}
        result: dict[str, Any] = {
            "task": "verify", "dataset": f"scifact:{self.claims_path.name}", "method": self.method,
            "claims": len(self.claims), "papers": self.papers, **r4, "counts": scored["counts"],
            "per_item": {k: round(claim_f1(score_claim(self.gold[k], preds[k])), 4) for k in self.gold},
            "seconds": round(timings.total, 2),
        }
        return RunResult(result, {"timings": {"ingest": round(timings.ingest, 2),
                                              "verify": round(timings.total - timings.ingest, 2)}})


def run_scifact_verify(
    corpus: Path,
    claims_path: Path,
    *,
    papers: int = DEFAULT_PAPERS,
    limit: int | None = None,
    predict: Predictor | None = None,
    method: str = "verifier",
    on_progress: ProgressFn | None = None,
    home: Path | None = None,
    done: Mapping[str, ItemResult] | None = None,
    on_item: Callable[[ItemResult], None] | None = None,
) -> tuple[dict[str, Any], dict[str, Any]]:
    """Verify each claim over the whole corpus and score it officially: (result, parameters for `save_run`).

    The predictor sees each claim's id and text only, never its evidence. Claims in `done` (a killed run's
    predictions) are not predicted again; `on_item` gets each new prediction with its claim's label-only F1.
    """
    if papers < 1:
        raise EvtuiError("--papers must be at least 1")
    check_limit(limit)
    claims = load_claims(claims_path)
    claims = claims[:limit] if limit else claims
    for c in claims:
        gold_evidence(c)  # a claims file without labels fails before any work
    known = {str(c["id"]) for c in claims}
    done = {k: v for k, v in (done or {}).items() if k in known}
    spec = SciFactVerifyRun(corpus, claims_path, claims, papers, predict or default_predictor(), method, set(done))
    run = run_benchmark(spec, home or load_config().home, done=done, on_item=on_item, on_progress=on_progress)
    params = {"corpus": str(corpus), "claims": str(claims_path), "limit": limit, "papers": papers, **run.params}
    return run.result, params


def save(library: Library, result: Mapping[str, Any], params: Mapping[str, Any], *, run_id: str | None = None) -> str:
    """Store a verify run; its metrics flat (`abstract_label_only_f1`, ...) so `evtui bench runs` lists them,
    the four F1s first (a run's first metric is its headline in the app's bench screen)."""
    from evtui.bench.runs import save_run

    row: dict[str, Any] = {"dataset": result["dataset"], "task": "verify", "method": result["method"],
                           "n_items": result["claims"], "n_skipped": 0, "per_item": result["per_item"],
                           "seconds": result["seconds"]}
    row.update({f"{g}_f1": result[g]["f1"] for g in GROUPS})
    row.update({f"{g}_{k}": result[g][k] for g in GROUPS for k in ("precision", "recall")})
    return save_run(library, row, dict(params), run_id=run_id)
