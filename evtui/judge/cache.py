"""Judgments cached in the library's DuckDB, so re-running a sweep costs nothing.

Key: (judge, model, prompt version, query mode, query text, sentence id). The query's mode is part of the key
because the same words parsed as a triplet or a claim give the judge different aspects. A row also keeps a
hash of the sentence text it judged: a re-ingested paper whose sentence changed at that position is a miss.
Failed judgments are stored with their reason (a record of what went wrong) but never served as hits, so the
next run retries them. Nothing about the endpoint or its key is stored.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

import duckdb

from evtui.judge.base import Judgment
from evtui.models import Evidence, ParsedQuery

SCHEMA = """CREATE TABLE IF NOT EXISTS judgments (
    judge VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    prompt_version VARCHAR NOT NULL,
    query_mode VARCHAR NOT NULL,
    query VARCHAR NOT NULL,
    sentence_id VARCHAR NOT NULL,
    text_hash VARCHAR,
    score INTEGER,
    level INTEGER,
    confidence INTEGER,
    stance VARCHAR,
    aspects VARCHAR[],
    rationale VARCHAR,
    cost DOUBLE,
    tokens_in INTEGER,
    tokens_out INTEGER,
    status VARCHAR,
    error VARCHAR,
    notes VARCHAR[],
    lean VARCHAR,
    created_at TIMESTAMP DEFAULT current_timestamp,
    updated_at TIMESTAMP DEFAULT current_timestamp,
    PRIMARY KEY (judge, model, prompt_version, query_mode, query, sentence_id)
)"""

_COLUMNS = ("score", "level", "confidence", "stance", "aspects", "rationale", "cost", "tokens_in", "tokens_out",
            "status", "error", "notes", "lean")


def _has_lean(cur: duckdb.DuckDBPyConnection) -> bool:
    row = cur.execute("SELECT count(*) FROM information_schema.columns WHERE table_name = 'judgments'"
                      " AND column_name = 'lean'").fetchone()
    return bool(row and row[0])


def query_key(query: ParsedQuery) -> str:
    """The query text as the cache sees it: whitespace-normalised, case kept (case can carry meaning: ACE)."""
    return " ".join(query.text.split())


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:16]


class JudgmentCache:
    """Reads and writes go through a cursor of their own, so a worker thread may use the cache safely."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, writable: bool = True) -> None:
        self.con = con
        self._lean = False  # the table has its `lean` column (once it has, it keeps it): looked up until then
        if writable:  # a read-only library (a Ray worker) reads a table its driver created
            with con.cursor() as cur:
                # created only when missing: the app's library is read-only between its writes (Library.rw)
                if not cur.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'judgments'"
                                   ).fetchone()[0]:
                    cur.execute(SCHEMA)
                elif not _has_lean(cur):  # a cache from before leans were kept: one more column, rows kept
                    cur.execute("ALTER TABLE judgments ADD COLUMN lean VARCHAR")

    def _leans(self, cur: duckdb.DuckDBPyConnection) -> bool:
        """Whether the table keeps leans, asked of the catalogue only until it does (not at every lookup)."""
        self._lean = self._lean or _has_lean(cur)
        return self._lean

    def lookup(self, judge: str, model: str, prompt_version: str, query: ParsedQuery,
               evidence: Sequence[Evidence]) -> dict[str, Judgment]:
        """sentence id -> the stored ok judgment, for the evidence whose sentence text is unchanged."""
        if not evidence:
            return {}
        want = {e.sentence.id: text_hash(e.sentence.text) for e in evidence}
        with self.con.cursor() as cur:
            try:
                # a read-only library from before leans were kept has no such column: its rows lean nowhere
                cols = ", ".join(_COLUMNS if self._leans(cur) else (*_COLUMNS[:-1], "'' AS lean"))
                rows = cur.execute(
                    f"SELECT sentence_id, text_hash, {cols} FROM judgments"
                    " WHERE judge = ? AND model = ? AND prompt_version = ? AND query_mode = ? AND query = ?"
                    " AND status = 'ok' AND sentence_id IN (SELECT unnest(?))",
                    [judge, model, prompt_version, query.mode, query_key(query), list(want)]).fetchall()
            except duckdb.CatalogException:  # read-only, in a library that has never judged: nothing cached
                return {}
        hits: dict[str, Judgment] = {}
        for row in rows:
            sid, h, *values = row
            if want.get(sid) != h:
                continue
            v: dict[str, Any] = dict(zip(_COLUMNS, values, strict=True))
            hits[sid] = Judgment(
                sentence_id=sid, score=int(v["score"]), level=int(v["level"]), confidence=int(v["confidence"]),
                stance=v["stance"], aspects=list(v["aspects"] or []), rationale=v["rationale"] or "", judge=judge,
                model=model, prompt_version=prompt_version, cost=0.0, tokens_in=0, tokens_out=0, status="ok",
                error=None, cached=True, notes=[*list(v["notes"] or []), f"cached (first judged at ${v['cost'] or 0:.6f})"],
                lean=v["lean"] or "",
            )
        return hits

    def store(self, query: ParsedQuery, judgments: Iterable[Judgment], texts: dict[str, str]) -> int:
        """Upsert ok and failed judgments (skipped ones were never judged and are not stored)."""
        return self.insert_rows(self.rows(query, judgments, texts))

    @staticmethod
    def rows(query: ParsedQuery, judgments: Iterable[Judgment], texts: dict[str, str]) -> list[list[Any]]:
        """The table rows `store` writes (plain JSON-able values): a Ray worker sends them to its driver."""
        rows = []
        for j in judgments:
            if j.status not in ("ok", "failed") or j.cached:
                continue
            rows.append([j.judge, j.model, j.prompt_version, query.mode, query_key(query), j.sentence_id,
                         text_hash(texts.get(j.sentence_id, "")), j.score, j.level, j.confidence, j.stance,
                         list(j.aspects), j.rationale, float(j.cost), j.tokens_in, j.tokens_out, j.status, j.error,
                         list(j.notes), j.lean])
        return rows

    def insert_rows(self, rows: Sequence[Sequence[Any]]) -> int:
        if not rows:
            return 0
        cols = ("judge", "model", "prompt_version", "query_mode", "query", "sentence_id", "text_hash", *_COLUMNS)
        with self.con.cursor() as cur:
            if not self._leans(cur):  # a table from before leans were kept (its library opened read-only until now)
                cols, rows = cols[:-1], [r[:len(cols) - 1] for r in rows]
            updates = ", ".join(f"{c} = excluded.{c}" for c in cols[6:])
            cur.executemany(
                f"INSERT INTO judgments ({', '.join(cols)}) VALUES ({', '.join('?' for _ in cols)})"
                f" ON CONFLICT DO UPDATE SET {updates}, updated_at = now()", rows)
        return len(rows)

    def count(self, *, status: str | None = None) -> int:
        with self.con.cursor() as cur:
            if status is None:
                row = cur.execute("SELECT count(*) FROM judgments").fetchone()
            else:
                row = cur.execute("SELECT count(*) FROM judgments WHERE status = ?", [status]).fetchone()
        return int(row[0]) if row else 0
