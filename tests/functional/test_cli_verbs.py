"""The CLI as a researcher scripts it: each test is one problem found by using the verbs, fixed in
evtui/cli/ or evtui/config.py."""

from __future__ import annotations

import io
import json
import os
import select
import shutil
import socket
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from evtui.cli import core, main
from evtui.cli.papers import pager_shows_styles


def _json(capsys: pytest.CaptureFixture[str]) -> dict:
    return json.loads(capsys.readouterr().out)


def test_a_terminal_sees_no_demo_progress_bar_when_the_demo_is_already_in(
        small_demo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every verb opens the library through "Loading the demo library"; the bar was drawn (and erased) on each
    # command even though nothing was loaded, flashing that label in the terminal.
    monkeypatch.setenv("EVTUI_DEMO", "true")
    screen = io.StringIO()
    monkeypatch.setattr(core, "err", Console(file=screen, force_terminal=True, width=80, emoji=False))
    assert main(["stats"]) == 0
    assert "Loading the demo library" in screen.getvalue()  # the first run loads it: the bar is right there
    screen.seek(0)
    screen.truncate()
    assert main(["stats"]) == 0
    assert "Loading the demo library" not in screen.getvalue()


def test_papers_limit_past_the_database_integer_lists_every_paper(
        papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It failed with "the library's database failed: Conversion Error: Type INT128 ..."
    assert main(["papers", "--limit", "99999999999999999999", "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 3


def test_embed_of_an_unknown_paper_is_an_error(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # It reported "embedded 0 sentences" and exit 0 for a mistyped id.
    assert main(["embed", "--paper", "nope:1", "--json"]) == 2
    assert "unknown paper 'nope:1'" in _json(capsys)["error"]


def test_verify_refuses_out_without_claims_and_a_claim_with_claims(
        papers_ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `verify "claim" --out pred.jsonl` printed the verdict and wrote nothing; a claim beside --claims was dropped.
    out = tmp_path / "pred.jsonl"
    assert main(["verify", "aspirin reduces colorectal cancer", "--out", str(out), "--json"]) == 2
    assert "--out goes with --claims" in _json(capsys)["error"]
    assert not out.exists()
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"id": 1, "claim": "Aspirin reduces colorectal cancer."}\n', encoding="utf-8")
    assert main(["verify", "aspirin", "--claims", str(claims), "--out", str(out), "--json"]) == 2
    assert "not both" in _json(capsys)["error"]


def test_json_before_the_verb_works_and_its_usage_errors_are_json(
        papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `evtui --json search …` was refused: "unrecognized arguments: --json (did you mean --json?)"
    assert main(["--json", "search", "aspirin"]) == 0
    assert _json(capsys)["results"]
    with pytest.raises(SystemExit) as exc:
        main(["--json", "search"])
    assert exc.value.code == 2
    assert "required: query" in _json(capsys)["error"]
    with pytest.raises(SystemExit):
        main(["search", "aspirin", "--", "--json"])  # a flag word after "--": no "did you mean" itself
    assert "did you mean" not in capsys.readouterr().err


def test_a_config_path_that_is_a_folder_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    # It read "cannot use /path: Is a directory", naming neither the config nor the fix.
    monkeypatch.setenv("EVTUI_CONFIG", str(tmp_path))
    assert main(["stats", "--json"]) == 2
    assert _json(capsys)["error"] == (f"config file {tmp_path} is a folder: name the file itself, "
                                      f"e.g. {tmp_path / 'config.toml'}")


def test_an_empty_or_file_home_flag_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--home "$UNSET"` silently opened the default library; a file failed with "cannot create ...: File exists".
    assert main(["--home", "", "stats", "--json"]) == 2
    assert _json(capsys)["error"] == "--home must be a folder path, got ''"
    afile = tmp_path / "afile"
    afile.write_text("x", encoding="utf-8")
    assert main(["stats", "--home", str(afile), "--json"]) == 2
    assert _json(capsys)["error"] == f"--home must be a folder, but {afile} is a file"


def test_ingest_of_an_empty_folder_says_nothing_was_found(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["ingest", str(empty), "--json"]) == 0
    assert _json(capsys)["notes"] == [f"no paper files found in {empty}: nothing was ingested"]
    assert main(["ingest", "--collection", "Thesis"]) == 2  # the flag it lacks, not "give files or folders"
    assert "--collection needs --zotero" in capsys.readouterr().err


@pytest.mark.skipif(not hasattr(socket, "AF_UNIX"), reason="needs a unix socket")
def test_verify_claims_and_scifact_eval_check_their_input_files(
        papers_ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `verify --claims /dev/zero` (or a FIFO) read without end; `bench` verbs checked their files, these did not.
    sock_path = tmp_path / "s.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(sock_path))
        assert main(["verify", "--claims", str(sock_path), "--out", str(tmp_path / "p.jsonl"), "--json"]) == 2
        assert _json(capsys)["error"] == f"--claims {sock_path}: not a regular file (a device, FIFO or socket)"
        assert main(["bench", "scifact-eval", "--gold", str(sock_path), "--pred", "x", "--json"]) == 2
        assert _json(capsys)["error"] == f"--gold {sock_path}: not a regular file (a device, FIFO or socket)"


def test_the_papers_pager_is_told_to_draw_styles_or_gets_none() -> None:
    env: dict[str, str] = {}
    assert pager_shows_styles(env) and env == {"LESS": "FRX"}  # plain `less`, as Python's pager runs it
    assert not pager_shows_styles({"LESS": "-S"})  # the user's less without -R: no escape codes then
    assert pager_shows_styles({"LESS": "-SR"})
    assert pager_shows_styles({"PAGER": "less -R", "LESS": "-S"})
    assert pager_shows_styles({"PAGER": "most"})


@pytest.mark.skipif(shutil.which("less") is None or sys.platform == "win32", reason="needs less and a pty")
def test_papers_in_a_pager_shows_no_escape_codes(papers_ingested: Path) -> None:
    # On a terminal with no PAGER/LESS set, `evtui papers` showed its table in `less` as "ESC[1mid ESC[0m ...".
    import fcntl
    import pty
    import struct
    import termios

    env = {k: v for k, v in os.environ.items() if k not in ("PAGER", "MANPAGER", "LESS", "COLUMNS", "LINES")}
    env["TERM"] = "xterm-256color"
    argv = [sys.executable, "-c", "import sys; from evtui.cli import main; sys.exit(main(['papers']))"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: a terminal 2 rows high, so that the 3 papers need the pager
        try:
            fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", 2, 80, 0, 0))
            os.execvpe(argv[0], argv, env)
        finally:
            os._exit(127)  # never back into pytest
    shown = b""
    deadline = time.monotonic() + 120  # a guard against a hang only; nothing is timed
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.5)
        if not ready:
            os.write(fd, b" ")  # page on; at the end, quit
            if b"(END)" in shown or shown.rstrip().endswith(b":"):
                os.write(fd, b"q")
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    os.waitpid(pid, 0)
    assert b"Aspirin" in shown or b"Cough" in shown, shown[-2000:]
    assert b"ESC" not in shown, shown[-2000:]


def test_remove_with_an_unknown_id_says_so_under_json(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Exit 1 came with no "error" and nothing on stderr under --json: a script testing for "error" saw success.
    from evtui.config import load_config
    from evtui.library import Library

    with Library(load_config()) as lib:
        known = lib.store.papers(limit=1)[0].id
    assert main(["remove", known, "nope:1", "--json"]) == 1
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["removed"] == 1 and doc["missing"] == ["nope:1"] and "no paper nope:1" in doc["error"]
    assert captured.err.startswith("error: no paper nope:1") and len(captured.err.splitlines()) == 1


def test_dash_writes_runs_csv_and_predictions_to_stdout_not_a_file_named_dash(
        papers_ingested: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    # `bench runs --csv -` and `verify --claims … --out -` wrote a file called "-" in the current folder.
    monkeypatch.chdir(tmp_path)
    assert main(["bench", "runs", "--csv", "-"]) == 0
    captured = capsys.readouterr()
    assert captured.out.startswith("run_id,created_at,") and "standard output" in captured.err
    claims = tmp_path / "claims.jsonl"
    claims.write_text('{"id": 7, "claim": "Aspirin reduces colorectal cancer."}\n', encoding="utf-8")
    assert main(["verify", "--claims", str(claims), "--out", "-"]) == 0
    assert json.loads(capsys.readouterr().out)["id"] == 7
    assert not (tmp_path / "-").exists()
    assert main(["bench", "runs", "--csv", "-", "--items"]) == 2
    assert main(["verify", "--claims", str(claims), "--out", "-", "--json"]) == 2


def test_tui_without_a_terminal_refuses_in_one_line(papers_ingested: Path) -> None:
    # `evtui tui > log` (or from a script) wrote the app's escape codes into the file and waited for keys forever.
    import subprocess

    done = subprocess.run([sys.executable, "-c", "import sys; from evtui.cli import main; sys.exit(main(['tui']))"],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)  # a hang guard
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.startswith("error: `evtui tui` needs a terminal") and len(done.stderr.splitlines()) == 1
