"""`evtui tui`: the terminal app (also what a bare `evtui` opens on a terminal)."""

from __future__ import annotations

import argparse
import sys

from evtui.cli.core import config_for
from evtui.errors import EvtuiError


def cmd_tui(args: argparse.Namespace) -> int:
    from evtui.tui.app import run

    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # `evtui tui > log` wrote escape codes and waited for keys
        raise EvtuiError("`evtui tui` needs a terminal (its input or output is redirected); in a script use the "
                         "verbs (`evtui --help`)")

    run(config_for(args))
    return 0
