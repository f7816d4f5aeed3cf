"""One paper, one entry: a PDF of a paper already stored from its JATS file (or the other way round) is not added
a second time under its DOI id; a metadata-only .bib entry gives way to the full text; benchmarks keep their ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main

ROOT = Path(__file__).resolve().parents[2]
JATS = ROOT / "data" / "demo" / "jats" / "PMC6398430.nxml"
PDF = ROOT / "tests" / "fixtures" / "pdf" / "PMC6398430.pdf"
DOI = "10.1093/beheco/ary157"


@pytest.fixture(autouse=True)
def _home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVTUI_HOME", str(tmp_path / "home"))


def _ingest(capsys: pytest.CaptureFixture[str], *paths: Path) -> dict:
    assert main(["ingest", *map(str, paths), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _papers(capsys: pytest.CaptureFixture[str]) -> list[dict]:
    assert main(["papers", "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_a_pdf_of_a_stored_jats_paper_is_not_added_again(capsys: pytest.CaptureFixture[str]) -> None:
    assert _ingest(capsys, JATS)["papers_added"] == 1
    second = _ingest(capsys, PDF)
    assert second["papers_added"] == 0 and second["papers_already_stored"] == 1 and not second["errors"]
    assert any("already in the library as PMC6398430" in n and DOI in n for n in second["notes"])
    assert [p["id"] for p in _papers(capsys)] == ["PMC6398430"]
    # the other way round: the JATS text replaces the PDF reading (test_a_jats_file_replaces_the_pdf_read_before_it)


def test_both_files_in_one_ingest_give_one_paper(capsys: pytest.CaptureFixture[str]) -> None:
    report = _ingest(capsys, JATS, PDF)
    assert (report["papers_added"], report["papers_already_stored"]) == (1, 1)
    assert len(_papers(capsys)) == 1
    assert main(["search", "crows", "--json"]) == 0
    hits = json.loads(capsys.readouterr().out)["results"]
    assert hits and {h["paper_id"] for h in hits} == {"PMC6398430"}  # no sentence twice


def test_a_jats_file_replaces_the_pdf_read_before_it(capsys: pytest.CaptureFixture[str]) -> None:
    assert _ingest(capsys, PDF)["papers_added"] == 1
    assert [p["id"] for p in _papers(capsys)] == [f"doi:{DOI}"]
    later = _ingest(capsys, JATS)
    assert (later["papers_added"], later["papers_already_stored"]) == (1, 0) and not later["errors"]
    assert [n for n in later["notes"] if "replaces the PDF reading" in n] == [
        f"{JATS}: the JATS text replaces the PDF reading of doi:{DOI} (same DOI {DOI}), stored as PMC6398430"]
    papers = _papers(capsys)
    assert [(p["id"], p["source_format"]) for p in papers] == [("PMC6398430", "jats")]
    assert main(["show", f"doi:{DOI}"]) != 0  # the PDF reading is gone, its sentences with it
    capsys.readouterr()
    assert main(["stats", "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["consistency"]["consistent"] is True
    # the PDF read again is that stored paper (the JATS text stays): remembered, skipped unread and quietly as
    # unchanged (it was parsed again, with the same note, on every run); the JATS file read again is unchanged
    again = _ingest(capsys, PDF)
    assert (again["papers_unchanged"], again["papers_already_stored"], again["notes"]) == (1, 0, [])
    assert _ingest(capsys, JATS)["papers_unchanged"] == 1
    assert [p["id"] for p in _papers(capsys)] == ["PMC6398430"]


def test_a_jats_file_after_its_pdf_in_one_run_is_the_one_kept(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(PDF, folder / "a-crows.pdf")  # read first: the folder is read in name order
    shutil.copy(JATS, folder / "b-crows.nxml")
    report = _ingest(capsys, folder)
    assert (report["papers_added"], report["papers_already_stored"]) == (1, 0)
    assert any("the JATS text replaces the PDF reading" in n for n in report["notes"])
    assert [p["id"] for p in _papers(capsys)] == ["PMC6398430"]


def test_a_metadata_only_entry_gives_way_to_the_full_text(tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text("@article{uhl2019, title = {Counting crows}, author = {Uhl, Florian}, year = {2019},\n"
                   f"  doi = {{{DOI}}}, abstract = {{Crows live in groups.}}}}\n", encoding="utf-8")
    assert _ingest(capsys, bib)["papers_added"] == 1
    full = _ingest(capsys, JATS)
    assert full["papers_added"] == 1 and any("metadata-only entry is removed" in n for n in full["notes"])
    assert [p["id"] for p in _papers(capsys)] == ["PMC6398430"]
    again = _ingest(capsys, bib)  # the .bib read again: its entry is already there, with its full text
    assert again["papers_already_stored"] == 1 and [p["id"] for p in _papers(capsys)] == ["PMC6398430"]


def test_a_benchmark_corpus_keeps_its_own_ids(tmp_path: Path) -> None:
    from evtui.config import Config
    from evtui.library import Library

    with Library(Config(home=tmp_path / "b", demo=False)) as lib:
        lib.ingest([JATS])
        report = lib.ingest([PDF], one_copy=False)
        assert report.added == 1 and report.same_paper == 0


def _bib_folder(tmp_path: Path) -> Path:
    import shutil

    folder = tmp_path / "refs"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "pdf" / "unlabelled-abstract.pdf", folder)  # a PDF with no DOI
    (folder / "refs.bib").write_text("@article{doe2020, title = {Aspirin lowers fever in adults: a trial},\n"
                                     "  author = {Doe, Jane}, year = {2020}, file = {unlabelled-abstract.pdf}}\n",
                                     encoding="utf-8")
    return folder


def test_a_pdf_beside_its_bib_entry_is_one_paper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = _bib_folder(tmp_path)
    first = _ingest(capsys, folder)  # the folder: the .bib entry and the PDF it links, read bare as well
    assert first["papers_added"] == 1 and first["papers_already_stored"] == 1
    assert [p["id"] for p in _papers(capsys)] == ["bib:doe2020"]  # the entry's title, author and year win
    again = _ingest(capsys, folder)  # the bare PDF, found to be the entry's paper, is skipped unread as unchanged
    assert again["papers_unchanged"] == 2 and again["papers_already_stored"] == 0 and again["notes"] == []


def test_the_bib_entry_replaces_the_bare_pdf_read_before_it(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    folder = _bib_folder(tmp_path)
    assert _ingest(capsys, folder / "unlabelled-abstract.pdf")["papers_added"] == 1
    assert _papers(capsys)[0]["id"].startswith("pdf:")
    later = _ingest(capsys, folder / "refs.bib")
    assert later["papers_added"] == 1 and any("the same file read bare" in n for n in later["notes"])
    papers = _papers(capsys)
    assert [p["id"] for p in papers] == ["bib:doe2020"] and papers[0]["year"] == 2020


def test_two_copies_of_a_pdf_without_a_doi_are_one_paper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    src = ROOT / "tests" / "fixtures" / "pdf" / "unlabelled-abstract.pdf"
    downloads = tmp_path / "Downloads"
    downloads.mkdir()
    shutil.copy(src, downloads / "aspirin.pdf")
    shutil.copy(src, downloads / "aspirin (1).pdf")  # the browser's second download of it
    report = _ingest(capsys, downloads)
    assert (report["papers_added"], report["papers_already_stored"]) == (1, 1)
    assert any("aspirin (1).pdf: not added: an identical copy of this PDF is already in the library" in n
               for n in report["notes"])
    assert [p["id"] for p in _papers(capsys)][0].startswith("pdf:aspirin-")  # the original name is kept
    # a third copy in another folder, ingested later, and then the .bib entry that links a copy
    other = tmp_path / "elsewhere"
    other.mkdir()
    shutil.copy(src, other / "trial.pdf")
    assert _ingest(capsys, other / "trial.pdf")["papers_already_stored"] == 1
    folder = _bib_folder(tmp_path)
    later = _ingest(capsys, folder / "refs.bib")
    assert later["papers_added"] == 1 and any("the same PDF read bare" in n for n in later["notes"])
    assert [p["id"] for p in _papers(capsys)] == ["bib:doe2020"]


def test_a_changed_pdf_under_another_name_is_another_paper(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    folder = tmp_path / "two"
    folder.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "pdf" / "unlabelled-abstract.pdf", folder / "a.pdf")
    data = (ROOT / "tests" / "fixtures" / "pdf" / "unlabelled-abstract.pdf").read_bytes()
    (folder / "b.pdf").write_bytes(data + b"\n%% another revision\n")  # one byte differs: not the same file
    report = _ingest(capsys, folder)
    assert (report["papers_added"], report["papers_already_stored"]) == (2, 0)


def test_a_preprint_and_its_published_version_are_both_kept_with_a_note(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    title = "Counting crows: population structure and group size variation in an urban population of crows"
    bib = tmp_path / "refs.bib"
    bib.write_text(f"@article{{uhl2018, title = {{{title}}}, author = {{Uhl, Florian}}, year = {{2018}},\n"
                   "  doi = {10.1101/123456}, abstract = {A preprint about crows.}}\n", encoding="utf-8")
    assert _ingest(capsys, bib)["papers_added"] == 1
    published = _ingest(capsys, JATS)  # another DOI, the same title (punctuation and case aside)
    assert published["papers_added"] == 1 and published["papers_already_stored"] == 0
    assert any("same title as doi:10.1101/123456" in n and "both kept" in n for n in published["notes"])
    assert len(_papers(capsys)) == 2
    assert _ingest(capsys, JATS)["notes"] == []  # read again: unchanged, no note


def test_short_titles_are_not_compared(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    refs = tmp_path / "refs.bib"
    refs.write_text("@article{a, title = {Editorial}, year = {2020}, doi = {10.1/a}, abstract = {One.}}\n"
                    "@article{b, title = {Editorial}, year = {2021}, doi = {10.1/b}, abstract = {Two.}}\n",
                    encoding="utf-8")
    report = _ingest(capsys, refs)
    assert report["papers_added"] == 2 and not any("same title" in n for n in report["notes"])


def test_a_copy_of_a_pdf_stored_before_digests_were_recorded_is_found(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    import shutil

    from evtui.config import Config
    from evtui.library import Library

    src = ROOT / "tests" / "fixtures" / "pdf" / "unlabelled-abstract.pdf"
    first, second = tmp_path / "a" / "trial.pdf", tmp_path / "b" / "trial-copy.pdf"
    for f in (first, second):
        f.parent.mkdir()
        shutil.copy(src, f)
    with Library(Config(home=tmp_path / "old", demo=False)) as lib:
        assert lib.ingest([first]).added == 1
        (pid, info), = lib.store.paper_infos().items()
        del info["file_sha256"]  # as an earlier evtui stored it
        lib.store.set_paper_info(pid, json.dumps(info))
        assert lib.store.pdfs_without_digest()[0][0] == pid
        report = lib.ingest([second])
        assert (report.added, report.same_paper) == (0, 1)
        assert lib.store.pdfs_without_digest() == []
