from __future__ import annotations

from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.errors import EvtuiError


def test_defaults_env_and_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg_file = tmp_path / "config.toml"
    cfg_file.write_text('k = 7\ndemo = true\nhome = "~/somewhere"\n')
    monkeypatch.setenv("EVTUI_CONFIG", str(cfg_file))
    monkeypatch.delenv("EVTUI_HOME")
    monkeypatch.delenv("EVTUI_DEMO")
    cfg = load_config()
    assert cfg.k == 7 and cfg.demo is True and cfg.home == Path("~/somewhere").expanduser()
    monkeypatch.setenv("EVTUI_K", "11")
    monkeypatch.setenv("EVTUI_HOME", str(tmp_path / "h"))
    cfg = load_config()
    assert cfg.k == 11 and cfg.db_path == tmp_path / "h" / "library.duckdb"


def test_bad_config_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "config.toml"
    bad.write_text("k = [unclosed")
    monkeypatch.setenv("EVTUI_CONFIG", str(bad))
    with pytest.raises(EvtuiError, match="not valid TOML"):
        load_config()
    monkeypatch.setenv("EVTUI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EVTUI_K", "many")
    with pytest.raises(EvtuiError, match="integer"):
        load_config()


def test_an_empty_variable_means_unset(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("EVTUI_HOME", "")
    monkeypatch.setenv("EVTUI_CONFIG", str(tmp_path / "none.toml"))
    assert load_config().home != Path("")
    assert str(load_config().home) not in ("", ".")


def test_a_bad_judge_names_the_value_the_choices_and_the_file(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    cfg_file = tmp_path / "j.toml"
    cfg_file.write_text('judge = "gpt"\n')
    monkeypatch.setenv("EVTUI_CONFIG", str(cfg_file))
    with pytest.raises(EvtuiError) as err:
        load_config()
    assert str(err.value) == f"config {cfg_file}: judge must be local or llm, got 'gpt'"
    cfg_file.write_text('judge = "LLM"\n')  # the judge reads it case-blind
    assert load_config().judge == "LLM"
    monkeypatch.setenv("EVTUI_CONFIG", str(tmp_path / "none.toml"))
    monkeypatch.setenv("EVTUI_JUDGE", "oracle")
    with pytest.raises(EvtuiError, match="^EVTUI_JUDGE must be local or llm, got 'oracle'$"):
        load_config()


def test_unknown_keys_are_named_once_with_the_closest_key(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    cfg_file = tmp_path / "u.toml"
    cfg_file.write_text('judg = "llm"\nk = 5\n')
    monkeypatch.setenv("EVTUI_CONFIG", str(cfg_file))
    cfg = load_config()
    assert cfg.k == 5 and cfg.judge == "local"
    warning = f"config {cfg_file}: unknown key(s) ignored: 'judg' (did you mean 'judge'?)"
    assert cfg.warnings == [warning]
    assert capsys.readouterr().err == f"warning: {warning}\n"
    assert load_config().warnings == [warning] and capsys.readouterr().err == ""  # said once a process
    cfg_file.write_text('foo = 1\n"source" = "x"\n')
    cfg = load_config()
    err = capsys.readouterr().err
    assert "unknown key(s) ignored: 'foo', 'source'; the keys are contact_email, db_memory, demo," in err and "judge," in err
    assert cfg.source == str(cfg_file)
    cfg_file.write_text('k = 3\n[keymap]\n"app.quit" = "Q"\n')
    assert load_config().warnings == [] and capsys.readouterr().err == ""
