"""Opt-in fault injection for the crash tests (the invariants they verify after a kill: `evtui.library.audit`).

`EVTUI_CRASH_AT=<phase>:<n>` makes this process SIGKILL itself (a real kill: no cleanup, no flush, no
exception handler runs) the n-th time it reaches `crash_point(<phase>)`. Phases: parse (a paper parsed),
db_write (inside the DuckDB transaction of a batch, before COMMIT), index_commit (rows durable as 'pending',
before the Tantivy commit), paper_commit (the paper channel committed, the sentence index not yet), mark_ready
(index committed, before the papers turn 'ready'), recover (repair re-indexed, before its commit),
embed_batch (inside an embedding chunk's transaction), paper_vectors (inside a paper-vector chunk's transaction),
bench_item (a benchmark item stored).
`EVTUI_FAULT_TRACE=<file>` appends each phase change there, so a kill at a random moment can be told where it
landed. Unset (always, outside tests), `crash_point` is one dict lookup.
`EVTUI_BATCH_SENTENCES` lowers the ingest batch size, so a small corpus makes many batches and commits.
"""

from __future__ import annotations

import os
import signal

PHASES = ("parse", "db_write", "index_commit", "paper_commit", "mark_ready", "recover", "embed_batch", "paper_vectors",
          "bench_item")

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
