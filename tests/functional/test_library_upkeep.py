"""A library kept for months: folders with links in them (loops, links to other folders, dangling ones), files with
stray control characters, a corpus that repeats an id, and a draft moved and edited between two ingests."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.library import Library

BODY = ("Aspirin reduced colorectal cancer risk in the cohort. Statins lowered LDL cholesterol in adults. "
        "Vitamin D did not change fracture risk. Coffee drinkers slept less than tea drinkers.\n")


def _paper(path: Path, title: str, body: str = BODY) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"Title: {title}\nAuthors: Smith J\nYear: 2021\n\n{body}", encoding="utf-8")
    return path


def _titles(lib: Library) -> list[str]:
    return sorted(p.title for p in lib.store.papers())


def _consistent(lib: Library) -> None:
    check = lib.check_consistency()
    assert check["consistent"], check


def test_a_symlink_loop_is_reported_and_the_rest_is_read(tmp_path: Path) -> None:
    """A link to itself made Path.resolve() raise RuntimeError in discover(): the whole ingest died on a traceback."""
    folder = tmp_path / "papers"
    _paper(folder / "a.txt", "Aspirin and colorectal cancer in a cohort")
    os.symlink("self.txt", folder / "self.txt")
    os.symlink("/nonexistent/evtui/x.txt", folder / "gone.txt")
    with Library() as lib:
        report = lib.ingest([folder])
        assert report.added == 1
        reasons = {Path(e.path).name: e.reason for e in report.errors}
        assert "loop" in reasons["self.txt"]
        assert reasons["gone.txt"].startswith("broken symbolic link")
        _consistent(lib)
        named = lib.ingest([folder / "self.txt"])  # named on the command line: not "no such file or folder"
    assert [e.reason for e in named.errors] == [reasons["self.txt"]]


def test_a_linked_folder_is_read_once_and_a_link_back_up_makes_no_loop(tmp_path: Path) -> None:
    """rglob skipped linked folders without a word: a reading list of links to other folders ingested nothing."""
    elsewhere = tmp_path / "elsewhere"
    _paper(elsewhere / "b.txt", "Statins and LDL cholesterol in adults")
    top = tmp_path / "reading-list"
    _paper(top / "a.txt", "Aspirin and colorectal cancer in a cohort")
    os.symlink(elsewhere, top / "linked")
    os.symlink(top, top / "linked-again")  # back up to the folder itself
    os.symlink(top / "a.txt", top / "a-link.txt")  # the same file twice
    with Library() as lib:
        report = lib.ingest([top])
        assert not report.errors
        assert report.added == 2
        assert _titles(lib) == ["Aspirin and colorectal cancer in a cohort", "Statins and LDL cholesterol in adults"]
        paths = {p.title: p.source_path for p in lib.store.papers()}
        assert paths["Aspirin and colorectal cancer in a cohort"] == str(top / "a.txt")  # its own path, not the link


def test_an_unreadable_folder_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder the OS refuses to list was skipped in silence; it is one error line now (the refusal is simulated:
    the tests run as root, whom no permission stops)."""
    folder = tmp_path / "papers"
    _paper(folder / "a.txt", "Aspirin and colorectal cancer in a cohort")
    _paper(folder / "locked" / "b.txt", "Statins and LDL cholesterol in adults")
    real_scandir = os.scandir

    def scandir(path: object = ".") -> object:
        if Path(str(path)).name == "locked":
            raise PermissionError(13, "Permission denied", str(path))
        return real_scandir(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)
    with Library() as lib:
        report = lib.ingest([folder])
    assert report.added == 1
    assert [(Path(e.path).name, e.reason) for e in report.errors] == [("locked", "folder not read: Permission denied")]


def test_stray_nuls_are_removed_not_the_file(tmp_path: Path) -> None:
    """A text with a stray NUL was refused whole as "binary content"; a NUL from a JSON string ("\\u0000") reached
    the store, and from there every Markdown export, which grep and git then took for a binary file."""
    folder = tmp_path / "odd"
    folder.mkdir()
    (folder / "nul.txt").write_bytes(b"Title: Caffeine and sleep in adults\n\nCaffeine\x00 reduced sleep duration "
                                     b"in adults.\x00\n")
    (folder / "noise.txt").write_bytes(bytes(range(256)) * 8)  # binary all the same
    rows = [{"doc_id": 7, "title": "NUL\u0000 in a title", "abstract": ["Aspirin\u0000 reduced pain.", "\u0000"]}]
    (folder / "corpus.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Library() as lib:
        report = lib.ingest([folder])
        assert [(Path(e.path).name, e.reason) for e in report.errors] == [
            ("noise.txt", "not a text file (binary content)")]
        texts = [s.text for p in lib.store.papers() for s in lib.store.sentences_of([p.id])]
        assert "Caffeine reduced sleep duration in adults." in texts
        assert "Aspirin reduced pain." in texts
        assert not any("\x00" in t for t in texts)
        assert "NUL in a title" in _titles(lib)
        assert sum("NUL character(s) removed" in n for n in report.notes) == 2
        _consistent(lib)


def test_an_id_repeated_with_other_text_is_said(tmp_path: Path) -> None:
    """A corpus with a doc_id twice kept the first and dropped the second without a word."""
    rows = [{"doc_id": 1, "title": "First reading", "abstract": ["Aspirin reduced pain."]},
            {"doc_id": 1, "title": "Second reading", "abstract": ["Statins lowered LDL."]},
            {"doc_id": 2, "title": "Once", "abstract": ["Coffee shortened sleep."]},
            {"doc_id": 2, "title": "Once", "abstract": ["Coffee shortened sleep."]}]  # the same again: no news
    f = tmp_path / "corpus.jsonl"
    f.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    with Library() as lib:
        report = lib.ingest([f])
        assert report.added == 2 and _titles(lib) == ["First reading", "Once"]
    notes = [n for n in report.notes if "came again" in n]
    assert notes == ["1 paper id(s) came again in corpus.jsonl with other text: the first reading is kept, the "
                     "later one not stored (scifact:1)"]


def test_a_draft_moved_and_edited_replaces_its_earlier_version(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Moved to another folder and edited before the next ingest, a draft became a second paper beside its stale
    self (short title: no note either); the selection stayed on the stale one."""
    folder = tmp_path / "drafts"
    draft = _paper(folder / "draft.md", "Sleep notes")
    other = _paper(folder / "other.md", "Unrelated notes", "Mice ran faster on wheels. Rats slept longer.\n")
    assert main(["ingest", str(folder)]) == 0
    with Library() as lib:
        old_id = next(p.id for p in lib.store.papers() if p.title == "Sleep notes")
    assert main(["select", "aspirin colorectal cancer", "--paper", old_id, "--k", "1", "--no-judge"]) == 0
    moved = folder / "2024" / "draft-v2.md"
    moved.parent.mkdir()
    draft.rename(moved)
    with moved.open("a", encoding="utf-8") as fh:
        fh.write("Tea drinkers reported fewer awakenings.\n")
    other.unlink()
    _paper(folder / "new.md", "Unrelated notes", "Dogs barked at night. Cats ignored them.\n")  # another paper
    capsys.readouterr()
    assert main(["ingest", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["papers_added"], report["papers_replaced"]) == (1, 1)
    assert any("moved from" in n and "and edited" in n for n in report["notes"])
    with Library() as lib:
        papers = {p.id: p for p in lib.store.papers()}
        assert papers[old_id].source_path == str(moved)
        assert papers[old_id].n_sentences == 6  # title + the four sentences + the added one
        assert sorted(p.title for p in papers.values()) == ["Sleep notes", "Unrelated notes", "Unrelated notes"]
        selected = [r[0] for r in lib.store.con.execute("SELECT sentence_id FROM selections").fetchall()]
        assert len(selected) == 1 and selected[0].startswith(old_id + ":")
        text = lib.store.con.execute("SELECT text FROM sentences WHERE id = ?", selected).fetchone()
        assert text == ("Aspirin reduced colorectal cancer risk in the cohort.",)
        _consistent(lib)


ROOT = Path(__file__).resolve().parents[2]
JATS = ROOT / "data" / "demo" / "jats" / "PMC6398430.nxml"
PDF = ROOT / "tests" / "fixtures" / "pdf" / "PMC6398430.pdf"
DOI = "10.1093/beheco/ary157"


def _selection(lib: Library) -> list[tuple[str, str | None]]:
    """(sentence id, its text, None where it is no longer in the library) of every selected sentence, in order."""
    return [(r[0], r[1]) for r in lib.store.con.execute(
        "SELECT sel.sentence_id, s.text FROM selections sel LEFT JOIN sentences s ON s.id = sel.sentence_id"
        " ORDER BY sel.position").fetchall()]


@pytest.mark.parametrize("first", ["pdf", "bib"])
def test_selected_sentences_follow_a_paper_to_its_better_record(first: str, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """The JATS text replacing the PDF reading of its paper (or the full text replacing a metadata-only .bib entry)
    left the sentences selected from the old record as "(sentence no longer in the library)" in every export."""
    source = PDF
    if first == "bib":
        source = tmp_path / "refs.bib"
        source.write_text("@article{uhl2019, title = {Counting crows}, author = {Uhl, Florian}, year = {2019},\n"
                          f"  doi = {{{DOI}}}, abstract = {{The local flock size varied considerably over the year, "
                          "with fewest birds being present during the breeding season.}}\n", encoding="utf-8")
    assert main(["ingest", str(source)]) == 0
    with Library() as lib:
        (old_id,) = [p.id for p in lib.store.papers()]
    assert main(["select", "local flock size breeding season", "--paper", old_id, "--k", "1", "--no-judge"]) == 0
    with Library() as lib:
        before = _selection(lib)
    assert len(before) == 1 and "flock size varied" in str(before[0][1])
    capsys.readouterr()
    assert main(["ingest", str(JATS), "--json"]) == 0
    with Library() as lib:
        assert [p.id for p in lib.store.papers()] == ["PMC6398430"]
        assert _selection(lib) == [("PMC6398430:6", "The local flock size varied considerably over the year, with "
                                                    "fewest birds being present during the breeding season.")]
        _consistent(lib)


def test_a_file_name_that_is_not_utf8_is_not_moved_or_gone_on_every_run(tmp_path: Path) -> None:
    """A latin-1 name (an old archive's "café.txt") is stored with U+FFFD for the byte: every later ingest of its
    folder said it was "moved from" itself and that its file was no longer there."""
    folder = tmp_path / "old-archive"
    folder.mkdir()
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b"Title: Coffee and sleep in adults\n\nCoffee reduced sleep duration in adults.\n")
    with Library() as lib:
        assert lib.ingest([folder]).added == 1
        again = lib.ingest([folder])
    assert (again.added, again.replaced, again.unchanged, again.notes) == (0, 0, 1, [])


def test_figures_data_and_code_beside_the_papers_are_one_note(tmp_path: Path) -> None:
    """Every figure, script and spreadsheet in a papers folder was an error line of its own, "unknown format (use
    --format to say which)" (as if a --format could read a PNG), on every re-ingest; a Word manuscript was "not a
    text file (binary content)"."""
    folder = tmp_path / "project"
    _paper(folder / "paper.md", "Aspirin and colorectal cancer in a cohort")
    for i in range(3):
        (folder / "figures").mkdir(exist_ok=True)
        (folder / "figures" / f"fig{i}.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)))
    (folder / "analysis.py").write_text("print('hi')\n", encoding="utf-8")
    (folder / "manuscript.docx").write_bytes(b"PK\x03\x04" + bytes(range(256)) * 4)
    with Library() as lib:
        report = lib.ingest([folder])
        assert report.added == 1
        assert [(Path(e.path).name, e.reason) for e in report.errors] == [
            ("manuscript.docx", "a word-processor document (.docx), which evtui does not read: save it as PDF or "
                                "plain text and ingest that")]
        assert "not read: 4 file(s) of kinds that hold no paper (3 .png, 1 .py)" in report.notes
        named = lib.ingest([folder / "figures" / "fig0.png"])  # asked for by name: said what it is
    assert [e.reason.split(":")[0] for e in named.errors] == ["an image (.png), not a paper"]


def test_a_copy_of_a_text_under_another_name_is_one_paper(tmp_path: Path) -> None:
    """"notes (1).md" (a second download) or "notes copy.md" was a second paper of the same text, found twice by
    every search, where two copies of one PDF are one paper; deleting the original then keeps the copy's paper."""
    folder = tmp_path / "notes"
    original = _paper(folder / "notes.md", "Sleep notes")
    (folder / "notes (1).md").write_bytes(original.read_bytes())
    (folder / "old").mkdir()
    (folder / "old" / "notes copy.md").write_bytes(original.read_bytes())
    with Library() as lib:
        report = lib.ingest([folder])
        assert (report.added, report.same_paper) == (1, 2)
        (pid,) = [p.id for p in lib.store.papers()]
        assert pid.startswith("file:notes-")  # under the original name
        assert sum(f"an identical copy of this file is already in the library as {pid}" in n
                   for n in report.notes) == 2
        original.unlink()
        again = lib.ingest([folder])
        assert (again.added, again.same_paper) == (0, 1) and [p.id for p in lib.store.papers()] == [pid]
        assert lib.store.paper(pid).source_path == str(folder / "notes (1).md")  # moved to a copy's place
        _consistent(lib)
        with (folder / "old" / "notes copy.md").open("a", encoding="utf-8") as fh:
            fh.write("An edited copy is a paper of its own.\n")
        assert lib.ingest([folder]).added == 1
