"""Property tests on hostile input: the splitter, every loader, the query parser and search; plus a small
deterministic sample of the mutated-file corpus of benchmarks/fuzz_loaders.py, run end to end."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evtui.errors import EvtuiError, IngestError, QueryError
from evtui.ingest import FORMATS, INTERNAL_ERROR, iter_papers
from evtui.ingest.splitter import split_sentences
from evtui.library import Library
from evtui.models import ParsedPaper
from evtui.query import extract_abbreviations, find_spans, parse_query
from evtui.search import Searcher

# Each example gets a wall-clock budget: a loader or the splitter that turns quadratic fails the deadline.
FAST = settings(max_examples=120, deadline=2000, suppress_health_check=[HealthCheck.too_slow])


# -- the splitter ----------------------------------------------------------------------------------------------
_PROSE = st.lists(st.sampled_from(["Fig. 1", "E. coli", "et al.", "U.S.", "J. Smith", "(p < 0.05).", "i.e.",
                                   "Results.", "?", "!", "\n\n", "\r\n\r\n", " ", "\t", "3.5", "“Quoted.”", "α",
                                   "vs.", "No.", "A", "b", ".", "\u2028", "\x00"]), max_size=80).map(" ".join)


@FAST
@given(st.one_of(st.text(max_size=2000), _PROSE))
def test_splitter_keeps_every_word(text: str) -> None:
    out = split_sentences(text)
    assert all(s and s == s.strip() for s in out)
    # nothing lost, nothing invented: the sentences are the text's words, in order
    assert " ".join(out).split() == text.split()


def test_splitter_and_abbreviations_are_linear() -> None:
    # both were quadratic: 150k abbreviations took minutes, as did a sentence full of "(ABBR)" definitions
    t0 = time.perf_counter()
    assert len(split_sentences("Fig. A " * 150_000)) == 1
    found = extract_abbreviations(["the tumor necrosis factor (TNF) " * 20_000])
    assert found == {"TNF": "tumor necrosis factor"}
    assert time.perf_counter() - t0 < 10


# -- every loader on arbitrary content ---------------------------------------------------------------------------
def _run_loader(path: Path, fmt: str) -> list[ParsedPaper | IngestError]:
    out = list(iter_papers(path, fmt))
    for item in out:
        assert isinstance(item, ParsedPaper | IngestError)
        if isinstance(item, IngestError):
            assert item.path == str(path) and item.reason.strip()
            assert INTERNAL_ERROR not in item.reason, item.reason
        else:
            assert item.id and isinstance(item.title, str)
            assert item.year is None or 0 < item.year < 10_000
            for s in item.sentences:
                s.text.encode("utf-8")  # no lone surrogates reach the store
    return out


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["doc_id", "cord_id", "title", "abstract", "structured", "paper_id", "metadata", "authors",
                         "first", "last", "doi", "body_text", "text", "section", "pdf_parse", "paper_as_candidate_pool",
                         "sentence_types_in_candidate_pool", "x"]), inner, max_size=6),
    max_leaves=25)
_XML_TAGS = ["article", "front", "article-meta", "article-id", "title-group", "article-title", "body", "sec",
             "title", "p", "year", "pub-date", "license", "contrib", "name", "surname", "collection", "document",
             "id", "passage", "infon", "text", "abstract", "fig", "xref"]


@st.composite
def _xmlish(draw: Any) -> str:
    """Tag soup from the JATS and BioC vocabularies: often well-formed, often not."""
    parts: list[str] = []
    stack: list[str] = []
    for _ in range(draw(st.integers(0, 40))):
        op = draw(st.integers(0, 5))
        if op <= 1:
            tag = draw(st.sampled_from(_XML_TAGS))
            parts.append(f"<{tag}>")
            stack.append(tag)
        elif op == 2 and stack:
            parts.append(f"</{stack.pop()}>")
        elif op == 3:
            parts.append(draw(st.sampled_from(["&amp;", "&x;", "&#0;", "<!--c-->", "<![CDATA[x]]>", "<?pi?>",
                                               '<x a="1">', "&#xD800;", "2020", "</p>"])))
        else:
            parts.append(draw(st.text(max_size=20)).replace("<", " "))
    if draw(st.booleans()):
        parts += [f"</{t}>" for t in reversed(stack)]
    return "".join(parts)


_CONTENT = st.one_of(
    st.binary(max_size=3000),
    st.text(max_size=3000).map(lambda s: s.encode("utf-8", "surrogatepass")),
    _JSON.map(lambda v: json.dumps(v).encode()),
    st.lists(_JSON, max_size=5).map(lambda vs: "\n".join(json.dumps(v) for v in vs).encode()),
    _xmlish().map(lambda s: s.encode("utf-8", "surrogatepass")),
    st.lists(st.tuples(st.integers(0, 99999), st.sampled_from("tax"), st.text(max_size=40)), max_size=5).map(
        lambda rows: "\n".join(f"{i}|{k}|{t}" for i, k, t in rows).encode("utf-8", "surrogatepass")),
)


@pytest.fixture(scope="module")
def fuzz_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@FAST
@given(content=_CONTENT, ext=st.sampled_from([".xml", ".json", ".jsonl", ".txt", ".md", ".gz", ".bin"]),
       fmt=st.sampled_from(["auto", *FORMATS]))
def test_loaders_only_yield_papers_or_clear_errors(fuzz_dir: Path, content: bytes, ext: str, fmt: str) -> None:
    f = fuzz_dir / f"input{ext}"
    f.write_bytes(content)
    _run_loader(f, fmt)


@settings(max_examples=40, deadline=2000)
@given(_JSON)
def test_wrong_schema_json_in_every_json_loader(fuzz_dir: Path, value: object) -> None:
    for fmt in ("cord", "evidencebench", "corpus-jsonl"):
        f = fuzz_dir / "wrong.json"
        f.write_text(json.dumps({"paper_id": "p", "metadata": value, "body_text": value, "abstract": value,
                                 "item": {"paper_as_candidate_pool": ["A b."], "sentence_types_in_candidate_pool":
                                          value, "paper_id": value}, "doc_id": value}), encoding="utf-8")
        _run_loader(f, fmt)


# -- queries -----------------------------------------------------------------------------------------------------
_QUERY_BITS = st.sampled_from([
    "title:foo", "AND", "OR", "NOT", "(", ")", "[", "]", "{", "}", '"', "'", "*", "~2", "^3", "+", "-", ":", "\\",
    "|", ",", "aspirin", "colorectal cancer", "reduce", "IL-6", "TNF-α", "'; DROP TABLE papers; --", "\x00", "\x1b[31m",
    "\ud800", "😀", "may", "whether", "?", "sentence_id:*", "*:*", "[1 TO 2]", "%s", "{0}", "NULL", "\u202e"])
_QUERIES = st.one_of(st.text(max_size=300), st.lists(_QUERY_BITS, max_size=25).map(" ".join),
                     st.tuples(st.text(max_size=30), st.text(max_size=30), st.text(max_size=30)).map(
                         lambda t: f"({t[0]}, {t[1]}, {t[2]})"))


@FAST
@given(_QUERIES, st.sampled_from([None, "triplet", "claim", "hypothesis"]), st.text(max_size=200))
def test_query_parser_on_anything(text: str, mode: str | None, sentence: str) -> None:
    try:
        q = parse_query(text, mode)
    except QueryError as exc:
        assert str(exc)
        return
    assert q.aspects and all(a.terms for a in q.aspects)
    q.text.encode("utf-8")  # control characters and lone surrogates are gone
    for span in find_spans(sentence, q.aspects):
        assert 0 <= span.start < span.end <= len(sentence)


@pytest.fixture
def lib(papers_library: Library) -> Iterator[Library]:
    yield papers_library


def test_search_on_anything(lib: Library) -> None:
    searcher = Searcher(lib)
    before = lib.store.stats()

    @settings(max_examples=150, deadline=3000)
    @given(_QUERIES, st.sampled_from(["bm25", "bm25-coverage", "random"]))
    def check(text: str, method: str) -> None:
        try:
            res = searcher.search(text, k=3, method=method)
        except EvtuiError as exc:
            assert str(exc).strip()
            return
        json.dumps(res.to_json())
        for e in res.evidence:
            assert all(0 <= h.start < h.end <= len(e.sentence.text) for h in e.highlights)

    check()
    for q in ["a" * 10_000, "(" * 5000, "title:foo AND (bar OR", "'; DROP TABLE papers; --"]:
        try:
            searcher.search(q, k=3, method="bm25")
        except QueryError as exc:
            assert str(exc)
    assert lib.store.stats() == before  # a query never writes
