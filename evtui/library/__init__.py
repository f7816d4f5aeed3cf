"""The Library: one data home holding the DuckDB store and the Tantivy index, kept in agreement.

Write protocol per batch of papers (so a SIGKILL anywhere leaves a repairable state):
  1. DuckDB transaction: replace the papers' rows, state = 'pending'
  2. Tantivy: delete the papers' old docs, add the new ones, commit (atomic)
  3. DuckDB: state = 'ready'
On open, `recover()` re-indexes every 'pending' paper from DuckDB and finishes every 'deleting' one.
Tantivy never holds a paper DuckDB lacks, because DuckDB is always written first and deleted last.

One class, `Library` (core.py: opening, closing, reading, embedding), made of parts with their own reasons to change,
each a mixin over the state they share (base.py: the state and the read-write windows):
  ingesting.py    files in: discovery, batches, the flush that decides what each paper is
  same_paper.py   recognising a paper already stored (the same file, identifier, PDF bytes, title)
  writing.py      a batch written by the protocol above, removals, selections settled on new versions
  maintenance.py  repair on open, consistency checks, the crash tests' audit
  identity.py     identifiers and content hashes of parsed papers (no Library state)
  report.py       IngestReport / IngestProgress, the ingest's `--json` shape
A test that patches a module-level name (BATCH_SENTENCES, open_backend) patches the module that reads it
(evtui.library.ingesting, evtui.library.core): they are not re-exported here, so a patch of this package fails loudly.
"""

from evtui.library.base import RW_WAIT
from evtui.library.core import Library
from evtui.library.identity import (
    MOVED_EDIT_KEPT,
    ONE_PAPER_FILES,
    TITLE_CHECKED,
    TITLE_KEY_MIN,
    content_hash,
    file_derived,
    from_reference,
    has_full_text,
    identity_keys,
    title_key,
)
from evtui.library.ingesting import INGEST_DB_MEMORY
from evtui.library.maintenance import INDEX_REBUILT, READS_CHECKED, audit
from evtui.library.report import IngestProgress, IngestReport
from evtui.library.writing import REVISED_SENTENCE

__all__ = [
    "INDEX_REBUILT",
    "INGEST_DB_MEMORY",
    "MOVED_EDIT_KEPT",
    "ONE_PAPER_FILES",
    "READS_CHECKED",
    "REVISED_SENTENCE",
    "RW_WAIT",
    "TITLE_CHECKED",
    "TITLE_KEY_MIN",
    "IngestProgress",
    "IngestReport",
    "Library",
    "audit",
    "content_hash",
    "file_derived",
    "from_reference",
    "has_full_text",
    "identity_keys",
    "title_key",
]
