"""Exports carry the verdicts (score, level, stance, confidence, rationale, judge/model) and each query's verdict
summary; plain notes drop the aspect tags; corpus abstracts are cited by corpus and doc, not "Unknown authors"."""

from __future__ import annotations

import json
from pathlib import Path

from evtui.cli import main
from evtui.config import load_config
from evtui.export import Basket, citation, to_markdown
from evtui.judge.base import Judgment
from evtui.judge.cache import JudgmentCache
from evtui.library import Library
from evtui.models import Paper
from evtui.search import Searcher


def _judgment(sid: str, stance: str, score: int, judge: str = "local", model: str = "m1") -> Judgment:
    return Judgment(sentence_id=sid, score=score, level=4 if score >= 70 else 2, confidence=7, stance=stance,
                    aspects=["a1"], rationale=f"why {sid[-3:]}", judge=judge, model=model, prompt_version="p1",
                    cost=0.0, tokens_in=0, tokens_out=0, status="ok", error=None, cached=False, notes=[])


def test_markdown_and_jsonl_carry_the_verdicts(papers_dir: Path, tmp_path: Path) -> None:
    lib = Library(load_config())
    lib.ingest([papers_dir])
    res = Searcher(lib).search("ACE inhibitors cause cough", k=3, method="bm25")
    assert len(res.evidence) >= 2
    basket = Basket(lib)
    for e in res.evidence[:2]:
        basket.add(e, res.query, "bm25")
    first = res.evidence[0].sentence
    cache = JudgmentCache(lib.store.con)
    cache.store(res.query, [_judgment(first.id, "supports", 82)], {first.id: first.text})
    # an LLM verdict wins over the local judge's for the same sentence
    cache.store(res.query, [_judgment(first.id, "supports", 90, judge="llm", model="openai/x")],
                {first.id: first.text})
    items = basket.items()
    assert items[0].verdict is not None and items[0].verdict["judge"] == "llm" and items[1].verdict is None
    md = to_markdown(items)
    assert "Verdicts: ▲ 1 support · ▼ 0 refute · ● 0 neutral · 1 not judged" in md
    assert "- Verdict: ▲ supports · 90/100 (level 4" in md and "confidence 7/10 · llm judge (openai/x)" in md
    assert "why" in md and "- Verdict: not judged" in md
    assert "judge: llm (openai/x)" in md and "judge: none" not in md
    assert "<sub>" in md and "<sub>" not in to_markdown(items, plain=True)
    lib.close()
    out = tmp_path / "e.jsonl"
    assert main(["export", "--out", str(out), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert rows[0]["verdict"]["score"] == 90 and rows[0]["verdict"]["stance"] == "supports"
    assert rows[0]["verdict"]["rationale"] and rows[0]["verdict"]["model"] == "openai/x"
    assert rows[1]["verdict"] is None
    notes = tmp_path / "notes.md"
    assert main(["export", "--out", str(notes), "--plain"]) == 0
    assert "<sub>" not in notes.read_text(encoding="utf-8") and "**" in notes.read_text(encoding="utf-8")


def test_select_judges_what_it_adds_so_the_export_has_verdicts(papers_dir: Path, tmp_path: Path,
                                                               capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["ingest", str(papers_dir), "--json"]) == 0
    capsys.readouterr()
    assert main(["select", "ACE inhibitors cause cough", "-k", "2", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert len(doc["added"]) == 2 and doc["judged"] == 2  # the real offline judge, no model downloaded
    out = tmp_path / "sel.jsonl"
    assert main(["export", "--out", str(out), "--format", "jsonl"]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 2 and all(r["verdict"] and r["verdict"]["judge"] == "local" for r in rows)
    assert main(["select", "aspirin colorectal cancer", "-k", "1", "--no-judge", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["judged"] == 0
    assert main(["export", "--out", str(tmp_path / "e.md")]) == 0
    assert "- Verdict: not judged" in (tmp_path / "e.md").read_text(encoding="utf-8")


def test_corpus_abstracts_are_cited_by_corpus_and_doc() -> None:
    scifact = Paper(id="scifact:15648443", title="A title.", authors=[], year=None, journal=None, doi=None,
                    pmid=None, pmcid=None, licence=None, source_path="corpus.jsonl", source_format="corpus-jsonl",
                    content_hash="", n_sentences=1)
    assert citation(scifact) == "SciFact corpus, doc 15648443. A title."
    pubtator = Paper(id="PMID:227508", title="T", authors=[], year=None, journal=None, doi=None, pmid="227508",
                     pmcid=None, licence=None, source_path="x.pubtator", source_format="pubtator", content_hash="",
                     n_sentences=1)
    assert citation(pubtator).startswith("PubMed abstract 227508. T.")
    real = Paper(id="PMC1", title="Real", authors=["A B"], year=2020, journal="J", doi="10.1/x", pmid=None,
                 pmcid="PMC1", licence=None, source_path="", source_format="jats", content_hash="", n_sentences=1)
    assert citation(real).startswith("A B (2020). Real.")
