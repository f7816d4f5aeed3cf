"""The Tantivy full-text index over sentences.

Two analysed copies of each sentence: `text` keeps scientific tokens whole (IL-6, TNF-α, COVID-19, p53) and
`text_split` splits them at hyphens, so "IL 6" and "IL6"-style queries still find "IL-6" text. Both stem English.
Everything a result row needs is stored in the index, so a search never has to touch DuckDB.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import tantivy

from evtui.faults import crash_point
from evtui.models import Sentence
from evtui.papers import PaperIndex, paper_index_path, plain_analyzers, plain_text, split_text
from evtui.querytree import Bool, Boost, Clause, DisMax, Node, Phrase, Range, Term, TermSet
from evtui.request import NO_FILTERS, Filters

SCHEMA_VERSION = "1"
# Letters/digits joined by hyphens or apostrophes form one token: IL-6, TNF-α, COVID-19, Crohn's.
TOKEN_PATTERN = r"[\p{L}\p{N}]+(?:[-'’][\p{L}\p{N}]+)*"
# Where `text` (TOKEN_PATTERN) and `text_split` (letter/digit runs) tokenise a term differently.
JOINED = re.compile(r"[^\W_][-'’][^\W_]")
SCI_TOKENIZER = "sci_en"
SPLIT_TOKENIZER = "split_en"
PHRASE_CACHE = 4096  # compiled phrase queries kept per index (a search compiles each of its terms)
_OCCUR = {"must": tantivy.Occur.Must, "should": tantivy.Occur.Should, "must_not": tantivy.Occur.MustNot}


def _analyzers() -> dict[str, tantivy.TextAnalyzer]:
    sci = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(TOKEN_PATTERN))
        .filter(tantivy.Filter.remove_long(60))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )
    split = (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"[\p{L}\p{N}]+"))
        .filter(tantivy.Filter.remove_long(60))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )
    return {SCI_TOKENIZER: sci, SPLIT_TOKENIZER: split}


def build_schema() -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("sentence_id", stored=True, tokenizer_name="raw")
    b.add_text_field("paper_id", stored=True, tokenizer_name="raw")
    b.add_text_field("section_kind", stored=True, tokenizer_name="raw")
    b.add_text_field("section_title", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_text_field("title", stored=True, tokenizer_name="raw", index_option="basic")
    b.add_integer_field("position", stored=True, indexed=False)
    b.add_integer_field("heading", stored=True, indexed=True)
    b.add_integer_field("year", stored=True, indexed=True, fast=True)
    b.add_text_field("text", stored=True, tokenizer_name=SCI_TOKENIZER, index_option="position")
    b.add_text_field("text_split", stored=False, tokenizer_name=SPLIT_TOKENIZER, index_option="position")
    return b.build()


@dataclass(slots=True)
class Hit:
    """A raw index hit: the stored sentence plus its BM25 score."""

    score: float
    sentence: Sentence
    title: str
    year: int | None


class SentenceIndex:
    """Wraps one Tantivy index directory. One writer per process (Tantivy's own lock enforces it)."""

    def __init__(self, path: Path, *, writable: bool = True) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)
        marker = path / "evtui-schema-version"
        if tantivy.Index.exists(str(path)) and (not marker.exists() or marker.read_text().strip() != SCHEMA_VERSION):
            # An index from an older schema cannot be queried correctly; the library rebuilds it from DuckDB.
            self.rebuilt = True
            if writable:
                shutil.rmtree(path)
                path.mkdir(parents=True)
        else:
            self.rebuilt = not tantivy.Index.exists(str(path))
        self.schema = build_schema()
        self.index = tantivy.Index(self.schema, path=str(path), reuse=True)
        # `text` is stored, so it is analysed as it is; unstored `text_split` is indexed from split_text(text) by
        # the built-in simple tokenizer (the same tokens as the regex, at about half the cost), and every query
        # reaches both fields as plain_text, which both cut as they cut the text itself (evtui/papers.py)
        analyzers = {SCI_TOKENIZER: _analyzers()[SCI_TOKENIZER],
                     SPLIT_TOKENIZER: plain_analyzers(SCI_TOKENIZER, SPLIT_TOKENIZER)[SPLIT_TOKENIZER]}
        for name, analyzer in analyzers.items():
            self.index.register_tokenizer(name, analyzer)
        if writable:
            marker.write_text(SCHEMA_VERSION)
        self._writer: tantivy.IndexWriter | None = None
        self.writable = writable
        # The paper-level channel (evtui/papers.py) lives beside it and is written and committed with it.
        self.papers = PaperIndex(paper_index_path(path), writable=writable,
                                 tokenizers=(SCI_TOKENIZER, SPLIT_TOKENIZER))
        self._phrases: dict[tuple[str, bool], tuple[tantivy.Query, bool]] = {}
        if writable and not self.papers.complete:
            if self.num_docs():
                self.rebuilt = True  # a library from before the paper channel: the library re-indexes it once
            else:
                self.papers.commit()  # nothing indexed yet, so the (empty) channel is complete

    # -- writing ---------------------------------------------------------------------------------
    @property
    def writer(self) -> tantivy.IndexWriter:
        if not self.writable:
            raise RuntimeError("index opened read-only")
        if self._writer is None:
            self._writer = self.index.writer(heap_size=256_000_000, num_threads=2)
            self.papers.claim_writer()
        return self._writer

    def add(self, sentences: Iterable[Sentence], titles: dict[str, str], years: dict[str, int | None]) -> int:
        w = self.writer
        n = 0
        paper = None
        title, year, staged = "", None, None
        document = tantivy.Document
        for s in sentences:
            if s.paper_id != paper:  # the previous paper is complete: its paper document goes to its writer now
                self.papers.write_staged()
                paper = s.paper_id
                title, year = titles.get(paper, ""), years.get(paper)
                staged = self.papers.staged(paper, titles, years)
            doc = document(sentence_id=s.id, paper_id=paper, section_kind=s.section_kind,
                           section_title=s.section_title, title=title, position=s.position,
                           heading=1 if s.is_heading else 0, text=s.text, text_split=split_text(s.text))
            if year is not None:
                doc.add_integer("year", year)
            w.add_document(doc)
            staged.add(s)  # type: ignore[union-attr]
            n += 1
        self.papers.write_staged()
        return n

    def delete_papers(self, paper_ids: Iterable[str]) -> None:
        w = self.writer
        for pid in paper_ids:
            w.delete_documents_by_term("paper_id", pid)
            self.papers.delete_papers([pid])

    def delete_all(self) -> None:
        self.writer.delete_all_documents()
        self.papers.delete_all()

    def commit(self) -> None:
        if self._writer is not None:
            # Papers first: if that fails the sentence writes are rolled back with it; a crash between the two
            # commits leaves the papers 'pending', and the library's repair re-indexes them in both.
            self.papers.commit()
            crash_point("paper_commit")
            self._writer.commit()
            self.index.reload()

    def rollback(self) -> None:
        if self._writer is not None:
            self._writer.rollback()
            self.papers.rollback()

    def close(self) -> None:
        self.papers.close()
        if self._writer is not None:
            try:
                self._writer.wait_merging_threads()
            except Exception:  # noqa: BLE001 - closing must never raise over a merge
                pass
            self._writer = None

    # -- reading ---------------------------------------------------------------------------------
    def reload(self) -> None:
        self.index.reload()
        if self.papers.ix is not None:
            self.papers.ix.reload()

    def num_docs(self) -> int:
        return int(self.index.searcher().num_docs)

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.rglob("*") if p.is_file())

    def phrase_query(self, words: Sequence[str], *, fast: bool = False) -> tuple[Phrase, bool]:
        """A query for one term (a word or a multi-word phrase) over the text fields.

        Returns (query, lenient): `lenient` is True when the strict parser refused the input.
        `fast`: where both analysers cut the term alike (no IL-6-style joins), search `text_split` alone — it
        matches everything `text` would, and more ("aspirin" inside "aspirin-induced"), and walks half the
        postings (bm25 p95 at 10M sentences 201 -> 117 ms). Scores differ slightly from the two-field sum, which
        is what the `best` ranker's features were trained on, so `best` (and its training) keeps fast=False.
        """
        node = Phrase(tuple(words), fast)
        return node, self._phrase(node)[1]

    def _phrase(self, node: Phrase) -> tuple[tantivy.Query, bool]:
        cleaned = " ".join(w.replace('"', " ").replace("\\", " ") for w in node.words).strip()
        key = (cleaned, node.fast)
        hit = self._phrases.get(key)
        if hit is not None:
            return hit
        q = f'"{plain_text(cleaned)}"'
        if not node.fast or JOINED.search(cleaned):
            fields, boosts = ["text", "text_split"], {"text": 1.0, "text_split": 0.6}
        else:  # one field weighted as the two were together, so aspects keep their relative weight
            fields, boosts = ["text_split"], {"text_split": 1.6}
        try:
            out = self.index.parse_query(q, fields, boosts), False
        except ValueError:
            query, _errors = self.index.parse_query_lenient(q, fields)
            out = query, True
        if len(self._phrases) >= PHRASE_CACHE:
            self._phrases.clear()
        self._phrases[key] = out
        return out

    def filter_query(
        self,
        filters: Filters = NO_FILTERS,
        *,
        include_headings: bool = False,
        papers: Sequence[str] | None = None,
    ) -> list[Clause]:
        clauses: list[Clause] = []
        if filters.paper:
            clauses.append(("must", Term("paper_id", filters.paper)))
        if papers is not None:
            clauses.append(("must", TermSet("paper_id", tuple(papers))))
        if filters.section:
            clauses.append(("must", Term("section_kind", filters.section)))
        if filters.year_from is not None or filters.year_to is not None:
            clauses.append(("must", Range("year", filters.year_from, filters.year_to)))
        if not include_headings:
            clauses.append(("must_not", Term("heading", 1)))
        return clauses

    def compile(self, node: Node) -> tantivy.Query:
        """The Tantivy query for a query tree (evtui/querytree.py); nothing outside this module sees one."""
        if isinstance(node, Phrase):
            return self._phrase(node)[0]
        if isinstance(node, Bool):
            return tantivy.Query.boolean_query([(_OCCUR[o], self.compile(n)) for o, n in node.clauses])
        if isinstance(node, DisMax):
            return tantivy.Query.disjunction_max_query([self.compile(n) for n in node.parts], node.tie)
        if isinstance(node, Boost):
            return tantivy.Query.boost_query(self.compile(node.node), node.factor)
        if isinstance(node, Term):
            return tantivy.Query.term_query(self.schema, node.field, node.value)
        if isinstance(node, TermSet):
            return tantivy.Query.term_set_query(self.schema, node.field, list(node.values))
        if isinstance(node, Range):
            return tantivy.Query.range_query(self.schema, node.field, tantivy.FieldType.Integer, node.lo, node.hi)
        raise TypeError(f"not a query node: {node!r}")

    def paper_ids(self) -> list[str]:
        return self.papers.paper_ids()

    def paper_search(self, words: Sequence[str], limit: int, *, filters: Filters = NO_FILTERS,
                     alternatives: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, float]]:
        """(paper id, BM25 over title + abstract) of the top `limit` papers for a bag of words (evtui/papers.py);
        of the filters, only the years apply to a whole paper."""
        return self.papers.search(words, limit, year_from=filters.year_from, year_to=filters.year_to,
                                  alternatives=alternatives)

    def search(self, query: Node, limit: int) -> list[Hit]:
        searcher = self.index.searcher()
        result = searcher.search(self.compile(query), limit=limit, count=False)
        return [self._hit(searcher, float(score), addr) for score, addr in result.hits]

    def fetch(self, sentence_ids: Sequence[str]) -> dict[str, Hit]:
        """The indexed sentences with these ids (score 0), by id: a term lookup, where DuckDB would scan the
        whole sentences table for an unindexed id (seconds at 10M sentences)."""
        ids = list(dict.fromkeys(sentence_ids))
        if not ids:
            return {}
        searcher = self.index.searcher()
        query = tantivy.Query.term_set_query(self.schema, "sentence_id", ids)
        result = searcher.search(query, limit=len(ids), count=False)
        hits = (self._hit(searcher, 0.0, addr) for _score, addr in result.hits)
        return {h.sentence.id: h for h in hits}

    @staticmethod
    def _hit(searcher: tantivy.Searcher, score: float, addr: tantivy.DocAddress) -> Hit:
        d = searcher.doc(addr)
        year = d.get_first("year")
        return Hit(
            score=score,
            sentence=Sentence(
                id=d.get_first("sentence_id"),
                paper_id=d.get_first("paper_id"),
                position=int(d.get_first("position")),
                section_title=d.get_first("section_title") or "",
                section_kind=d.get_first("section_kind") or "other",
                is_heading=bool(d.get_first("heading")),
                text=d.get_first("text") or "",
            ),
            title=d.get_first("title") or "",
            year=int(year) if year is not None else None,
        )

    def sentence_ids(self, paper_id: str | None = None) -> set[str]:
        """Every indexed sentence id (for consistency checks; loads ids only)."""
        searcher = self.index.searcher()
        n = searcher.num_docs
        if n == 0:
            return set()
        query = (
            tantivy.Query.term_query(self.schema, "paper_id", paper_id) if paper_id else tantivy.Query.all_query()
        )
        result = searcher.search(query, limit=n, count=False)
        return {searcher.doc(addr).get_first("sentence_id") for _s, addr in result.hits}
