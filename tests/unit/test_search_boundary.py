"""The search boundary (issue 17): one SearchRequest/Filters value from the CLI to the backend, a query tree that only
evtui/index.py compiles to Tantivy, Searcher.context/read for the detail pane and the reader, the local judge reusing
the search's ranker, one owner per table, and no import cycle among the storage modules."""

from __future__ import annotations

import argparse
import ast
from pathlib import Path

import pytest

from evtui.backend import build_query
from evtui.cli.flags import add_search_flags, search_request
from evtui.errors import EvtuiError, QueryError
from evtui.library import Library
from evtui.querytree import Bool, Boost, DisMax, Phrase, Range, Term, TermSet, must
from evtui.request import NO_FILTERS, Filters, SearchRequest
from evtui.search import Searcher

EVTUI = Path(__file__).parents[2] / "evtui"
STORAGE = ("library", "embed", "faults", "store", "index", "backend", "papers", "dense")
HYP = "(aspirin, reduce, colorectal cancer)"


def _imports(path: Path) -> set[str]:
    """Every evtui module a file imports, at any depth (inside functions and TYPE_CHECKING blocks too)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
    return out


def test_only_the_index_imports_tantivy() -> None:
    users = {p.relative_to(EVTUI).as_posix() for p in EVTUI.rglob("*.py") if "tantivy" in _imports(p)}
    # papers.py is the index's paper-level channel: SentenceIndex owns it and passes it its analysers.
    # query/terms.py takes its stems from the engine's Snowball English (the same stems as the index analyser's,
    # 16 times faster than the pure-Python stemmer); it imports tantivy for nothing else.
    assert users == {"index.py", "papers.py", "query/terms.py"}


def _module_imports(name: str) -> set[str]:
    """What a module imports, or a package (evtui/library/) in all its files."""
    files = sorted((EVTUI / name).rglob("*.py")) if (EVTUI / name).is_dir() else [EVTUI / f"{name}.py"]
    return set().union(*(_imports(f) for f in files))


def test_no_import_cycle_among_the_storage_modules() -> None:
    def names(imported: set[str], other: str) -> bool:
        return any(i == f"evtui.{other}" or i.startswith(f"evtui.{other}.") for i in imported)

    edges = {m: {o for o in STORAGE if o != m and names(_module_imports(m), o)} for m in STORAGE}
    assert {"store", "embed", "index"} <= edges["library"]  # the scan sees imports inside functions too

    def reaches(start: str, goal: str, seen: frozenset[str] = frozenset()) -> bool:
        return any(n == goal or (n not in seen and reaches(n, goal, seen | {n})) for n in edges[start])

    cycles = sorted(m for m in STORAGE if reaches(m, m))
    assert not cycles, f"storage modules on an import cycle: {cycles}"


def test_ranker_and_dense_run_no_sql_of_their_own() -> None:
    for rel in ("rank/pipeline.py", "dense.py"):
        calls = [n for n in ast.walk(ast.parse((EVTUI / rel).read_text(encoding="utf-8")))
                 if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "execute"]
        assert not calls, f"{rel} runs SQL (line {calls[0].lineno}); the table's owner should"


def test_filters_are_checked_with_clear_messages() -> None:
    with pytest.raises(QueryError, match="unknown section kind 'bogus'"):
        Filters(section="bogus").check_section()
    with pytest.raises(QueryError, match="year-to 100000 is not a year"):
        Filters(year_to=100_000).check_years()
    with pytest.raises(QueryError, match="k must be at least 1"):
        SearchRequest("x", k=0).check()
    assert Filters(year_from=2000).years_admit(2001) and not Filters(year_from=2000).years_admit(None)
    assert NO_FILTERS.years_admit(None)


def test_the_backend_compiles_the_query_tree(papers_library: Library) -> None:
    index = papers_library.index
    parsed = Searcher(papers_library).parse(HYP)
    tree, notes = build_query(index, parsed)
    assert isinstance(tree, Bool) and notes == []
    assert all(o == "should" and isinstance(n, DisMax) for o, n in tree.clauses)
    assert any(isinstance(p, Boost) for _o, n in tree.clauses for p in n.parts)  # type: ignore[union-attr]
    clauses = index.filter_query(Filters(paper="p", section="results", year_from=2000), papers=["a", "b"])
    assert clauses == [("must", Term("paper_id", "p")), ("must", TermSet("paper_id", ("a", "b"))),
                       ("must", Term("section_kind", "results")), ("must", Range("year", 2000, None)),
                       ("must_not", Term("heading", 1))]
    hits = index.search(must(tree, index.filter_query()), 5)
    assert hits and all(not h.sentence.is_heading for h in hits)
    pid = hits[0].sentence.paper_id
    scoped = index.search(must(tree, index.filter_query(Filters(paper=pid))), 50)
    assert scoped and {h.sentence.paper_id for h in scoped} == {pid}
    phrase, lenient = index.phrase_query(["colorectal", "cancer"])
    assert phrase == Phrase(("colorectal", "cancer"), False) and not lenient
    with pytest.raises(TypeError, match="not a query node"):
        index.search("aspirin", 5)  # type: ignore[arg-type]


def test_run_and_the_keyword_search_are_one_path(papers_library: Library) -> None:
    s = Searcher(papers_library)
    for method in ("bm25", "best"):
        a = s.search(HYP, k=5, method=method, section="results")
        b = s.run(SearchRequest(HYP, k=5, method=method, filters=Filters(section="results")))
        assert [e.sentence.id for e in a.evidence] == [e.sentence.id for e in b.evidence]
        assert [e.score for e in a.evidence] == [e.score for e in b.evidence]
        assert all(e.sentence.section_kind == "results" for e in b.evidence)
    assert s.run(SearchRequest(HYP, k=3)).method == "best"  # no method: the default


def _args(verb_k: int, *argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    p.add_argument("query", nargs="?")
    add_search_flags(p, k=verb_k, k_help="n")
    return p.parse_args(list(argv))


def test_the_cli_flags_make_one_request_for_every_verb(papers_library: Library) -> None:
    pid = papers_library.store.papers()[0].id
    argv = ("aspirin", "--paper", pid, "--section", "results", "--year-from", "1990", "--year-to", "2030",
            "--method", "bm25", "--results")
    requests = {verb_k: search_request(_args(verb_k, *argv), papers_library) for verb_k in (20, 5, 10)}
    assert {r.filters for r in requests.values()} == {Filters(pid, "results", 1990, 2030)}
    assert {(r.method, r.results, r.query) for r in requests.values()} == {("bm25", True, "aspirin")}
    assert search_request(_args(20, "aspirin"), papers_library).method == "best"
    with pytest.raises(EvtuiError, match="unknown paper 'nope'"):
        search_request(_args(20, "aspirin", "--paper", "nope"), papers_library)
    with pytest.raises(EvtuiError, match="--year-from 2010 is after --year-to 2000"):
        search_request(_args(20, "aspirin", "--year-from", "2010", "--year-to", "2000"), papers_library)


def test_context_and_read_go_through_the_searcher(papers_library: Library) -> None:
    s = Searcher(papers_library)
    e = s.search(HYP, k=1, method="bm25").evidence[0]
    ctx = s.context(e.sentence.id, window=1)
    assert ctx.paper is not None and ctx.paper.id == e.sentence.paper_id
    assert e.sentence.id in [x.id for x in ctx.sentences] and 1 < len(ctx.sentences) <= 3
    assert [x.position for x in ctx.sentences] == sorted(x.position for x in ctx.sentences)
    gone = s.context("no-such-sentence", paper_id=e.sentence.paper_id)
    assert gone.sentences == [] and gone.paper is not None  # the pane still names the paper
    assert s.context("no-such-sentence").paper is None
    whole = s.read(e.sentence.paper_id, store=papers_library.store.cursor())
    assert [x.id for x in whole.sentences] == [x.id for x in papers_library.store.sentences(e.sentence.paper_id)]


def test_the_local_judge_reuses_the_searchs_ranker_and_pools(papers_library: Library) -> None:
    from evtui.judge import make_judge
    from evtui.judge.local import LocalJudge

    s = Searcher(papers_library)
    first = s.search(HYP, k=5, method="bm25").evidence[0]
    paper = first.sentence.paper_id
    res = s.search(HYP, k=5, method="best", paper=paper)
    judge = make_judge(papers_library, "local", searcher=s)
    assert isinstance(judge, LocalJudge)
    assert judge.ranker.model is s.ranker.model and not judge.ranker.embed
    built = len(s.ranker._pools)
    assert built == 1
    shared = judge.judge(res.query, res.evidence)
    assert len(s.ranker._pools) == built  # the search's pool of that paper, not a rebuilt one
    fresh = LocalJudge(papers_library).judge(res.query, res.evidence)
    assert [(j.sentence_id, j.score, j.stance, j.rationale) for j in shared] == [
        (j.sentence_id, j.score, j.stance, j.rationale) for j in fresh]
