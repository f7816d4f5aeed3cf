"""A folder's documentation is skipped by its whole name; a paper whose name merely starts like one is read.

The files an operating system or office suite leaves in a folder of papers are passed over without a word."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest import DOC_SKIPPED, discover


def test_documentation_is_skipped_by_whole_name_and_papers_named_alike_are_kept(tmp_path: Path) -> None:
    docs = ["README.md", "SOURCE.md", "LICENSE", "LICENSE-MIT", "CHANGELOG.txt"]
    papers = ["Source apportionment of PM2.5.pdf", "licensed_nurses.txt", "readme_study_notes.md",
              "changes in sleep.txt"]
    for name in docs + papers:
        (tmp_path / name).write_text("# T\n\nText.\n", encoding="utf-8")
    files, errors = discover([tmp_path])
    assert sorted(f.name for f in files) == sorted(papers)
    assert sorted(Path(e.path).name for e in errors) == sorted(docs)
    assert {e.reason for e in errors} == {"skipped: documentation file, not a paper"}


def test_system_files_are_passed_over_and_papers_named_alike_are_kept(tmp_path: Path) -> None:
    system = ["Thumbs.db", "desktop.ini", "ehthumbs.db", "~$draft.docx", ".~lock.notes.odt#"]
    papers = ["thumbs up for vaccines.txt", "desktop study.md", "draft.md"]
    for name in system + papers:
        (tmp_path / name).write_text("# T\n\nText.\n", encoding="utf-8")
    (tmp_path / "README.md").write_text("# Folder\n", encoding="utf-8")
    files, errors = discover([tmp_path])
    assert sorted(f.name for f in files) == sorted(papers)
    assert [(Path(e.path).name, e.reason) for e in errors] == [("README.md", DOC_SKIPPED)]
