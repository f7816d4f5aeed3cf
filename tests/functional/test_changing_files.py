"""A researcher's own files change over weeks: an edited draft, a PDF replaced by its published version, a moved
or deleted file, a README beside the papers. Each is read again through the real CLI (`evtui.cli.main`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library, audit

PDFS = Path(__file__).parents[1] / "fixtures" / "pdf"

DRAFT = """---
title: Metformin and hepatic gluconeogenesis in obese mice
authors: [Jane Roe]
year: 2025
doi: 10.5555/draft.1
---
# Abstract
Metformin reduced hepatic glucose output by 30% in obese mice.
The effect was mediated by AMPK activation in hepatocytes.

# Results
Fasting glucose fell from 180 to 120 mg/dL after four weeks of treatment.
"""


def _edit(path: Path) -> None:
    """A week's edits: a sentence added before the others, one revised, one deleted."""
    text = path.read_text(encoding="utf-8")
    text = text.replace("# Abstract\n", "# Abstract\nObesity raises hepatic glucose production in rodents.\n")
    text = text.replace("by 30%", "by 45%")
    text = text.replace("Fasting glucose fell from 180 to 120 mg/dL after four weeks of treatment.",
                        "Insulin levels were unchanged.")
    path.write_text(text, encoding="utf-8")


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    capsys.readouterr()
    assert main([*args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _papers() -> list[tuple[str, str, str]]:
    with Library(load_config()) as lib:
        return [(p.id, p.source_path, p.title) for p in lib.store.papers()]


def _texts(paper_id: str) -> list[str]:
    with Library(load_config()) as lib:
        return [s.text for s in lib.store.sentences(paper_id)]


def test_an_edited_markdown_draft_replaces_its_earlier_version(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    draft = folder / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    assert _json(capsys, "ingest", str(folder))["papers_added"] == 1
    [(pid, _path, _title)] = _papers()
    # three sentences selected: one the edit keeps, one it revises, one it deletes
    for q in ("(metformin, reduce, hepatic glucose output)", "AMPK activation in hepatocytes",
              "fasting glucose fell after four weeks"):
        assert main(["select", q, "--k", "1", "--no-judge", "--paper", pid]) == 0
    _edit(draft)
    report = _json(capsys, "ingest", str(folder))
    assert (report["papers_added"], report["papers_replaced"]) == (0, 1), report
    assert any("left the selection" in n and "Fasting glucose" in n for n in report["notes"]), report["notes"]
    assert [p[0] for p in _papers()] == [pid]  # one paper, under the id it always had
    texts = _texts(pid)
    assert "Insulin levels were unchanged." in texts and not any("Fasting" in t for t in texts)
    found = _json(capsys, "search", "hepatic glucose output obese mice", "--method", "bm25")["results"]
    assert any("by 45%" in r["text"] for r in found) and not any("by 30%" in r["text"] for r in found)
    assert _json(capsys, "stats", "--check")["consistency"]["consistent"]
    out = tmp_path / "e.jsonl"
    assert main(["export", "--out", str(out)]) == 0
    rows = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    # the kept sentence followed its text to its new number, the revised one its revision; nothing dangles
    assert sorted(r["text"] for r in rows) == ["Metformin reduced hepatic glucose output by 45% in obese mice.",
                                               "The effect was mediated by AMPK activation in hepatocytes."]
    with Library(load_config()) as lib:
        stored = {s.id: s.text for s in lib.store.sentences(pid)}
    assert all(stored[r["sentence_id"]] == r["text"] for r in rows)
    # read again unchanged (a touch included): nothing replaced
    os.utime(draft)
    again = _json(capsys, "ingest", str(folder))
    assert (again["papers_added"], again["papers_replaced"], again["papers_unchanged"]) == (0, 0, 1)


def test_two_files_of_identical_content_stay_one_paper_until_one_is_edited(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    plain = DRAFT.replace("doi: 10.5555/draft.1\n", "")  # with a DOI both would be one paper by its DOI
    (a / "draft.md").write_text(plain, encoding="utf-8")
    (b / "draft.md").write_text(plain, encoding="utf-8")
    assert _json(capsys, "ingest", str(a), str(b))["papers_added"] == 1
    _edit(a / "draft.md")
    _json(capsys, "ingest", str(a))
    _json(capsys, "ingest", str(b))  # b still holds the old text: a paper of its own now, not a's new version
    _json(capsys, "ingest", str(a), str(b))
    papers = _papers()
    assert len(papers) == 2
    texts = sorted(" ".join(_texts(pid)) for pid, _p, _t in papers)
    assert sum("by 45%" in t for t in texts) == 1 and sum("by 30%" in t for t in texts) == 1
    final = _json(capsys, "ingest", str(a), str(b))
    assert (final["papers_added"], final["papers_replaced"], final["papers_unchanged"]) == (0, 0, 2)
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]


def test_a_folders_readme_licence_and_system_files_are_no_errors(tmp_path: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "draft.md").write_text(DRAFT, encoding="utf-8")
    (folder / "README.md").write_text("# My papers\n\nDrafts for the thesis.\n", encoding="utf-8")
    (folder / "LICENSE").write_text("MIT\n", encoding="utf-8")
    (folder / "Thumbs.db").write_bytes(b"\xd0\xcf\x11\xe0" + b"\x00" * 60)
    (folder / "desktop.ini").write_text("[.ShellClassInfo]\n", encoding="utf-8")
    report = _json(capsys, "ingest", str(folder))
    assert report["errors"] == [] and report["papers_added"] == 1
    assert [n for n in report["notes"] if "documentation" in n] == [
        "not read as papers: 2 documentation file(s) (LICENSE, README.md)"]


def test_a_moved_file_keeps_its_paper_and_a_deleted_one_is_kept_with_a_note(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    (folder / "draft.md").write_text(DRAFT, encoding="utf-8")
    (folder / "other.md").write_text("# A second note\n\nStatins lower LDL cholesterol in adults.\n",
                                     encoding="utf-8")
    _json(capsys, "ingest", str(folder))
    ids = {pid for pid, _p, _t in _papers()}
    (folder / "2025").mkdir()
    (folder / "draft.md").rename(folder / "2025" / "metformin-draft.md")
    moved = _json(capsys, "ingest", str(folder))
    assert (moved["papers_added"], moved["papers_unchanged"]) == (0, 2), moved
    assert any("moved from" in n for n in moved["notes"])
    papers = {pid: path for pid, path, _t in _papers()}
    assert set(papers) == ids and any(p.endswith("metformin-draft.md") for p in papers.values())
    (folder / "other.md").unlink()
    gone = _json(capsys, "ingest", str(folder))
    assert {pid for pid, _p, _t in _papers()} == ids  # never deleted silently
    [note] = [n for n in gone["notes"] if "no longer have their file" in n]
    [other] = [pid for pid, path in papers.items() if path.endswith("other.md")]
    assert other in note


def test_a_pdf_replaced_in_place_by_its_published_version_is_read_again(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copy(PDFS / "unlabelled-abstract.pdf", folder / "paper.pdf")  # no DOI: its id comes from the path
    _json(capsys, "ingest", str(folder))
    [(pid, _p, old_title)] = _papers()
    shutil.copy(PDFS / "PMC2768302.pdf", folder / "paper.pdf")  # the new version, with a DOI
    report = _json(capsys, "ingest", str(folder))
    assert (report["papers_added"], report["papers_replaced"], report["papers_already_stored"]) == (0, 1, 0), report
    [(same, _p, title)] = _papers()
    assert same == pid and title != old_title
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]


def test_a_pdf_overwritten_by_another_paper_is_a_new_paper_and_the_old_one_is_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copy(PDFS / "PMC6398430.pdf", folder / "a.pdf")
    _json(capsys, "ingest", str(folder))
    [(crows, _p, _t)] = _papers()
    shutil.copy(PDFS / "PMC2768302.pdf", folder / "a.pdf")  # another paper (another DOI) under the same name
    report = _json(capsys, "ingest", str(folder))
    assert report["papers_added"] == 1 and any("now holds another paper" in n for n in report["notes"]), report
    assert {p[0] for p in _papers()} == {crows, "doi:10.1155/2008/369830"}
    # the crows PDF renamed, a PDF without a DOI saved under its old name: both read, neither taken for the other
    shutil.copy(PDFS / "PMC6398430.pdf", folder / "crows.pdf")
    shutil.copy(PDFS / "unlabelled-abstract.pdf", folder / "a.pdf")
    report = _json(capsys, "ingest", str(folder))
    assert report["papers_added"] == 1 and report["papers_already_stored"] == 0, report
    titles = {t for _i, _p, t in _papers()}
    assert "Aspirin lowers fever in adults: a trial" in titles and len(titles) == 3
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]


@pytest.mark.parametrize(("phase", "replaced"), [("db_write", False), ("index_commit", True), ("mark_ready", True)])
def test_a_crash_while_an_edited_draft_replaces_its_paper_keeps_one_whole_version(
        phase: str, replaced: bool, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "notes"
    folder.mkdir()
    draft = folder / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    _json(capsys, "ingest", str(folder))
    [(pid, _p, _t)] = _papers()
    _edit(draft)
    proc = subprocess.run([sys.executable, "-m", "evtui.cli", "ingest", str(folder)],
                          env=dict(os.environ, EVTUI_CRASH_AT=f"{phase}:1"), capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    with Library(load_config()) as lib:
        assert audit(lib)["ok"]
    assert [p[0] for p in _papers()] == [pid]
    text = " ".join(_texts(pid))
    assert ("by 45%" in text) == replaced and ("by 30%" in text) != replaced
    _json(capsys, "ingest", str(folder))
    assert [p[0] for p in _papers()] == [pid] and "by 45%" in " ".join(_texts(pid))


def _ingest_or_die_parsing(folder: Path) -> dict:
    """`evtui ingest --json` in a process killed at the first paper it parses: it lives only if it parses none."""
    proc = subprocess.run([sys.executable, "-m", "evtui.cli", "ingest", str(folder), "--json"],
                          env=dict(os.environ, EVTUI_CRASH_AT="parse:1"), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, (proc.returncode, proc.stderr)
    return json.loads(proc.stdout)


def test_a_touched_pdf_is_not_parsed_again_and_a_changed_one_is(tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "pdfs"
    folder.mkdir()
    shutil.copy(PDFS / "unlabelled-abstract.pdf", folder / "trial.pdf")
    _json(capsys, "ingest", str(folder))
    # a library stored before the reader's version was recorded: read once more, then known
    with Library(load_config()) as lib:
        (pid, info), = lib.store.paper_infos().items()
        info.pop("reader", None)
        lib.store.set_paper_info(pid, json.dumps(info))
    again = _json(capsys, "ingest", str(folder))
    assert (again["papers_replaced"], again["papers_unchanged"]) == (0, 1)
    os.utime(folder / "trial.pdf")
    report = _ingest_or_die_parsing(folder)
    assert (report["papers_added"], report["papers_replaced"], report["papers_unchanged"]) == (0, 0, 1)
    shutil.copy(PDFS / "PMC2768302.pdf", folder / "trial.pdf")  # new bytes: read again
    changed = _json(capsys, "ingest", str(folder))
    assert changed["papers_replaced"] == 1 and [p[0] for p in _papers()] == [pid]


def test_an_edited_draft_is_found_again_from_another_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes").mkdir()
    draft = tmp_path / "notes" / "draft.md"
    draft.write_text(DRAFT, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    _json(capsys, "ingest", "notes")  # relative, from the project folder
    [(pid, _p, _t)] = _papers()
    _edit(draft)
    monkeypatch.chdir(tmp_path / "notes")
    report = _json(capsys, "ingest", "draft.md")  # the file alone, from inside its folder
    assert (report["papers_added"], report["papers_replaced"]) == (0, 1)
    assert [p[0] for p in _papers()] == [pid]


def test_selected_sentences_survive_an_edit_that_deletes_one_before_them_and_revises_one(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    draft = tmp_path / "draft.md"
    draft.write_text("# Statins in adults\n\nStatins were well tolerated by most patients.\n"
                     "Atorvastatin lowered LDL cholesterol by 40% at twelve weeks.\n"
                     "Myalgia was reported by 5% of the treated patients.\n", encoding="utf-8")
    _json(capsys, "ingest", str(draft))
    [(pid, _p, _t)] = _papers()
    for q in ("atorvastatin lowered LDL cholesterol", "myalgia reported by treated patients"):
        assert main(["select", q, "--k", "1", "--no-judge", "--paper", pid]) == 0
    # the first sentence deleted (the unchanged one moves to the revised one's old number), the LDL one revised
    draft.write_text("# Statins in adults\n\nAtorvastatin lowered LDL cholesterol by 42% at twelve weeks.\n"
                     "Myalgia was reported by 5% of the treated patients.\n", encoding="utf-8")
    assert _json(capsys, "ingest", str(draft))["papers_replaced"] == 1
    out = tmp_path / "e.jsonl"
    assert main(["export", "--out", str(out)]) == 0
    texts = [json.loads(line)["text"] for line in out.read_text(encoding="utf-8").splitlines()]
    assert texts == ["Atorvastatin lowered LDL cholesterol by 42% at twelve weeks.",
                     "Myalgia was reported by 5% of the treated patients."]
