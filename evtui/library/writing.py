"""Writing a batch of papers by the protocol of evtui/library/__init__.py (DuckDB 'pending', Tantivy, 'ready'),
removing papers, and settling the selected sentences of replaced papers on their new versions."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from evtui.faults import crash_point
from evtui.library.base import LibraryBase
from evtui.library.report import IngestReport
from evtui.models import Paper, ParsedPaper, Sentence, sentence_id

# How similar (difflib ratio) a sentence of a paper's new version must be to a selected one of the old version for
# the selection to follow it as the same sentence revised ("by 30%" -> "by 45%"), not another sentence.
REVISED_SENTENCE = 0.75


class BatchWrites(LibraryBase):
    def _write_batch(
        self,
        batch: Sequence[tuple[ParsedPaper, str]],
        report: IngestReport,
        known: dict[str, str],
        extract_abbreviations: Callable[[Iterable[str]], dict[str, str]],
    ) -> None:
        papers: list[Paper] = []
        sentences: list[Sentence] = []
        abbrevs: list[tuple[str, str, str]] = []
        infos = [(p.id, json.dumps(p.info, ensure_ascii=False, default=str)) for p, _h in batch if p.info]
        for p, h in batch:
            sents = [
                Sentence(sentence_id(p.id, i), p.id, i, s.section_title, s.section_kind, s.is_heading, s.text)
                for i, s in enumerate(p.sentences)
            ]
            sentences.extend(sents)
            papers.append(Paper(
                id=p.id, title=p.title, authors=p.authors, year=p.year, journal=p.journal, doi=p.doi,
                pmid=p.pmid, pmcid=p.pmcid, licence=p.licence, source_path=p.source_path,
                source_format=p.source_format, content_hash=h, n_sentences=len(sents),
            ))
            with_parens = [s.text for s in p.sentences if "(" in s.text]
            if with_parens:
                abbrevs.extend((p.id, short, long) for short, long in extract_abbreviations(with_parens).items())
        ids = [p.id for p in papers]
        selected, selected_ids = self._selected_rows([pid for pid in ids if pid in known])
        # DuckDB's transaction runs in a thread (it releases the GIL) while Tantivy takes the documents;
        # the index is committed only after the rows are durable as 'pending', which keeps recovery exact.
        with ThreadPoolExecutor(max_workers=1) as pool:
            pending = pool.submit(self._writes().write_pending, papers, sentences, abbrevs, infos)
            self.index.delete_papers(pid for pid in ids if pid in known)
            self.index.add(sentences, {p.id: p.title for p in papers}, {p.id: p.year for p in papers})
            try:
                pending.result()
            except BaseException:
                self.index.rollback()
                raise
        crash_point("index_commit")
        self.index.commit()
        crash_point("mark_ready")
        self._writes().mark_ready(ids)
        if selected:
            self._settle_selections(selected, selected_ids, sentences, report)
        for stored in papers:
            if stored.id in known:
                report.replaced += 1
            else:
                report.added += 1
            report.stored.append(stored.id)
            known[stored.id] = stored.content_hash
        report.sentences += len(sentences)

    def _follow_to_winners(self, winner_of: Mapping[str, str], report: IngestReport) -> None:
        """Selected sentences of papers about to give way to a better record of the same paper (a PDF reading to its
        JATS text, a metadata-only entry to its full text) go to the same sentence of that paper, as those of a paper
        replaced under its own id do, instead of staying behind as "no longer in the library"."""
        rows, selected = self._selected_rows(list(winner_of))
        if not rows:
            return
        stored = {p for (p,) in self._writes().con.execute(
            "SELECT id FROM papers WHERE id IN (SELECT unnest(?))", [list(set(winner_of.values()))]).fetchall()}
        rows = [(*r[:9], winner_of[r[9]], *r[10:]) for r in rows if winner_of.get(r[9]) in stored]
        if rows:
            self._settle_selections(rows, selected, self._writes().sentences_of(list({r[9] for r in rows})), report)

    def _selected_rows(self, paper_ids: Sequence[str]) -> tuple[list[tuple[Any, ...]], set[tuple[str, str]]]:
        """The selection's rows on sentences of these stored papers, before they are replaced (every column, then
        the sentence's paper, text and position), and every selected item (sentence id, query)."""
        con = self._writes().con
        if not paper_ids or not con.execute(
                "SELECT 1 FROM duckdb_tables() WHERE table_name = 'selections'").fetchone():
            return [], set()
        rows = con.execute(
            "SELECT sel.sentence_id, sel.position, sel.query, sel.mode, sel.aspects, sel.highlights, sel.method,"
            " sel.score, sel.added_at, s.paper_id, s.text, s.position FROM selections sel JOIN sentences s"
            " ON s.id = sel.sentence_id WHERE s.paper_id IN (SELECT unnest(?)) ORDER BY sel.position",
            [list(paper_ids)]).fetchall()
        every = {(r[0], r[1]) for r in con.execute("SELECT sentence_id, query FROM selections").fetchall()
                 } if rows else set()
        return rows, every

    def _settle_selections(self, before: Sequence[tuple[Any, ...]], selected_before: set[tuple[str, str]],
                           sentences: Sequence[Sentence], report: IngestReport) -> None:
        """The selection of replaced papers, settled on their new versions: each selected sentence goes to the same
        text in the new version (the nearest by position), else to its revision (the most similar sentence, clearly
        the same one edited: its highlights dropped, their offsets were the old text's), else it leaves the
        selection, with a note, rather than quote whatever sentence now holds its old number. Store.write_pending
        moves the unchanged ones already, but one whose text changed kept its number there and could take the
        number another selected sentence moved to: the selection is redone here from the rows as they were. An item
        is (sentence, query): a sentence selected for two questions is settled once per question."""
        from difflib import SequenceMatcher

        by_paper: dict[str, list[Sentence]] = {}
        for s in sentences:
            by_paper.setdefault(s.paper_id, []).append(s)
        target: dict[int, tuple[str, bool]] = {}  # row -> (new id, same text)
        used: set[tuple[str, str]] = set()  # (new id, query): each question's items settle apart
        for i, row in enumerate(before):  # the same text first, so that no revision takes its place
            same = [s for s in by_paper.get(row[9], []) if s.text == row[10] and (s.id, row[2]) not in used]
            if same:
                best = min(same, key=lambda s: abs(s.position - row[11]))
                target[i] = (best.id, True)
                used.add((best.id, row[2]))
        for i, row in enumerate(before):
            if i in target:
                continue
            found, ratio = None, REVISED_SENTENCE
            for s in by_paper.get(row[9], []):
                if s.is_heading or (s.id, row[2]) in used:
                    continue
                m = SequenceMatcher(None, row[10], s.text, autojunk=False)
                if m.real_quick_ratio() >= ratio and m.quick_ratio() >= ratio and m.ratio() >= ratio:
                    found, ratio = s.id, m.ratio()
            if found is not None:
                target[i] = (found, False)
                used.add((found, row[2]))
        con = self._writes().con
        now = {(r[0], r[1]) for r in con.execute("SELECT sentence_id, query FROM selections").fetchall()}
        # the items as they were, and the store's moves
        stale = sorted({(row[0], row[2]) for row in before} | (now - selected_before))
        con.execute("BEGIN TRANSACTION")
        try:
            con.execute("DELETE FROM selections s USING (SELECT unnest(?) AS sid, unnest(?) AS q) d"
                        " WHERE s.sentence_id = d.sid AND s.query = d.q",
                        [[sid for sid, _ in stale], [q for _, q in stale]])
            for i, row in enumerate(before):
                if i in target:
                    new_id, same_text = target[i]
                    con.execute("INSERT OR REPLACE INTO selections (sentence_id, position, query, mode, aspects,"
                                " highlights, method, score, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                                [new_id, *row[1:5], row[5] if same_text else "[]", *row[6:9]])
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        dropped = [row[10] for i, row in enumerate(before) if i not in target]
        if dropped:
            quoted = "; ".join(f"“{t[:60]}{'…' if len(t) > 60 else ''}”" for t in dropped[:3])
            report.notes.append(f"{len(dropped)} selected sentence(s) are no longer in the new version of their paper "
                                f"and left the selection: {quoted}")

    def remove(self, paper_ids: Sequence[str]) -> int:
        with self._write_lock, self.rw():
            return self._remove(paper_ids)

    def _remove(self, paper_ids: Sequence[str]) -> int:
        present = [pid for pid in paper_ids if self._writes().paper(pid)]
        if not present:
            return 0
        self._writes().mark_deleting(present)
        self.index.delete_papers(present)
        self.index.commit()
        self._writes().delete_papers(present)
        return len(present)
