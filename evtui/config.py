"""Where evtui keeps its state, and the user's settings.

All state lives under one data home ($EVTUI_HOME, default the XDG data dir). Settings come from
~/.config/evtui/config.toml (or $EVTUI_CONFIG), and any key can be overridden by an EVTUI_<KEY> env var.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from evtui.errors import EvtuiError


@dataclass
class Config:
    home: Path = field(default_factory=lambda: Path(platformdirs.user_data_dir("evtui", appauthor=False)))
    demo: bool = True  # load the bundled demo library into an empty data home on first use
    k: int = 20
    theme: str = "textual-dark"
    export_path: str = "~/evtui-evidence.md"  # where the app's `e` writes the selection as Markdown
    keymap: dict[str, str] = field(default_factory=dict)
    # Relevance judge: "local" (offline, no LLM) or "llm" (a litellm model string; keys come from the
    # provider's environment variable, never from this file).
    judge: str = "local"
    judge_model: str | None = None
    judge_api_base: str | None = None
    judge_concurrency: int = 4
    judge_timeout: int = 60
    # DuckDB's buffer-pool cap (DuckDB's own default is 80% of RAM, far more than a library needs): queries that
    # need more spill to disk instead of growing the process.
    db_memory: str = "1GB"
    # The full-text tier (evtui/backend.py): "tantivy", the in-process index in the data home (docs/scale.md).
    search_backend: str = "tantivy"
    # `evtui fetch` (Europe PMC): the e-mail its User-Agent gives the service, as its terms ask of clients, and the
    # service's address (a mirror, or a local server in tests).
    contact_email: str = ""
    europepmc_url: str = "https://www.ebi.ac.uk/europepmc/webservices/rest/"
    source: str = "defaults"
    # What load_config found questionable but not fatal (unknown keys): said once on stderr, kept for the app.
    warnings: list[str] = field(default_factory=list)

    @property
    def db_path(self) -> Path:
        return self.home / "library.duckdb"

    @property
    def index_path(self) -> Path:
        return self.home / "index"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    def own_paths(self) -> list[Path]:
        """What evtui keeps in the data home (database, indexes, caches, runs, the app's notes): never a paper, when
        a user ingests a folder that holds the home. Other files a user keeps beside them are theirs."""
        names = ("index", "index-papers", "cache", "bench", "inbox", "europepmc", "owner.json", "tui-state.json")
        return [self.home / n for n in names] + sorted(self.home.glob("library.duckdb*"))


JUDGES = ("local", "llm")  # the judge names (evtui.judge.service.JUDGES)
_NOT_KEYS = frozenset({"source", "warnings"})  # Config fields that no file or variable sets
_WARNED: set[str] = set()  # each warning once a process (the CLI and the library both load the config)


def config_path() -> Path:
    env = os.environ.get("EVTUI_CONFIG")
    if env:
        return Path(env)
    return Path(platformdirs.user_config_dir("evtui", appauthor=False)) / "config.toml"


_TRUE, _FALSE = {"1", "true", "yes", "on"}, {"0", "false", "no", "off"}
_MEMORY = re.compile(r"\d+(\.\d+)?\s*(KB|MB|GB|TB|KiB|MiB|GiB|TiB)", re.IGNORECASE)  # as evtui.store checks it


def _coerce(name: str, raw: Any, current: Any, where: str) -> Any:
    """`raw` as the type of the field's default; `where` names the setting in a message ("config FILE: k" or
    "EVTUI_K"), so a bad value says where to fix it."""
    if isinstance(current, bool):
        word = str(raw).strip().lower()
        if isinstance(raw, bool) or word in _TRUE | _FALSE:
            return raw if isinstance(raw, bool) else word in _TRUE
        raise EvtuiError(f"{where} must be true or false, got {raw!r}")  # "nope" must not quietly mean false
    if isinstance(current, int):
        # 3.7 or `true` would pass int(); 0 results, 0 parallel calls or a 0 s timeout are never what is meant
        value = raw.strip() if isinstance(raw, str) else raw
        if isinstance(value, str) and value.lstrip("+-").isdigit():
            value = int(value)
        if not isinstance(value, int) or isinstance(value, bool):
            shown = str(raw).lower() if isinstance(raw, bool) else repr(raw)  # as the file says it: true
            raise EvtuiError(f"{where} must be an integer, got {shown}")
        if value < 1:
            raise EvtuiError(f"{where} must be at least 1, got {raw!r}")
        return value
    if isinstance(current, Path):
        # An empty path would be the current directory: the library must never land wherever evtui was started.
        text = os.path.expanduser(raw).strip() if isinstance(raw, str) else ""
        if not text:
            raise EvtuiError(f"{where} must be a folder path, got {raw!r}")
        path = Path(text)
        if not path.is_absolute() and where.startswith("config "):
            # relative to whichever folder evtui is started in: a new empty library, with the demo, each time
            raise EvtuiError(f"{where} must be an absolute folder path (or start with ~), got {raw!r}")
        if path.exists() and not path.is_dir():
            raise EvtuiError(f"{where} must be a folder, but {text} is a file")
        return path
    if isinstance(current, dict):
        if not isinstance(raw, dict) or not all(isinstance(v, str) for v in raw.values()):
            raise EvtuiError(f"{where} must be a table of text values ([{name}] with lines like \"app.quit\" = \"Q\")")
        return raw
    if (current is None or isinstance(current, str)) and not isinstance(raw, str):
        raise EvtuiError(f"{where} must be text, got {raw!r}")
    if name == "db_memory" and not _MEMORY.fullmatch(raw.strip()):
        raise EvtuiError(f"{where} must look like 512MB or 2GB, got {raw!r}")
    return raw


def home_path(raw: str, where: str) -> Path:
    """A data home given on the command line (`--home`), checked as EVTUI_HOME is: not empty, not a file."""
    path: Path = _coerce("home", raw, Path(), where)  # a Path default: checked as a folder path
    return path


def load_config() -> Config:
    cfg = Config()
    path = config_path()
    if path.is_dir():  # EVTUI_CONFIG=~/.config/evtui: read as a file it failed as "cannot use …: Is a directory"
        raise EvtuiError(f"config file {path} is a folder: name the file itself, e.g. {path / 'config.toml'}")
    if path.exists():
        # imported here: most commands run without a config file, and a cold `evtui search` is kept short
        if sys.version_info >= (3, 11):
            import tomllib
        else:  # pragma: no cover
            import tomli as tomllib
        import difflib

        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise EvtuiError(f"config file {path} is not valid TOML: {exc}") from exc
        except OSError as exc:  # unreadable (permissions, a broken mount): say which file, not only the errno
            raise EvtuiError(f"cannot read config file {path}: {exc.strerror or exc}") from exc
        names = sorted(f.name for f in fields(Config) if f.name not in _NOT_KEYS)
        unknown, guessed = [], True
        for key, value in data.items():
            if key in names:
                setattr(cfg, key, _coerce(key, value, getattr(cfg, key), f"config {path}: {key}"))
            else:
                close = difflib.get_close_matches(key.lower(), names, n=1)  # `K = 5` is `k`
                guessed = guessed and bool(close)
                unknown.append(f"{key!r}" + (f" (did you mean {close[0]!r}?)" if close else ""))
        cfg.source = str(path)
        if unknown:  # a typo (`judg = "llm"`) would otherwise leave the setting at its default without a word
            cfg.warnings.append(f"config {path}: unknown key(s) ignored: {', '.join(unknown)}"
                                + ("" if guessed else f"; the keys are {', '.join(names)}"))
        _check_judge(cfg.judge, f"config {path}: judge")
    for f in fields(Config):
        env = os.environ.get(f"EVTUI_{f.name.upper()}")
        # An empty variable (`EVTUI_HOME= evtui ...`) means unset, as in most tools — not "the current directory".
        if env and f.name not in {"keymap", *_NOT_KEYS}:
            setattr(cfg, f.name, _coerce(f.name, env, getattr(cfg, f.name), f"EVTUI_{f.name.upper()}"))
            if f.name == "judge":
                _check_judge(cfg.judge, "EVTUI_JUDGE")
    for warning in cfg.warnings:
        if warning not in _WARNED:
            _WARNED.add(warning)
            print(f"warning: {warning}", file=sys.stderr)
    return cfg


def _check_judge(value: str, where: str) -> None:
    if value.strip().lower() not in JUDGES:
        raise EvtuiError(f"{where} must be {' or '.join(JUDGES)}, got {value!r}")
