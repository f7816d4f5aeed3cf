"""Keeping the store and the index in agreement: repair on open (what a crash or a damaged index left), papers an
earlier reader stored wrongly, the consistency check of `evtui stats --check`, and the crash tests' audit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from evtui.faults import crash_point
from evtui.library.base import LibraryBase

INDEX_REBUILT = "rebuilt it from the database"  # how the note on a damaged search index ends


# Reader fixes that leave papers stored before them wrong, checked once per library (Library._check_reads). Bump it
# with a new query when a reader is fixed again. 1: every JATS abstract was read twice (lxml's "{*}abstract" also
# matches the un-namespaced element, and the loader asked for both), so the same sentences sat under two ids.
READS_CHECKED = "1"
_DOUBLED_JATS_ABSTRACTS = """
    SELECT id, content_hash FROM papers WHERE state = 'ready' AND source_format = 'jats' AND id IN (
        SELECT paper_id FROM sentences
        WHERE section_kind = 'abstract' AND NOT is_heading
          AND paper_id IN (SELECT id FROM papers WHERE source_format = 'jats')
        GROUP BY paper_id, text HAVING count(*) > 1)
    ORDER BY id"""


def _inside(path: str, folder: str) -> bool:
    try:
        return Path(path).is_relative_to(folder)
    except (TypeError, ValueError):
        return False


class Maintenance(LibraryBase):
    # -- papers an earlier reader stored wrongly --------------------------------------------------
    def _check_reads(self) -> None:
        """Once per library (meta `reads_checked`), list the papers an earlier evtui read wrongly in meta
        `stale_reads` ({id: content hash}); a paper leaves the list once it is read again (its hash changes) or
        removed. Then a note says which are left, but for the bundled demo's, which ensure_demo reads again
        (evtui/demo.py). Every later open costs one meta read, and a look-up of the listed ids while any are left."""
        store = self.store  # shared (the app): read-only here; each write below switches it for a moment
        if store.get_meta("reads_checked") != READS_CHECKED:
            listed = {pid: h for pid, h in store.con.execute(_DOUBLED_JATS_ABSTRACTS).fetchall()}
            with self.rw(wait=1.0):
                store.set_meta("stale_reads", json.dumps(listed))
                store.set_meta("reads_checked", READS_CHECKED)
        listed = self._listed_stale()
        if not listed:
            return
        rows = self._stale_rows(listed)
        if len(rows) < len(listed):
            with self.rw(wait=1.0):
                store.set_meta("stale_reads", json.dumps({pid: h for pid, h, _path in rows}))
        demo = store.get_meta("demo_loaded") if self.config.demo else None
        own = [(pid, path) for pid, _h, path in rows if not (demo and _inside(path, demo))]
        if own:
            ids = ", ".join(pid for pid, _path in own[:3]) + (", …" if len(own) > 3 else "")
            self.notes.append(f"{len(own)} JATS paper(s) stored by an earlier evtui hold their abstract twice ({ids}): "
                              f"ingest their files again to correct them (evtui ingest {own[0][1] or 'FILE'}"
                              f"{' …' if len(own) > 1 else ''})")

    def _listed_stale(self) -> dict[str, str]:
        raw = self.store.get_meta("stale_reads")
        if not raw or raw == "{}":
            return {}
        try:
            listed = json.loads(raw)
        except ValueError:
            return {}
        return {str(k): str(v) for k, v in listed.items()} if isinstance(listed, dict) else {}

    def _stale_rows(self, listed: Mapping[str, str]) -> list[tuple[str, str, str]]:
        """(id, content hash, source path) of the listed papers still stored as the earlier reader read them."""
        rows = self.store.con.execute(
            "SELECT id, content_hash, source_path FROM papers WHERE state = 'ready' AND id IN (SELECT unnest(?))"
            " ORDER BY id", [list(listed)]).fetchall()
        return [(pid, h, path or "") for pid, h, path in rows if listed.get(pid) == h]

    def stale_reads(self) -> dict[str, str]:
        """id -> source path of the stored papers an earlier evtui read wrongly (a JATS paper with its abstract
        twice), still as it read them: ingesting their files again corrects them. {} on almost every open."""
        listed = self._listed_stale()
        return {pid: path for pid, _h, path in self._stale_rows(listed)} if listed else {}

    # -- consistency -----------------------------------------------------------------------------
    def recover(self) -> list[str]:
        """Finish whatever a crash interrupted. Returns the paper ids repaired."""
        with self._write_lock, self.rw():
            return self._recover()

    def _recover(self) -> list[str]:
        unfinished = self.store.unfinished()
        if not unfinished:
            return []
        pending = [pid for pid, st in unfinished if st == "pending"]
        deleting = [pid for pid, st in unfinished if st != "pending"]
        ids = pending + deleting
        self.index.delete_papers(ids)
        if pending:
            titles, years = self.store.titles_years(pending)
            self.index.add(self.store.sentences_of(pending), titles, years)
        crash_point("recover")
        self.index.commit()
        self.store.mark_ready(pending)
        if deleting:
            self.store.delete_papers(deleting)
        return ids

    def opening_notes(self) -> list[tuple[str, str]]:
        """What opening repaired or could not, for the CLI's stderr and the app's toasts, as (severity, text):
        a search index that was missing, half rebuilt (a killed command) or from another version was rebuilt from
        DuckDB, with how many sentences and how long (a search that took that long says why), then `notes`, a
        damaged index's with its size and time. A read-only library rebuilt nothing."""
        if self.read_only:
            return []
        rebuilt = self.reindexed
        out: list[tuple[str, str]] = []
        for note in self.notes:
            if rebuilt is not None and note.endswith(INDEX_REBUILT):  # its own note, and how long
                note = f"{note} ({rebuilt[0]:,} sentences, {rebuilt[1]:.1f}s)"
                rebuilt = None
            out.append(("warning", note))
        if rebuilt is not None:
            out.insert(0, ("information", f"rebuilt the search index from the database ({rebuilt[0]:,} sentences, "
                                          f"{rebuilt[1]:.1f}s): it was missing, incomplete or from another version"))
        return out

    def reindex_all(self) -> None:
        """Rebuild the whole index from DuckDB (after a schema change of the index)."""
        with self._write_lock, self.rw():
            self._reindex_all()

    def _reindex_all(self) -> None:
        # Marked in DuckDB until the rebuild's single commit: a rebuild killed half way (the damaged index was
        # already removed) is started again by the next open instead of leaving an index that silently lacks papers.
        self.store.set_meta("reindex_pending", "1")
        self.index.delete_all()
        papers = [p.id for p in self.store.papers()]
        for i in range(0, len(papers), 500):
            chunk = papers[i:i + 500]
            titles, years = self.store.titles_years(chunk)
            self.index.add(self.store.sentences_of(chunk), titles, years)
        self.index.commit()
        self.store.set_meta("reindex_pending", "0")

    def check_consistency(self) -> dict[str, object]:
        from evtui.repair import verify_database

        verify_database(self.store.con, self.config.home)  # every table read whole: damage is an EvtuiError
        found = self._consistency()
        if found["consistent"] or self.read_only:
            return {**found, "repaired": False}
        # The index is derived data and DuckDB the source of truth: an index restored from an older backup or
        # synced from another machine (sentences missing from searches, or removed papers still found) is rebuilt
        # from it, as the message for a damaged index promises, rather than only listed.
        self.recover()
        self.reindex_all()
        after = self._consistency()
        n_db, n_ix = len(found["only_in_db"]), len(found["only_in_index"])  # type: ignore[arg-type]
        self.notes.append(f"the search index disagreed with the database ({found['db_sentences']:,} sentences "
                          f"stored, {found['index_docs']:,} indexed; {n_db}{'+' if n_db == 20 else ''} missing, "
                          f"{n_ix}{'+' if n_ix == 20 else ''} extra): rebuilt it from the database")
        return {**after, "repaired": True, "before": found}

    def _consistency(self) -> dict[str, object]:
        db = self.store.all_sentence_ids()
        ix = self.index.sentence_ids()
        unfinished = self.store.unfinished()
        return {
            "consistent": db == ix and not unfinished,
            "db_sentences": len(db),
            "index_docs": len(ix),
            "only_in_db": sorted(db - ix)[:20],
            "only_in_index": sorted(ix - db)[:20],
            "unfinished_papers": unfinished,
        }


def audit(library: Maintenance) -> dict[str, Any]:
    """Everything a crash must never leave behind (the crash tests' check after a kill), beyond
    `Library.check_consistency` (id sets agree, no unfinished paper): orphan rows, papers whose stored sentence
    count is wrong, duplicate ids on either side, duplicate embedding or paper-vector rows, a paper channel out of step with the
    ready papers. `ok` is True only when all hold."""
    from evtui import paper_vectors
    from evtui.embed import duplicate_rows

    check = library.check_consistency()
    tables = library.store.integrity()
    ix_ids = library.index.sentence_ids()
    out: dict[str, Any] = {
        "consistent": bool(check["consistent"]),
        "unfinished_papers": len(check["unfinished_papers"]),  # type: ignore[arg-type]
        "db_sentences": check["db_sentences"],
        "index_docs": library.index.num_docs(),
        "orphan_sentences": tables["orphan_sentences"],
        "orphan_abbreviations": tables["orphan_abbreviations"],
        "wrong_counts": tables["wrong_counts"],
        "duplicate_db_ids": tables["duplicate_db_ids"],
        "duplicate_index_docs": library.index.num_docs() - len(ix_ids),
        "duplicate_positions": tables["duplicate_positions"],
    }
    # The paper-level channel (evtui/papers.py) holds exactly one document per ready paper.
    channel = library.index.paper_ids()
    out["paper_channel_mismatch"] = len(set(channel) ^ library.store.ready_ids()) + len(channel) - len(set(channel))
    out["duplicate_embeddings"] = duplicate_rows(library.store.con)
    out["duplicate_paper_vectors"] = paper_vectors.duplicate_rows(library.store.con)
    problems = [k for k, v in out.items() if k not in {"consistent", "db_sentences", "index_docs"} and v]
    out["ok"] = out["consistent"] and not problems
    out["problems"] = problems if out["consistent"] else ["inconsistent", *problems]
    return out
