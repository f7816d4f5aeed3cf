"""`evtui`'s entry point: parse, run the verb, and turn every failure into the one-line message and exit status
the README promises (2 usage or input error, 1 where a verb says so, 130 Ctrl-C; `{"error": ...}` under --json)."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from contextlib import suppress
from typing import Any

from evtui.cli.core import beside_app_note, emit_json, say
from evtui.cli.parser import build_parser, verb_function
from evtui.errors import EvtuiError
from evtui.render import safe


def resume_hint(args: argparse.Namespace) -> str:
    """What a Ctrl-C kept, and how to finish, for the verbs whose work is stored as it goes."""
    verb = getattr(args, "verb", None)
    if verb == "judge":  # set once the judging began (cmd_judge): before it nothing was judged or kept
        return str(getattr(args, "interrupted_note", ""))
    if verb == "embed":
        return ": the vectors made so far are kept; `evtui embed` again finishes the rest"
    if verb == "ingest":
        return ": the papers stored so far are kept; the same `evtui ingest` again reads only the rest"
    if verb == "bench" and getattr(args, "bench_verb", None) in ("evidencebench", "scifact", "checkcovid"):
        return ": the finished items are kept; the same command with --resume finishes the run"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `evtui papers | head -1`: the reader has what it wanted (also when it went away before an error's JSON).
        # Quiet, as Rich is for the tables (exit 1), with stdout pointed at /dev/null so that the interpreter's
        # last flush cannot complain either.
        with suppress(OSError, ValueError):  # a stdout without a file descriptor (captured) needs nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "json_first", False):
        args.json = True
    if not getattr(args, "fn", None):
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            parser.print_help()
            return 0
        args.fn = "tui:cmd_tui"  # bare `evtui` on a terminal: the app, with the verbs' one-line errors (a bad config)
    try:
        if getattr(args, "verb", None) in ("bench", "verify"):
            from evtui.repair import check_input_file

            # `verify --claims /dev/zero` or `scifact-eval --gold FIFO` hung, reading without end. Those two verbs'
            # files are checked where they exist: a missing one keeps its reader's message ("cannot read ...").
            bench_run = args.verb == "bench" and args.bench_verb not in ("scifact-eval", "stance")
            for flag in ("data", "corpus", "claims", "gold", "pred", "pairs"):
                value = getattr(args, flag, None)
                if value and (bench_run or os.path.lexists(os.path.expanduser(value))):
                    check_input_file(value, f"--{flag}")
        return int(verb_function(args.fn)(args))
    except EvtuiError as exc:
        if getattr(args, "json", False):
            emit_json({"error": str(exc)})
        say(f"[red]error:[/] {safe(str(exc))}")  # a message may hold [brackets] or escapes: not markup
        return 2
    except KeyboardInterrupt:
        if getattr(args, "json", False):  # a script reading stdout gets its one document, as for any failure
            emit_json({"error": f"interrupted{resume_hint(args)}"})
        say(f"[yellow]interrupted[/]{resume_hint(args)}")
        return 130
    except BrokenPipeError:
        raise  # main's: not a failure to report
    except Exception as exc:
        from evtui.access import read_only_refusal

        message = read_only_refusal(exc)  # a write tried on a library read beside the app
        beside_app = beside_app_note()
        if message is not None and beside_app and not getattr(args, "json", False):
            say(f"[dim]{safe(beside_app)}[/]")
        if message is None:
            from evtui.repair import user_message

            message = user_message(exc, _home(args))  # a damaged database, a refused file, a full disk
        if message is None:
            raise
        if getattr(args, "json", False):
            emit_json({"error": message})
        say(f"[red]error:[/] {safe(message)}")
        return 2


def _home(args: argparse.Namespace) -> Any:
    from pathlib import Path

    if getattr(args, "home", None):
        return Path(args.home).expanduser()
    try:
        from evtui.config import load_config

        return load_config().home
    except Exception:  # noqa: BLE001 - only for a message
        return None
