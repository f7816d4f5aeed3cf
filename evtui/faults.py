"""Opt-in fault injection for the crash tests, and the invariants they verify after a kill.

`EVTUI_CRASH_AT=<phase>:<n>` makes this process SIGKILL itself (a real kill: no cleanup, no flush, no
exception handler runs) the n-th time it reaches `crash_point(<phase>)`. Phases: parse (a paper parsed),
db_write (inside the DuckDB transaction of a batch, before COMMIT), index_commit (rows durable as 'pending',
before the Tantivy commit), paper_commit (the paper channel committed, the sentence index not yet), mark_ready
(index committed, before the papers turn 'ready'), recover (repair re-indexed, before its commit),
embed_batch (inside an embedding chunk's transaction), bench_item (a benchmark item stored).
`EVTUI_FAULT_TRACE=<file>` appends each phase change there, so a kill at a random moment can be told where it
landed. Unset (always, outside tests), `crash_point` is one dict lookup.
`EVTUI_BATCH_SENTENCES` lowers the ingest batch size, so a small corpus makes many batches and commits.
"""

from __future__ import annotations

import os
import signal
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evtui.library import Library

PHASES = ("parse", "db_write", "index_commit", "paper_commit", "mark_ready", "recover", "embed_batch", "bench_item")

_spec = os.environ.get("EVTUI_CRASH_AT", "")
_target, _, _nth = _spec.partition(":")
_at = int(_nth) if _nth.isdigit() else 1
_trace = os.environ.get("EVTUI_FAULT_TRACE")
_hits: dict[str, int] = {}
_last: list[str] = [""]


def crash_point(phase: str) -> None:
    if not _target and not _trace:
        return
    if _trace and _last[0] != phase:
        _last[0] = phase
        with open(_trace, "a", encoding="utf-8") as fh:
            fh.write(phase + "\n")
    if phase == _target:
        _hits[phase] = _hits.get(phase, 0) + 1
        if _hits[phase] == _at:
            os.kill(os.getpid(), signal.SIGKILL)


def batch_sentences(default: int) -> int:
    value = os.environ.get("EVTUI_BATCH_SENTENCES", "")
    return int(value) if value.isdigit() and int(value) > 0 else default


def audit(library: Library) -> dict[str, Any]:
    """Everything a crash must never leave behind, beyond `Library.check_consistency` (id sets agree, no
    unfinished paper): orphan rows, papers whose stored sentence count is wrong, duplicate ids on either side,
    duplicate embedding rows. `ok` is True only when all hold."""
    con = library.store.con
    check = library.check_consistency()

    def one(sql: str) -> int:
        row = con.execute(sql).fetchone()
        return int(row[0]) if row else 0

    ix_ids = library.index.sentence_ids()
    out: dict[str, Any] = {
        "consistent": bool(check["consistent"]),
        "unfinished_papers": len(check["unfinished_papers"]),  # type: ignore[arg-type]
        "db_sentences": check["db_sentences"],
        "index_docs": library.index.num_docs(),
        "orphan_sentences": one("SELECT count(*) FROM sentences s WHERE NOT EXISTS"
                                " (SELECT 1 FROM papers p WHERE p.id = s.paper_id)"),
        "orphan_abbreviations": one("SELECT count(*) FROM abbreviations a WHERE NOT EXISTS"
                                    " (SELECT 1 FROM papers p WHERE p.id = a.paper_id)"),
        "wrong_counts": one("SELECT count(*) FROM papers p WHERE n_sentences <>"
                            " (SELECT count(*) FROM sentences s WHERE s.paper_id = p.id)"),
        "duplicate_db_ids": one("SELECT count(*) - count(DISTINCT id) FROM sentences"),
        "duplicate_index_docs": library.index.num_docs() - len(ix_ids),
        "duplicate_positions": one("SELECT count(*) - count(DISTINCT (paper_id, position)) FROM sentences"),
    }
    # The paper-level channel (evtui/papers.py) holds exactly one document per ready paper.
    channel = library.index.paper_ids()
    ready = {r[0] for r in con.execute("SELECT id FROM papers WHERE state = 'ready'").fetchall()}
    out["paper_channel_mismatch"] = len(set(channel) ^ ready) + len(channel) - len(set(channel))
    has_embeddings = one("SELECT count(*) FROM information_schema.tables WHERE table_name = 'embeddings'")
    out["duplicate_embeddings"] = one(
        "SELECT count(*) - count(DISTINCT (sentence_id, model)) FROM embeddings") if has_embeddings else 0
    problems = [k for k, v in out.items() if k not in {"consistent", "db_sentences", "index_docs"} and v]
    out["ok"] = out["consistent"] and not problems
    out["problems"] = problems if out["consistent"] else ["inconsistent", *problems]
    return out
