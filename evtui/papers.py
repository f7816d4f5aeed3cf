"""The paper-level channel: one Tantivy document per paper (title + abstract), for library-wide retrieval.

Sentence-level BM25 wants a claim's words together in one sentence; a claim is often spread over a paper's
abstract (the population in one sentence, the outcome in the next), which is why plain whole-abstract BM25 finds
SciFact's papers better than sentence BM25 does. This index scores papers as BM25 over the title and abstract,
and `best` uses it across the library (evtui/rank/pipeline.py: a paper prior added to each candidate's relevance,
and the top papers' sentences pulled into the pool). Within one paper it plays no part.

It is owned by `SentenceIndex` (evtui/index.py), which stages a paper document for every paper whose sentences it
adds and commits both indexes before the library marks papers ready, so the library's crash repair
(evtui/library/maintenance.py: re-index every 'pending' paper) covers it too. An old library without it is rebuilt
once on open, like a schema change; the version marker is written only after a commit, so a rebuild killed halfway
starts again.
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import tantivy

from evtui.models import Sentence

PAPER_SCHEMA_VERSION = "1"
MARKER = "evtui-paper-channel-version"
# A paper without a labelled abstract (a full text that starts with its introduction) is represented by its lead.
LEAD_SENTENCES = 10
MAX_QUERY_WORDS = 64


# The channel's text fields are not stored, so they are indexed from a rewritten text (`plain_text`) that the
# built-in whitespace and simple tokenizers cut into exactly the tokens the sentence index's regex tokenizers
# (evtui.index: TOKEN_PATTERN, and letter/digit runs) cut from the original, at a fraction of the cost (a regex
# tokenizer took ~60% of the channel's build). Same tokens, same filters: the index is the same, old ones included.
_JOINERS = "-'’"
_RUNS = tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(r"[\p{L}\p{N}]+")).build()  # the engine's own classes
# every ASCII character but letters, digits and joiners -> a space (as str.translate and bytes.translate tables)
_PLAIN: dict[int, str] = {c: " " for c in range(128) if not chr(c).isalnum() and chr(c) not in _JOINERS}
_PLAIN_BYTES = bytes(32 if c in _PLAIN else c for c in range(256))  # bytes >= 0x80 (UTF-8 sequences) kept
# the non-ASCII characters met so far, and those of them that are no letter or digit (as a character class)
_SEEN: set[str] = set()
_OTHERS: list[str] = []
_OTHER: re.Pattern[str] | None = None
# a joiner not between two letters/digits (after the translation: next to a space, another joiner or an end)
_STRAY = re.compile(r"[\-'’](?:(?<=[ \-'’][\-'’])|(?<=\A[\-'’])|(?=[ \-'’]|\Z))")


def plain_text(text: str) -> str:
    """`text` with every character that is not a letter or digit (by the engine's regex classes) a space, and
    every joiner (- ' ’) that does not join two of them a space: whitespace-cut it gives TOKEN_PATTERN's tokens,
    cut at every non-alphanumeric (the simple tokenizer) the letter/digit runs."""
    if text.isascii():
        return _STRAY.sub(" ", text.translate(_PLAIN))
    # in C throughout: str.translate of non-ASCII text looks each character up in a dict (3x slower)
    out = text.encode("utf-8", "surrogatepass").translate(_PLAIN_BYTES).decode("utf-8", "surrogatepass")
    other = _learn(text)
    return _STRAY.sub(" ", other.sub(" ", out) if other is not None else out)


def split_text(text: str) -> str:
    """`text` for the simple tokenizer to cut into the regex's letter/digit runs: only what Rust calls
    alphanumeric and the regex classes do not (marks such as U+0345, circled letters) needs to become a space."""
    if text.isascii():
        return text
    other = _learn(text)
    return other.sub(" ", text) if other is not None else text


def _learn(text: str) -> re.Pattern[str] | None:
    """The class of non-ASCII characters that are no letter or digit, with those of `text` (each asked of the
    engine's regex when first met)."""
    global _OTHER
    new = set(text) - _SEEN
    if new:
        for c in new:
            if ord(c) > 127 and c not in _JOINERS and (0xD800 <= ord(c) <= 0xDFFF or _RUNS.analyze(c) != [c]):
                _OTHERS.append(c)
        _SEEN.update(new)
        if _OTHERS:
            _OTHER = re.compile("[" + "".join(re.escape(c) for c in _OTHERS) + "]")
    return _OTHER


def plain_analyzers(sci_tokenizer: str, split_tokenizer: str) -> dict[str, tantivy.TextAnalyzer]:
    def built(tokenizer: tantivy.Tokenizer) -> tantivy.TextAnalyzer:  # the filters of evtui.index._analyzers
        return (tantivy.TextAnalyzerBuilder(tokenizer).filter(tantivy.Filter.remove_long(60))
                .filter(tantivy.Filter.lowercase()).filter(tantivy.Filter.stemmer("english")).build())

    return {sci_tokenizer: built(tantivy.Tokenizer.whitespace()), split_tokenizer: built(tantivy.Tokenizer.simple())}


def paper_index_path(sentence_index_path: Path) -> Path:
    return sentence_index_path.with_name(sentence_index_path.name + "-papers")


def _schema(sci_tokenizer: str, split_tokenizer: str) -> tantivy.Schema:
    b = tantivy.SchemaBuilder()
    b.add_text_field("paper_id", stored=True, tokenizer_name="raw")
    b.add_integer_field("year", stored=False, indexed=True, fast=True)
    b.add_text_field("text", stored=False, tokenizer_name=sci_tokenizer, index_option="freq")
    b.add_text_field("text_split", stored=False, tokenizer_name=split_tokenizer, index_option="freq")
    return b.build()


def in_abstract(s: Sentence) -> bool:
    # Structured abstracts label their parts (methods, results, ...) but keep the section title "Abstract".
    return s.section_kind == "abstract" or _abstract_title(s.section_title)


@lru_cache(maxsize=4096)
def _abstract_title(title: str) -> bool:  # a paper's few section titles, asked for each of its sentences
    return title.strip().lower() == "abstract"


@dataclass
class PaperText:
    """What represents a whole paper: its title and abstract, or its lead when it has no labelled abstract (the
    text both this index and the dense paper vectors of evtui/paper_vectors.py read)."""

    title: str
    year: int | None
    abstract: list[str] = field(default_factory=list)
    lead: list[str] = field(default_factory=list)

    def add(self, s: Sentence) -> None:
        """Take the paper's next sentence (in reading order)."""
        if s.is_heading:
            return
        if s.section_kind == "title":
            self.title = s.text  # the title as the paper's text has it (the metadata title may be empty)
        elif in_abstract(s):
            self.abstract.append(s.text)
        elif len(self.lead) < LEAD_SENTENCES:
            self.lead.append(s.text)

    def text(self) -> str:
        return " ".join([self.title, *(self.abstract or self.lead)]).strip()


class PaperIndex:
    """Title + abstract per paper. Writes are staged and reach Tantivy at `commit` (see the module doc).

    The sentence index that owns it names its two tokenizers (`tokenizers`: the whole-token and the
    hyphen-splitting one); documents and queries reach them as `plain_text`, so both indexes analyse text alike."""

    def __init__(self, path: Path, *, writable: bool, tokenizers: tuple[str, str]) -> None:
        self.path = path
        self.schema = _schema(*tokenizers)
        self.writable = writable
        marker = path / MARKER
        self.complete = marker.exists() and tantivy.Index.exists(str(path)) and (
            marker.read_text().strip() == PAPER_SCHEMA_VERSION)
        if writable and not self.complete and path.exists():
            shutil.rmtree(path)  # half-built or from another version: rebuilt from scratch
        self.ix: tantivy.Index | None = None
        if writable or self.complete:
            path.mkdir(parents=True, exist_ok=True)
            self.ix = tantivy.Index(self.schema, path=str(path), reuse=True)
            for name, analyzer in plain_analyzers(*tokenizers).items():
                self.ix.register_tokenizer(name, analyzer)
        self._writer: tantivy.IndexWriter | None = None
        self._staged: dict[str, PaperText] = {}
        self._deleted: list[str] = []
        self._delete_all = False
        # Papers whose document went to the writer since the last commit (see `write_staged`), kept to be
        # written whole again should more of their sentences come.
        self._written: dict[str, PaperText] = {}

    # -- writing (called by SentenceIndex) -------------------------------------------------------
    def claim_writer(self) -> tantivy.IndexWriter:
        if self.ix is None or not self.writable:
            raise RuntimeError("paper index opened read-only")
        if self._writer is None:
            self._writer = self.ix.writer(heap_size=50_000_000, num_threads=1)
        return self._writer

    def stage(self, s: Sentence, titles: dict[str, str], years: dict[str, int | None]) -> None:
        self.staged(s.paper_id, titles, years).add(s)

    def staged(self, paper_id: str, titles: dict[str, str], years: dict[str, int | None]) -> PaperText:
        """The staged text of `paper_id`, for its next sentences (SentenceIndex.add takes it once per paper)."""
        p = self._staged.get(paper_id)
        if p is None:
            p = self._written.pop(paper_id, None)
            if p is not None:  # more of a paper already written: its document is written anew, whole
                self._deleted.append(paper_id)
            else:
                p = PaperText(titles.get(paper_id, ""), years.get(paper_id))
            self._staged[paper_id] = p
        return p

    def delete_papers(self, paper_ids: Iterable[str]) -> None:
        for pid in paper_ids:
            self._staged.pop(pid, None)  # a delete follows what was staged before it, as in Tantivy
            self._written.pop(pid, None)
            self._deleted.append(pid)

    def write_staged(self) -> None:
        """Hand the staged deletes and paper documents to the writer now, in the order they were made, rather
        than at `commit`: its thread analyses them while the sentences are indexed instead of alone at the commit
        (SentenceIndex.add calls it as each paper is complete). Nothing is visible before the commit, a rollback
        drops them as it drops what is staged, and a delete still follows what came before it. After a
        `delete_all` everything waits for the commit, which deletes first."""
        if self._delete_all or self.ix is None or not self.writable or not (self._deleted or self._staged):
            return
        self._hand_over(self.claim_writer())

    def _hand_over(self, w: tantivy.IndexWriter) -> None:
        """The staged deletes, then the staged documents, to the writer; the papers written are kept (see
        `_written`) until the commit."""
        for pid in self._deleted:
            w.delete_documents_by_term("paper_id", pid)
        self._deleted.clear()
        for pid, p in self._staged.items():
            self._add(w, pid, p)
        self._written.update(self._staged)
        self._staged.clear()

    @staticmethod
    def _add(w: tantivy.IndexWriter, pid: str, p: PaperText) -> None:
        text = plain_text(p.text())
        doc: dict[str, object] = {"paper_id": pid, "text": text, "text_split": text}
        if p.year is not None:
            doc["year"] = p.year
        w.add_document(tantivy.Document(**doc))

    def delete_all(self) -> None:
        if self._written and self._writer is not None:
            self._writer.rollback()  # documents written since the commit go too, as staged ones do
        self._staged.clear()
        self._deleted.clear()
        self._written.clear()
        self._delete_all = True

    def commit(self) -> None:
        if self.ix is None or not self.writable:
            return
        w = self.claim_writer()
        if self._delete_all:
            w.delete_all_documents()
        self._hand_over(w)
        w.commit()
        self.ix.reload()
        self._written.clear()
        self._delete_all = False
        if not self.complete:
            (self.path / MARKER).write_text(PAPER_SCHEMA_VERSION)
            self.complete = True

    def rollback(self) -> None:
        self._staged.clear()
        self._deleted.clear()
        self._written.clear()
        self._delete_all = False
        if self._writer is not None:
            self._writer.rollback()

    def close(self) -> None:
        if self._writer is not None:
            try:
                self._writer.wait_merging_threads()
            except Exception:  # noqa: BLE001 - closing must never raise over a merge
                pass
            self._writer = None

    # -- reading ---------------------------------------------------------------------------------
    def num_docs(self) -> int:
        return int(self.ix.searcher().num_docs) if self.ix is not None else 0

    def paper_ids(self) -> list[str]:
        """Every indexed paper id (duplicates kept, so a consistency check can see them)."""
        if self.ix is None:
            return []
        searcher = self.ix.searcher()
        if searcher.num_docs == 0:
            return []
        res = searcher.search(tantivy.Query.all_query(), limit=searcher.num_docs, count=False)
        return [searcher.doc(addr).get_first("paper_id") for _s, addr in res.hits]

    def _phrase(self, text: str) -> tantivy.Query | None:
        if self.ix is None:
            return None
        cleaned = text.replace('"', " ").replace("\\", " ").strip()
        if not cleaned:
            return None
        try:
            return self.ix.parse_query(f'"{plain_text(cleaned)}"', ["text", "text_split"],
                                       {"text": 1.0, "text_split": 0.6})
        except ValueError:
            return None

    def search(self, words: Sequence[str], limit: int, *, year_from: int | None = None,
               year_to: int | None = None,
               alternatives: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, float]]:
        """(paper id, BM25) of the top `limit` papers for a bag of words; [] when the channel is not built.
        `alternatives` maps a word to other phrases for the same concept (a drug class's members, an
        abbreviation's expansion): the word's clause scores its best-matching form, so a trial of "pravastatin"
        answers "statins" without a paper naming three statins counting three times."""
        if self.ix is None or not self.complete or not words:
            return []
        clauses: list[tuple[tantivy.Occur, tantivy.Query]] = []
        for w in list(dict.fromkeys(words))[:MAX_QUERY_WORDS]:
            forms = [q for q in (self._phrase(f) for f in [w, *(alternatives or {}).get(w, ())]) if q is not None]
            if not forms:
                continue
            q = forms[0] if len(forms) == 1 else tantivy.Query.disjunction_max_query(forms[:MAX_QUERY_WORDS])
            clauses.append((tantivy.Occur.Should, q))
        if not clauses:
            return []
        query = tantivy.Query.boolean_query(clauses)
        if year_from is not None or year_to is not None:
            years = tantivy.Query.range_query(self.schema, "year", tantivy.FieldType.Integer, year_from, year_to)
            query = tantivy.Query.boolean_query([(tantivy.Occur.Must, query), (tantivy.Occur.Must, years)])
        searcher = self.ix.searcher()
        res = searcher.search(query, limit=limit, count=False)
        return [(searcher.doc(addr).get_first("paper_id"), float(score)) for score, addr in res.hits]
