"""A folder's documentation is skipped by its whole name; a paper whose name merely starts like one is read."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest import discover


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
