"""The `best` pipeline: features, coverage-aware selection, the shipped model, and `random`."""

from __future__ import annotations

import json

import numpy as np
import pytest

from evtui.errors import EvtuiError
from evtui.models import Sentence
from evtui.query import compile_matcher, parse_query
from evtui.rank.features import FEATURES, Candidate, featurize
from evtui.rank.model import MODEL_DIR, RankerModel
from evtui.rank.select import normalise, select
from evtui.search import DEFAULT_METHOD, Searcher


def _cand(text: str, pos: int, kind: str = "results", bm25: float = 1.0, parsed=None) -> Candidate:
    s = Sentence(f"P1:{pos}", "P1", pos, kind.title(), kind, False, text)
    spans = compile_matcher(parsed.aspects).spans(text) if parsed else []
    return Candidate(s, spans, bm25)


def test_features_follow_the_query_and_the_sentence() -> None:
    parsed = parse_query("(aspirin, reduce, colorectal cancer)")
    cands = [
        _cand("Aspirin reduced the risk of colorectal cancer (OR 0.76, 95% CI 0.6-0.9; p < 0.01).", 40, bm25=9.0,
              parsed=parsed),
        _cand("Samples were stored at -80 degrees.", 10, kind="methods", bm25=0.0, parsed=parsed),
    ]
    x = featurize(parsed, cands, paper_sizes={"P1": 100})
    assert x.shape == (2, len(FEATURES))
    f = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert f["cov_weighted"][0] == pytest.approx(1.0) and f["cov_weighted"][1] == 0.0
    assert f["has_pvalue"][0] == 1.0 and f["has_stat"][0] == 1.0 and f["has_pvalue"][1] == 0.0
    assert f["sec_results"][0] == 1.0 and f["sec_methods"][1] == 1.0
    assert f["rel_pos"][0] == pytest.approx(0.4)
    assert f["bm25_norm"][0] == 1.0 and f["bm25_norm"][1] == 0.0
    assert np.isnan(f["dense"]).all()  # no embeddings given: missing, not zero


def test_paper_level_features_judge_the_whole_paper() -> None:
    parsed = parse_query("Statins reduce myocardial infarction in diabetic patients")

    def c(pid: str, pos: int, text: str) -> Candidate:
        return Candidate(Sentence(f"{pid}:{pos}", pid, pos, "Abstract", "abstract", False, text), [], 1.0)

    cands = [  # paper A states the claim's parts across two sentences; B has one stray match; C has no title
        c("A", 1, "Statins were given to diabetic patients."),
        c("A", 2, "Myocardial infarction was reduced."),
        c("B", 5, "Statins are widely prescribed."),
        c("C", 3, "Statins were studied."),
    ]
    titles = {"A": "Statin therapy and myocardial infarction in diabetes", "B": "A survey of prescriptions", "C": ""}
    x = featurize(parsed, cands, paper_sizes={"A": 10, "B": 10, "C": 10}, titles=titles)
    f = {name: x[:, i] for i, name in enumerate(FEATURES)}
    assert f["paper_cov"][0] == f["paper_cov"][1] > f["paper_cov"][2] > 0  # the union of the paper's sentences
    assert f["paper_cov"][1] > f["term_overlap"][1]  # more than any one sentence states
    assert f["paper_hits"][0] == pytest.approx(np.log2(3)) and f["paper_hits"][2] == pytest.approx(1.0)
    assert f["title_overlap"][0] > 0 and f["title_overlap"][2] == 0.0
    assert np.isnan(f["title_overlap"][3])  # an unknown title is missing, not "shares nothing"


def test_shipped_model_is_one_merged_seed_ensemble_per_head() -> None:
    model = RankerModel.load()
    files = model.meta["files"]
    assert set(files) == {"evidence", "results", "judge"} == set(model.boosters)
    for head, entry in files.items():  # every seed's trees are in the one file (merging: test_ranker_files.py)
        assert entry["seeds"] > 1 and model.boosters[head].num_trees() == entry["trees"]
    x = np.random.default_rng(0).normal(size=(6, len(FEATURES)))
    seeds = files["evidence"]["seeds"]  # the score is the mean of the seeds' blocks, not the sum of all trees
    assert model.score(x) == pytest.approx(model.boosters["evidence"].predict(x, raw_score=True) / seeds)


def test_selection_skips_a_restatement_and_covers_the_other_aspect() -> None:
    texts = [
        "Aspirin lowered colorectal cancer incidence in the trial.",
        "Aspirin lowered colorectal cancer incidence in this trial.",  # a near-duplicate of the first
        "Bleeding was the main adverse event of aspirin.",
    ]
    rel = np.array([1.0, 0.95, 0.6])
    covered = [{"a1", "a3"}, {"a1", "a3"}, {"a1", "a4"}]
    assert select(rel, 2) == [0, 1]  # plain top-K takes both restatements
    picked = select(rel, 2, covered=covered, texts=texts, aspect_weight=0.1, redundancy=0.5)
    assert picked == [0, 2]
    # vectors, where present, decide similarity instead of words
    vecs = np.eye(3, dtype=np.float32)
    assert select(rel, 2, vectors=vecs, texts=texts, redundancy=0.5) == [0, 1]


def test_selection_edge_cases() -> None:
    assert select(np.array([]), 5) == []
    assert select(np.array([0.3, 0.9]), 5) == [1, 0]
    assert list(normalise(np.array([2.0, 2.0]))) == [1.0, 1.0]


def test_shipped_model_loads_and_refuses_other_features(tmp_path) -> None:
    model = RankerModel.load()
    assert {"evidence", "results", "judge"} <= set(model.boosters)
    assert model.meta["cv"]["evidencebench_cv"]  # the figures it was shipped with are recorded
    x = np.zeros((3, len(FEATURES)))
    assert model.score(x).shape == (3,)
    p = model.probability(x)
    assert ((0 <= p) & (p <= 1)).all()
    meta = json.loads((MODEL_DIR / "model.json").read_text())
    meta["features"] = meta["features"][:-1]
    (tmp_path / "model.json").write_text(json.dumps(meta))
    with pytest.raises(EvtuiError, match="other features"):
        RankerModel.load(tmp_path)


@pytest.fixture()
def library(papers_library):
    return papers_library


def test_best_is_the_default_and_ranks_the_library(library) -> None:
    assert DEFAULT_METHOD == "best"
    s = Searcher(library)
    res = s.search("(aspirin, reduce, colorectal cancer)", k=5)
    assert res.method == "best" and res.evidence
    top = res.evidence[0]
    assert {h.aspect for h in top.highlights} >= {"head", "tail"}
    assert [e.rank for e in res.evidence] == list(range(1, len(res.evidence) + 1))
    # paper-scoped: every sentence of the paper is a candidate, headings never come back
    paper = top.sentence.paper_id
    scoped = s.search("aspirin and colorectal cancer", k=50, paper=paper)
    assert scoped.evidence and all(e.sentence.paper_id == paper and not e.sentence.is_heading
                                   for e in scoped.evidence)
    ids = [e.sentence.id for e in scoped.evidence]
    assert len(ids) == len(set(ids))
    results = s.search("aspirin and colorectal cancer", k=3, paper=paper, results=True)
    assert len(results.evidence) <= 3


def test_random_is_seeded_and_scoped(library) -> None:
    s = Searcher(library)
    a = s.search("aspirin colorectal cancer", k=3, method="random", seed=1)
    b = s.search("aspirin colorectal cancer", k=3, method="random", seed=1)
    c = s.search("aspirin colorectal cancer", k=3, method="random", seed=2)
    assert [e.sentence.id for e in a.evidence] == [e.sentence.id for e in b.evidence]
    assert len(a.evidence) == 3
    paper = a.evidence[0].sentence.paper_id
    d = s.search("anything at all", k=2, method="random", paper=paper)
    assert all(e.sentence.paper_id == paper for e in d.evidence)
    assert c.method == "random"
