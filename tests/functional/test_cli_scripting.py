"""The CLI as a scripting tool: usage errors under --json are JSON, typos get a suggestion, a message on a piped
stderr is one line, a closed pipe is not an error report, and a failed `ingest --json` says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library


@pytest.fixture
def lib_home(papers_dir: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])


def _usage_error(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[str, str]:
    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2, argv
    captured = capsys.readouterr()
    return captured.out, captured.err


def test_usage_errors_with_json_are_one_json_document_and_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, said in (
            (["search", "aspirin", "--section", "reslts", "--json"], "did you mean 'results'?"),
            (["search", "aspirin", "--metod", "bm25", "--json"], "did you mean --method?"),
            (["bench", "evidencbench", "--json"], "did you mean 'evidencebench'?"),
            (["judge", "--json"], "required: query")):
        out, err = _usage_error(argv, capsys)
        assert said in json.loads(out)["error"], argv  # the whole of stdout is one JSON document
        assert len(err.splitlines()) == 1 and said in err, (argv, err)


def test_typos_in_verbs_and_flags_get_a_suggestion_and_the_verbs_usage(capsys: pytest.CaptureFixture[str]) -> None:
    out, err = _usage_error(["serach", "aspirin"], capsys)
    assert out == "" and "invalid choice: 'serach'" in err and "did you mean 'search'?" in err
    out, err = _usage_error(["search", "aspirin", "--jsn"], capsys)
    assert "did you mean --json?" in err
    assert err.startswith("usage: evtui search ")  # the verb's flags, not the top-level usage
    out, err = _usage_error(["search", "aspirin", "--zzzz"], capsys)
    assert "unrecognized arguments: --zzzz\n" in err  # nothing close: no guess


def test_an_error_on_a_piped_stderr_is_one_line(lib_home: None, capsys: pytest.CaptureFixture[str]) -> None:
    # Longer than Rich's 80 columns: it used to arrive as two lines, each half a sentence.
    assert main(["search", "aspirin", "--method", "nosuchmethod"]) == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "unknown method 'nosuchmethod'" in err and len(err) > 80, err


def test_a_reader_that_goes_away_is_not_an_error(lib_home: None) -> None:
    # `evtui papers | head -1`: stdout is a pipe nobody reads any more. Quiet, as Rich already is for the tables.
    for argv in (["papers"], ["show", "nosuchpaper", "--json"], ["papers", "--json"]):
        read, write = os.pipe()
        os.close(read)
        try:
            run = subprocess.run([sys.executable, "-m", "evtui.cli", *argv], stdout=write, stderr=subprocess.PIPE,
                                 text=True, timeout=120)
        finally:
            os.close(write)
        assert run.returncode == 1 and run.stderr == "", (argv, run.returncode, run.stderr)


def test_ingest_json_that_read_nothing_fails_with_an_error_key(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["ingest", str(tmp_path / "missing"), "--json"]) == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["errors"][0]["reason"] == "no such file or folder" and doc["papers_added"] == 0
    assert "nothing was ingested" in doc["error"] and len(captured.err.splitlines()) == 1


def test_ingest_summary_on_a_piped_stderr_is_one_line(papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = papers_dir / ("a-folder-with-a-long-name-" * 3)
    deep.mkdir()
    assert main(["ingest", str(papers_dir), str(deep / "missing.md")]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("3 added") and err[0].endswith("sentences/s)"), err
    assert err[1].startswith("✗ ") and err[1].endswith("missing.md: no such file or folder"), err


def test_bench_runs_csv_reports_where_it_wrote(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "runs", "--csv", str(tmp_path / "runs.csv")]) == 0
    assert capsys.readouterr().err == f"wrote 0 run(s) to {tmp_path / 'runs.csv'}\n"
