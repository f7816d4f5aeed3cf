"""Exports carry the verdicts (score, level, stance, confidence, rationale, judge/model) and each query's verdict
summary; plain notes drop the aspect tags; corpus abstracts are cited by corpus and doc, not "Unknown authors"."""

from __future__ import annotations

import json
import re
from pathlib import Path

from evtui.cli import main
from evtui.config import load_config
from evtui.export import Basket, citation, to_markdown
from evtui.judge.base import LEVELS, Judgment
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


def test_cli_export_format_follows_the_file_name(papers_dir: Path, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """`--out refs.bib` writes BibTeX (it wrote Markdown), .jsonl JSON Lines, .md/.markdown Markdown; a --format the
    extension contradicts is written as asked, with a one-line warning; the JSON shape is unchanged."""
    assert main(["ingest", str(papers_dir), "--json"]) == 0
    assert main(["select", "ACE inhibitors cause cough", "-k", "2", "--no-judge", "--json"]) == 0
    capsys.readouterr()
    expect = {"refs.bib": ("bibtex", "@article{"), "rows.jsonl": ("jsonl", '{"sentence_id"'),
              "ev.md": ("md", "# Evidence"), "ev.markdown": ("md", "# Evidence"), "notes.txt": ("md", "# Evidence")}
    for name, (fmt, start) in expect.items():
        assert main(["export", "--out", str(tmp_path / name), "--json"]) == 0
        out = capsys.readouterr()
        assert json.loads(out.out) == {"out": str(tmp_path / name), "format": fmt, "sentences": 2}
        assert "warning" not in out.err
        assert (tmp_path / name).read_text(encoding="utf-8").startswith(start), name
    assert main(["export", "--out", str(tmp_path / "x.bib"), "--format", "md"]) == 0
    err = capsys.readouterr().err
    assert "warning: writing Markdown to x.bib, though its extension .bib means BibTeX" in " ".join(err.split())
    assert (tmp_path / "x.bib").read_text(encoding="utf-8").startswith("# Evidence")
    assert main(["export", "--out", str(tmp_path / "y.bib"), "--format", "bibtex"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_cli_export_names_levels_as_the_judge_does(papers_dir: Path, tmp_path: Path) -> None:
    """The Markdown said "level 4 direct" / "level 3 related" where `evtui judge` says "primary" / "substantial"."""
    lib = Library(load_config())
    lib.ingest([papers_dir])
    res = Searcher(lib).search("ACE inhibitors cause cough", k=2, method="bm25")
    basket = Basket(lib)
    for e in res.evidence[:2]:
        basket.add(e, res.query, "bm25")
    a, b = (e.sentence for e in res.evidence[:2])
    cache = JudgmentCache(lib.store.con)
    cache.store(res.query, [_judgment(a.id, "supports", 80), _judgment(b.id, "neutral", 40)],
                {a.id: a.text, b.id: b.text})
    lib.close()
    out = tmp_path / "e.md"
    assert main(["export", "--out", str(out)]) == 0
    md = out.read_text(encoding="utf-8")
    assert f"80/100 (level 4 {LEVELS[4]})" in md and f"40/100 (level 2 {LEVELS[2]})" in md
    assert "(level 4 primary)" in md and "(level 2 peripheral)" in md
    assert md.endswith("\n") and not md.endswith("\n\n")


def test_cli_bibtex_keys_are_readable_and_corpus_abstracts_say_where_they_are_from(tmp_path: Path) -> None:
    """Keys were the last 8 characters of the paper id (anon15648443, uhl2019c6398430)."""
    lib = Library(load_config())
    lib.ingest([Path(__file__).parents[1] / "fixtures" / "core" / "PMC2852030.xml"])
    res = Searcher(lib).search("pancreatic cancer perfusion CT", k=1, paper="PMC2852030")
    Basket(lib).add(res.evidence[0], res.query, res.method)
    paper = lib.store.paper("PMC2852030")
    lib.close()
    assert paper is not None and paper.authors and paper.year
    out = tmp_path / "refs.bib"
    assert main(["export", "--out", str(out)]) == 0
    bib = out.read_text(encoding="utf-8")
    surname = re.sub(r"[^a-z]", "", paper.authors[0].split()[-1].lower())
    key = re.match(r"@article\{([^,]+),\n", bib)
    assert key is not None and re.fullmatch(rf"{surname}{paper.year}[a-z0-9]+", key.group(1)), bib[:80]
    assert not key.group(1).endswith("2852030")
