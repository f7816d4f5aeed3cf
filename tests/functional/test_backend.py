"""The SearchBackend interface: Tantivy implements it, and it covers everything evtui uses of the index."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

from evtui.backend import BACKENDS, SearchBackend, open_backend
from evtui.config import Config, load_config
from evtui.errors import EvtuiError
from evtui.index import SentenceIndex
from evtui.library import Library
from evtui.search import Searcher, build_query

EVTUI = Path(__file__).parents[2] / "evtui"


def _protocol_members() -> set[str]:
    return {name for name in dir(SearchBackend) if not name.startswith("_")} | set(
        SearchBackend.__annotations__)


def _index_uses() -> dict[str, set[str]]:
    """Every `<x>.index.<name>` and `index.<name>` in evtui/ outside the index itself: name -> files."""
    uses: dict[str, set[str]] = {}
    for path in EVTUI.rglob("*.py"):
        if path in (EVTUI / "index.py", EVTUI / "backend.py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Attribute):
                continue
            v = node.value
            if (isinstance(v, ast.Attribute) and v.attr == "index") or (isinstance(v, ast.Name) and v.id == "index"):
                uses.setdefault(node.attr, set()).add(str(path.relative_to(EVTUI.parent)))
    return uses


def test_every_index_use_is_in_the_protocol() -> None:
    uses = _index_uses()
    # The scan finds the calls that matter (a scan that found nothing would prove nothing).
    assert {"add", "commit", "delete_papers", "search", "filter_query", "phrase_query", "sentence_ids"} <= set(uses)
    missing = {name: sorted(files) for name, files in uses.items() if name not in _protocol_members()}
    assert not missing, f"used on the index but not in SearchBackend (evtui/backend.py): {missing}"


def test_protocol_methods_exist_on_sentence_index_with_the_same_parameters() -> None:
    for name in _protocol_members():
        assert hasattr(SentenceIndex, name) or name in SearchBackend.__annotations__, name
        proto = getattr(SearchBackend, name, None)
        if inspect.isfunction(proto):
            impl = getattr(SentenceIndex, name)
            assert list(inspect.signature(proto).parameters) == list(inspect.signature(impl).parameters), name


def test_sentence_index_is_a_search_backend(tmp_path: Path) -> None:
    ix = SentenceIndex(tmp_path / "index")
    assert isinstance(ix, SearchBackend)
    ix.close()
    assert not isinstance(object(), SearchBackend)


def test_library_opens_its_index_through_the_factory(papers_library: Library) -> None:
    assert isinstance(papers_library.index, SearchBackend)
    assert type(papers_library.index) is SentenceIndex
    assert papers_library.config.search_backend == "tantivy"
    assert "SearchBackend" in str(inspect.signature(build_query).parameters["index"].annotation)
    res = Searcher(papers_library).search("(aspirin, reduce, colorectal cancer)", k=3, method="bm25")
    assert res.evidence and "aspirin" in res.evidence[0].sentence.text.lower()


def test_unknown_backend_is_a_clear_config_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVTUI_SEARCH_BACKEND", "elastic")
    cfg = load_config()
    assert cfg.search_backend == "elastic"
    with pytest.raises(EvtuiError, match="unknown search_backend 'elastic'.*tantivy"):
        open_backend(cfg)
    with pytest.raises(EvtuiError, match="search_backend"):
        Library(cfg)
    assert sorted(BACKENDS) == ["tantivy"]


def test_read_only_library_searches_beside_another_reader(papers_library: Library) -> None:
    home = papers_library.config.home
    n = papers_library.stats()["index_docs"]
    papers_library.close()  # DuckDB admits readers only once the writer is gone
    cfg = Config(home=home, demo=False)
    with Library(cfg, read_only=True) as a, Library(cfg, read_only=True) as b:
        assert a.index.num_docs() == b.index.num_docs() == n
        hits = Searcher(b).search("ACE inhibitors cause cough", k=2, method="bm25").evidence
        assert hits and "cough" in hits[0].sentence.text.lower()
        with pytest.raises(RuntimeError, match="read-only"):
            a.index.add([], {}, {})
    with pytest.raises(EvtuiError, match="no library"):
        Library(Config(home=home.parent / "nowhere", demo=False), read_only=True)
