"""A bad value in config.toml (or an EVTUI_ variable) stops with one line naming where it is and what it must be:
values that used to pass quietly (`demo = "nope"` as false, `k = 3.7` as 3, `k = 0`, a relative or file home)
and messages that did not name the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.errors import EvtuiError


@pytest.fixture
def cfg_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("EVTUI_CONFIG", str(path))
    for name in ("EVTUI_HOME", "EVTUI_DEMO"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.mark.parametrize(("line", "says"), [
    ('k = "ten"', "k must be an integer, got 'ten'"),
    ("k = 3.7", "k must be an integer, got 3.7"),
    ("k = true", "k must be an integer, got true"),
    ("k = 0", "k must be at least 1, got 0"),
    ("judge_concurrency = -2", "judge_concurrency must be at least 1, got -2"),
    ("judge_timeout = 0", "judge_timeout must be at least 1, got 0"),
    ('demo = "nope"', "demo must be true or false, got 'nope'"),
    ("home = 5", "home must be a folder path, got 5"),
    ('home = "relative/dir"', "home must be an absolute folder path (or start with ~), got 'relative/dir'"),
    ('db_memory = "lots"', "db_memory must look like 512MB or 2GB, got 'lots'"),
    ('[keymap]\n"app.quit" = 5', "keymap must be a table of text values"),
])
def test_a_bad_value_names_the_file(cfg_file: Path, line: str, says: str) -> None:
    cfg_file.write_text(line + "\n")
    with pytest.raises(EvtuiError) as err:
        load_config()
    assert str(err.value).startswith(f"config {cfg_file}: {says}")
    assert "\n" not in str(err.value)


def test_a_home_that_is_a_file(cfg_file: Path, tmp_path: Path) -> None:
    cfg_file.write_text(f'home = "{cfg_file}"\n')
    with pytest.raises(EvtuiError, match=f"^config {cfg_file}: home must be a folder, but {cfg_file} is a file$"):
        load_config()


@pytest.mark.parametrize(("name", "value", "says"), [
    ("EVTUI_K", "0", "EVTUI_K must be at least 1, got '0'"),
    ("EVTUI_DEMO", "maybe", "EVTUI_DEMO must be true or false, got 'maybe'"),
    ("EVTUI_DB_MEMORY", "1 bucket", "EVTUI_DB_MEMORY must look like 512MB or 2GB, got '1 bucket'"),
])
def test_a_bad_variable_names_itself(cfg_file: Path, monkeypatch: pytest.MonkeyPatch, name: str, value: str,
                                     says: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(EvtuiError) as err:
        load_config()
    assert str(err.value) == says


def test_good_values_still_read(cfg_file: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    cfg_file.write_text(f'k = 7\ndemo = "off"\nhome = "{tmp_path}/h"\ndb_memory = "512 MB"\njudge_timeout = 5\n')
    cfg = load_config()
    assert (cfg.k, cfg.demo, cfg.home, cfg.db_memory, cfg.judge_timeout) == (7, False, tmp_path / "h", "512 MB", 5)
    monkeypatch.setenv("EVTUI_K", " 9 ")
    monkeypatch.setenv("EVTUI_DEMO", "YES")
    monkeypatch.setenv("EVTUI_HOME", "rel")  # a shell's relative path is the shell's business
    cfg = load_config()
    assert (cfg.k, cfg.demo, cfg.home) == (9, True, Path("rel"))


def test_a_key_in_the_wrong_case_is_guessed(cfg_file: Path) -> None:
    cfg_file.write_text("K = 5\n")
    assert "'K' (did you mean 'k'?)" in load_config().warnings[0]
