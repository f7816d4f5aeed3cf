"""The headless CLI: a thin face over the same services as the TUI. Every verb has `--json`.

A package by verb group over a small shared core (docs/architecture.md):

- core.py: the parser class, `--json` output, messages and progress on stderr, opening the library
- parser.py: every verb, flag and help text (`build_parser`)
- run.py: `main`: dispatch, errors and exit statuses
- flags.py: the search flags `search`, `select` and `judge` share, and their checks
- search.py (search, judge, verify) · papers.py (ingest, fetch, papers, show, stats, embed, remove) ·
  selection.py (select, export) · bench.py · llm.py · tui.py: the verbs

A verb's module is imported only when that verb runs.
"""

from __future__ import annotations

from evtui.cli.parser import build_parser
from evtui.cli.run import main

__all__ = ["build_parser", "main"]
