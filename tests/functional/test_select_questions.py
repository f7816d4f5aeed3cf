"""One sentence selected as evidence for two questions of a review. A selection item is (sentence, question): the
second question's `select` adds the hits the first question holds (and says which it skipped: those already selected
for the same question), the export lists the sentence under both questions (its paper once in BibTeX), deselecting
it for one question leaves it selected for the other, a re-ingest moves both items, and a library made before the
key changed is rekeyed on its first read-write open (a read-only one reads the old table as it is)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.export import Basket, to_bibtex, to_markdown
from evtui.library import Library
from evtui.models import Evidence, ParsedQuery

pytestmark = pytest.mark.usefixtures("papers_ingested")

TRIPLET = "(aspirin, reduce, colorectal cancer)"
CLAIM = "aspirin reduces colorectal cancer"
FLAGS = ["--k", "2", "--method", "bm25-coverage", "--no-judge"]

# The table as evtui made it before an item was (sentence, question).
OLD_DDL = """CREATE TABLE selections (sentence_id VARCHAR PRIMARY KEY, position INTEGER, query VARCHAR, mode VARCHAR,
    aspects VARCHAR, highlights VARCHAR, method VARCHAR, score DOUBLE, added_at TIMESTAMP DEFAULT current_timestamp)"""


def _select(query: str, capsys: pytest.CaptureFixture[str], *extra: str) -> dict[str, object]:
    assert main(["select", query, *FLAGS, "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def _keys(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """The selection's items, (sentence id, query), in basket order."""
    return [(r[0], r[1]) for r in con.execute("SELECT sentence_id, query FROM selections ORDER BY position").fetchall()]


def _items() -> list[tuple[str, str]]:
    with Library(load_config()) as lib:
        return _keys(lib.store.con)


def _pk(db: Path) -> list[str]:
    with duckdb.connect(str(db), read_only=True) as con:
        row = con.execute("SELECT constraint_column_names FROM duckdb_constraints() WHERE table_name = 'selections'"
                          " AND constraint_type = 'PRIMARY KEY'").fetchone()
    assert row is not None
    return list(row[0])


def test_a_second_question_selects_the_hits_the_first_holds(capsys: pytest.CaptureFixture[str]) -> None:
    first = _select(TRIPLET, capsys)
    assert len(first["added"]) == 2 and first["skipped"] == 0  # type: ignore[arg-type]
    second = _select(CLAIM, capsys)
    shared = set(first["added"]) & set(second["added"])  # type: ignore[arg-type]
    assert shared, "no hit selected for the triplet was added for the claim (or the two share no top hit)"
    assert len(second["added"]) == 2  # type: ignore[arg-type]
    assert second["skipped"] == 0 and len(second["selection"]) == 4  # type: ignore[arg-type]
    assert sorted(_items()) == sorted([(s, TRIPLET) for s in first["added"]]  # type: ignore[union-attr]
                                      + [(s, CLAIM) for s in second["added"]])  # type: ignore[union-attr]
    # the same question again: nothing new, and it says why
    assert main(["select", CLAIM, *FLAGS]) == 0
    err = capsys.readouterr().err
    assert "added 0, skipped 2 already selected for this question" in err
    again = _select(CLAIM, capsys)
    assert again["added"] == [] and again["skipped"] == 2


def test_the_export_lists_the_sentence_under_both_questions_and_its_paper_once(
        capsys: pytest.CaptureFixture[str]) -> None:
    first = _select(TRIPLET, capsys)
    second = _select(CLAIM, capsys)
    sid = sorted(set(first["added"]) & set(second["added"]))[0]  # type: ignore[arg-type]
    with Library(load_config()) as lib:
        items = Basket(lib).items()
    md = to_markdown(items)
    head, _, rest = md.partition("## aspirin reduces colorectal cancer")
    assert f"`{sid}`" in head and f"`{sid}`" in rest.split("## References")[0]
    bib = to_bibtex(items)
    papers = {it.paper.id for it in items if it.paper is not None}
    assert bib.count("\n@") + bib.startswith("@") == len(papers)


def test_deselecting_for_one_question_keeps_the_other(capsys: pytest.CaptureFixture[str]) -> None:
    first = _select(TRIPLET, capsys)
    sid = first["added"][0]  # type: ignore[index]
    with Library(load_config()) as lib:
        basket = Basket(lib)
        sentence = lib.store.sentences_of([sid.rsplit(":", 1)[0]])  # type: ignore[union-attr]
        s = next(x for x in sentence if x.id == sid)
        e = Evidence(rank=1, sentence=s, title="", score=1.0, highlights=[])
        claim = ParsedQuery(text=CLAIM, mode="claim", aspects=[])
        assert basket.toggle(e, claim, "bm25") is True  # selected for the claim too, not deselected
        assert (sid, TRIPLET) in _keys(lib.store.con) and (sid, CLAIM) in _keys(lib.store.con)
        assert basket.selected_for(CLAIM) == {sid}
        assert basket.toggle(e, claim, "bm25") is False  # off for the claim only
        assert (sid, TRIPLET) in _keys(lib.store.con) and (sid, CLAIM) not in _keys(lib.store.con)
        basket.toggle(e, claim, "bm25")
        basket.remove(sid, TRIPLET)  # the Export screen's x: this item only
        assert _keys(lib.store.con)[-1] == (sid, CLAIM) and (sid, TRIPLET) not in _keys(lib.store.con)


def test_a_reingested_paper_moves_both_items(papers_dir: Path) -> None:
    """A sentence selected for two questions, its paper edited (a sentence more before it: numbered anew): both
    items follow its text to its new id."""
    with Library(load_config()) as lib:
        (paper,) = [p for p in lib.store.papers() if "aspirin" in p.source_path]
        old = next(s for s in lib.store.sentences_of([paper.id]) if s.text.startswith("Regular aspirin"))
        basket = Basket(lib)
        for q in (TRIPLET, CLAIM):
            basket.add_row({"sentence_id": old.id, "query": q, "mode": "claim", "aspects": "[]",
                            "highlights": "[]", "method": "bm25", "score": 1.0})
    src = papers_dir / "aspirin.md"
    src.write_text(src.read_text(encoding="utf-8").replace(
        "## Abstract\n\n", "## Abstract\n\nA new opening sentence was added in the revision. ", 1), encoding="utf-8")
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])
        new = next(s for s in lib.store.sentences_of([paper.id]) if s.text == old.text)
        now = _keys(lib.store.con)
    assert new.id != old.id
    assert sorted(now) == sorted([(new.id, TRIPLET), (new.id, CLAIM)])


def _old_library(capsys: pytest.CaptureFixture[str]) -> tuple[Path, list[tuple[object, ...]]]:
    """The library with its selection in the table as the code before this change made it."""
    first = _select(TRIPLET, capsys)
    db = load_config().db_path
    with duckdb.connect(str(db)) as con:
        rows = con.execute("SELECT sentence_id, position, query, mode, aspects, highlights, method, score, added_at"
                           " FROM selections ORDER BY position").fetchall()
        con.execute("DROP TABLE selections")
        con.execute(OLD_DDL)
        con.executemany("INSERT INTO selections VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", rows)
    assert _pk(db) == ["sentence_id"] and len(rows) == len(first["added"])  # type: ignore[arg-type]
    return db, rows


def test_an_old_library_is_rekeyed_at_its_first_write_open(capsys: pytest.CaptureFixture[str]) -> None:
    db, rows = _old_library(capsys)
    with Library(load_config()) as lib:
        assert [tuple(r) for r in lib.store.con.execute(
            "SELECT sentence_id, position, query, mode, aspects, highlights, method, score, added_at"
            " FROM selections ORDER BY position").fetchall()] == rows  # every row and column kept
    assert _pk(db) == ["sentence_id", "query"]
    second = _select(CLAIM, capsys)  # and the second question's hits now go in beside the first's
    assert len(second["added"]) == 2 and len(_items()) == 4
    with duckdb.connect(str(db), read_only=True) as con:
        assert not con.execute("SELECT count(*) FROM duckdb_tables() WHERE table_name LIKE 'selections_%'"
                               ).fetchone()[0]


def test_a_read_only_old_library_reads_its_selection(capsys: pytest.CaptureFixture[str]) -> None:
    db, rows = _old_library(capsys)
    with Library(load_config(), read_only=True) as lib:
        basket = Basket(lib)
        items = basket.items()
        assert basket.selected_for(TRIPLET) == {r[0] for r in rows} and basket.selected_for(CLAIM) == set()
    assert [it.sentence_id for it in items] == [r[0] for r in rows] and all(it.query == TRIPLET for it in items)
    assert _pk(db) == ["sentence_id"]  # a read-only open leaves the file as it was
