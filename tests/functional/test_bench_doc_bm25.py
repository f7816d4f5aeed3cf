"""Doc-level `bm25` in the benchmarks: whole-abstract BM25 through the paper index, not pooled sentence hits."""

from __future__ import annotations

import json
from pathlib import Path

from evtui.bench.beir import Query, make_doc_ranker
from evtui.bench.driver import bench_library
from evtui.rank.pipeline import paper_bm25
from evtui.request import NO_FILTERS
from evtui.search import Searcher

CLAIM = "Metformin reduces mortality in diabetic adults."
ABSTRACTS = {
    # the claim's words spread over two sentences: what a document ranking should put first
    1: ["Metformin was given twice daily to a cohort of three hundred diabetic adults in primary care clinics.",
        "Over five years of follow up, all cause mortality in that cohort fell by about a third."],
    # one short sentence each that matches one or two of the words strongly
    2: ["Metformin dosing in adults.", "Tablets were stored at room temperature."],
    3: ["Mortality in diabetic wards.", "Staffing levels were recorded weekly."],
    4: ["Metformin mortality.", "A short note on nomenclature."],
}


def _corpus(tmp_path: Path) -> Path:
    path = tmp_path / "corpus.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for doc, abstract in ABSTRACTS.items():
            fh.write(json.dumps({"doc_id": doc, "title": f"Study {doc}", "abstract": abstract,
                                 "structured": False}) + "\n")
    return path


def test_doc_level_bm25_ranks_papers_by_whole_abstract_bm25(tmp_path: Path) -> None:
    lib = bench_library("scifact", _corpus(tmp_path), tmp_path)
    try:
        docs = make_doc_ranker(lib, "bm25", 0, 100)(Query("q1", CLAIM))
        expected = paper_bm25(lib, Searcher(lib).parse(CLAIM, "claim"), 100, NO_FILTERS)
        assert list(docs) == [pid for pid, _score in expected]
        # the abstract that holds every word of the claim, across its two sentences, comes first
        assert next(iter(docs)) == "scifact:1"
    finally:
        lib.close()


def test_sentence_bm25_alone_puts_another_paper_first(tmp_path: Path) -> None:
    lib = bench_library("scifact", _corpus(tmp_path), tmp_path)
    try:
        hits = Searcher(lib).search(CLAIM, k=1000, mode="claim", method="bm25")
        first_sentence_paper = hits.evidence[0].sentence.paper_id
        docs = make_doc_ranker(lib, "bm25", 0, 100)(Query("q1", CLAIM))
        # sentence BM25's top hit is a short sentence of another paper: the paper index is what changed the order
        assert first_sentence_paper != "scifact:1"
        assert next(iter(docs)) == "scifact:1"
    finally:
        lib.close()
