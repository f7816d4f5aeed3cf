"""The CLI's precise messages, `papers` when piped, and one set of search flags for search/select/judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.cli import build_parser, main
from evtui.config import load_config
from evtui.library import Library


@pytest.fixture
def lib_home(papers_dir: Path) -> None:
    with Library(load_config()) as lib:
        lib.ingest([papers_dir])


def test_bad_input_gets_one_precise_line(lib_home: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["remove", "NOPE123"], "no paper NOPE123"),
        (["search", "aspirin", "--paper", "NOPE123"], "unknown paper 'NOPE123'"),
        (["select", "aspirin", "--paper", "NOPE123"], "unknown paper 'NOPE123'"),
        (["search", "aspirin", "--year-from", "2030", "--year-to", "2000"], "--year-from 2030 is after --year-to 2000"),
        (["bench", "evidencebench", "--data", str(tmp_path / "nope.json"), "--task", "er-10", "--method", "bm25"],
         "no such file"),
        (["bench", "evidencebench", "--data", str(tmp_path), "--task", "er-10", "--method", "foo"],
         "llm-rerank, llm-sbs"),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = " ".join(capsys.readouterr().err.split())
        assert message in err and "Traceback" not in err and "Errno" not in err, (argv, err)


def test_papers_piped_are_tab_separated_lines(lib_home: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["papers"]) == 0  # stdout is not a terminal under pytest
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("id\tyear\ttitle\tsentences\tsource") and len(lines) == 4
    assert len({line.count("\t") for line in lines}) == 1  # one cell per column on every line
    assert main(["papers", "--limit", "1"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_search_select_and_judge_share_the_search_flags() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "verb").choices  # type: ignore[union-attr]
    flags = {"--k", "--paper", "--section", "--mode", "--method", "--results", "--year-from", "--year-to"}
    for verb in ("search", "select", "judge"):
        have = {o for a in sub[verb]._actions for o in a.option_strings}
        assert flags <= have, (verb, flags - have)
        assert all(a.help for a in sub[verb]._actions if set(a.option_strings) & flags)
    assert "--json" not in {o for a in sub["tui"]._actions for o in a.option_strings}
    eb = sub["bench"]._actions[-1].choices["evidencebench"]  # type: ignore[index]
    assert eb.description and {"--limit", "--no-save"} <= {o for a in eb._actions for o in a.option_strings}


def test_bare_evtui_with_a_bad_config_is_one_line_not_a_traceback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('judge = "gpt"\n', encoding="utf-8")
    monkeypatch.setenv("EVTUI_CONFIG", str(cfg_file))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)  # a terminal: bare `evtui` opens the app
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    assert main([]) == 2
    err = capsys.readouterr().err
    assert "judge must be local or llm, got 'gpt'" in " ".join(err.split()) and "Traceback" not in err
