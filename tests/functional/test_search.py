from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.errors import QueryError
from evtui.library import Library
from evtui.search import Searcher


@pytest.fixture
def lib(papers_dir: Path):
    with Library(load_config()) as library:
        library.ingest([papers_dir])
        yield library


def test_triplet_finds_the_sentence_with_three_aspects(lib: Library) -> None:
    res = Searcher(lib).search("(aspirin, reduce, colorectal cancer)", k=5)
    assert res.query.mode == "triplet"
    assert [a.id for a in res.query.aspects] == ["head", "relation", "tail"]
    top = res.evidence[0]
    assert "reduced the incidence of colorectal cancer" in top.sentence.text
    covered = {h.aspect for h in top.highlights}
    assert covered == {"head", "relation", "tail"}
    for h in top.highlights:
        assert 0 <= h.start < h.end <= len(top.sentence.text)
    surface = {top.sentence.text[h.start:h.end].lower() for h in top.highlights}
    assert "aspirin" in surface and "reduced" in surface


def test_claim_uses_library_abbreviations(lib: Library) -> None:
    res = Searcher(lib).search("ACE inhibitors cause cough", k=5)
    assert res.query.mode == "claim"
    assert any("cough" in e.sentence.text.lower() for e in res.evidence[:2])
    assert res.evidence[0].sentence.paper_id.startswith("file:ace")


def test_hyphenated_and_greek_tokens(lib: Library) -> None:
    res = Searcher(lib).search("IL-6 levels in COVID-19", k=3)
    top = res.evidence[0]
    assert "COVID-19" in top.sentence.text
    spans = [top.sentence.text[h.start:h.end] for h in top.highlights]
    assert any(sp.startswith("IL-6") for sp in spans) and "COVID-19" in spans
    res2 = Searcher(lib).search("TNF-α measured by ELISA", k=3)
    t = res2.evidence[0].sentence.text
    assert "TNF-α" in [t[h.start:h.end] for h in res2.evidence[0].highlights]


def test_filters(lib: Library) -> None:
    s = Searcher(lib)
    res = s.search("aspirin colorectal", section="results")
    assert res.evidence and all(e.sentence.section_kind == "results" for e in res.evidence)
    pid = res.evidence[0].sentence.paper_id
    assert all(e.sentence.paper_id == pid for e in s.search("cancer", paper=pid).evidence)
    assert s.search("aspirin", paper="no-such-paper").evidence == []
    undated, total = lib.store.undated_papers()
    assert 0 < undated <= total
    dated = s.search("aspirin colorectal", year_from=1900)  # a year filter says what it leaves out unseen
    assert f"{undated:,} of {total:,} papers have no year, so the year filter leaves them out" in dated.notes
    assert not any("no year" in n for n in s.search("aspirin colorectal").notes)
    # headings are not evidence
    assert all(not e.sentence.is_heading for e in s.search("results methods abstract", k=50).evidence)


@pytest.mark.parametrize("q", ['title:foo AND (bar', '"unbalanced', "'; DROP TABLE papers; --", "a" * 10_000,
                               "cough\x00\x07 with ACE", "((()))", "NOT OR AND", "colorectal^3 cancer~2"])
def test_hostile_queries_never_traceback(lib: Library, q: str) -> None:
    try:
        res = Searcher(lib).search(q, k=3)
    except QueryError as exc:
        assert str(exc)
    else:
        assert isinstance(res.evidence, list)
    assert lib.store.stats()["papers"] == 3


def test_bad_arguments(lib: Library) -> None:
    with pytest.raises(QueryError):
        Searcher(lib).search("aspirin", section="bogus")
    with pytest.raises(QueryError):
        Searcher(lib).search("aspirin", method="nope")
    with pytest.raises(QueryError):
        Searcher(lib).search("   ")


def test_cli_search_json_contract(papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(papers_dir), "--json"]) == 0
    ingest = json.loads(capsys.readouterr().out)
    assert ingest["papers_added"] == 3 and ingest["errors"] == []
    assert main(["search", "(aspirin, reduce, colorectal cancer)", "--json", "--k", "3"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) >= {"query", "mode", "aspects", "results"}
    assert {"id", "label", "terms"} <= set(out["aspects"][0])
    r = out["results"][0]
    assert set(r) >= {"rank", "sentence_id", "paper_id", "title", "section", "text", "score", "highlights"}
    assert set(r["highlights"][0]) == {"aspect", "start", "end"}
    assert r["rank"] == 1 and len(out["results"]) <= 3


def test_cli_papers_stats_and_errors(papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["ingest", str(papers_dir), "--json"])
    capsys.readouterr()
    assert main(["papers", "--json"]) == 0
    papers = json.loads(capsys.readouterr().out)
    assert len(papers) == 3 and all(p["sentences"] > 0 for p in papers)
    assert main(["stats", "--json", "--check"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["papers"] == 3 and stats["consistency"]["consistent"] and stats["formats"] == {"text": 3}
    searchable = sum(n for k, n in stats["sections"].items())  # minus the headings, which have no vector
    assert stats["embedded"]["papers"] == [0, 3] and stats["embedded"]["sentences"][0] == 0
    assert 0 < stats["embedded"]["sentences"][1] <= searchable
    assert main(["embed", "--json"]) == 0
    capsys.readouterr()
    assert main(["stats", "--json"]) == 0
    embedded = json.loads(capsys.readouterr().out)["embedded"]
    assert embedded["papers"] == [3, 3] and embedded["sentences"][0] == embedded["sentences"][1]
    assert main(["stats"]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "3 of 3 papers' title + abstract" in printed and "adds the rest" not in printed
    assert main(["search", "", "--json"]) == 2
    assert "error" in json.loads(capsys.readouterr().out)
    # the human table renders too
    assert main(["search", "(aspirin, reduce, colorectal cancer)"]) == 0
    assert "aspirin" in capsys.readouterr().out.lower()


@pytest.mark.parametrize("columns", [80, 140])
def test_the_table_leaves_the_sentence_room_on_an_80_column_terminal(
        papers_dir: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["ingest", str(papers_dir), "--json"]) == 0
    capsys.readouterr()
    assert main(["search", "(aspirin, reduce, colorectal cancer)", "-k", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(x) for x in lines) <= columns
    header = next(x for x in lines if "sentence" in x)
    sentence_width = len(header.split("┃")[4])  # the fifth cell: #, score, aspects, sentence
    assert sentence_width >= (50 if columns == 80 else 70)
    assert ("paper · section" in header) == (columns >= 110)
    where = [x for x in lines[3:] if "file:" in x]  # each sentence's paper, beside it or under it
    assert len(where) >= 2 and all(("·" in x) == (columns < 110) for x in where)


def test_real_fixtures_end_to_end() -> None:
    """Every real sample format loads into one library, and real queries find the expected sentences."""
    core = Path(__file__).parents[1] / "fixtures" / "core"
    with Library(load_config()) as library:
        report = library.ingest([core])
        assert not report.errors and report.added == 15  # 1 JATS + 3 PubTator (2 shared with BioC) + 5 + 3 + 2 + 1 CORD
        assert library.check_consistency()["consistent"]
        s = Searcher(library)
        top = s.search("(lithium, cause, tricuspid regurgitation)", k=3).evidence[0]
        assert top.sentence.paper_id == "PMID:6794356"
        assert {h.aspect for h in top.highlights} >= {"head", "tail"}
        res = s.search("myeloid-derived suppressor cells induce myelodysplasia", k=3)
        assert res.evidence[0].sentence.paper_id == "scifact:5836"
        assert s.search("pancreatic cancer imaging", k=5, paper="PMC2852030").evidence


@pytest.mark.parametrize("method", ["dense", "hybrid"])
def test_dense_and_hybrid_methods(lib: Library, method: str) -> None:
    res = Searcher(lib).search("Does aspirin lower the risk of bowel cancer?", k=3, method=method)
    assert res.method == method and res.evidence
    assert "colorectal" in res.evidence[0].sentence.text.lower()
    assert [e.rank for e in res.evidence] == list(range(1, len(res.evidence) + 1))
    only = Searcher(lib).search("cough", k=5, method=method, section="results")
    assert all(e.sentence.section_kind == "results" for e in only.evidence)


@pytest.mark.parametrize("query,reordered", [("pancreatic cancer imaging", True), ("naloxone blood pressure", False)])
def test_the_table_says_why_a_lower_row_may_score_higher(capsys: pytest.CaptureFixture[str], query: str,
                                                         reordered: bool) -> None:
    with Library(load_config()) as library:
        library.ingest([Path(__file__).resolve().parents[1] / "fixtures" / "core"])
    assert main(["search", query, "--k", "8", "--json"]) == 0
    scores = [r["score"] for r in json.loads(capsys.readouterr().out)["results"]]
    assert any(b > a for a, b in zip(scores, scores[1:], strict=False)) == reordered  # coverage-aware selection
    assert main(["search", query, "--k", "8"]) == 0
    assert ("a lower row may score higher" in " ".join(capsys.readouterr().out.split())) == reordered
