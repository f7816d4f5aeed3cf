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
