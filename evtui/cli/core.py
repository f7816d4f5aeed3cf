"""The CLI's shared core: the argument parser (did-you-mean, usage errors as JSON), `--json` output, messages and
progress bars on stderr, and opening the library. Every verb module of evtui/cli builds on it; it imports no verb.
Rich is imported where something is drawn, so a `--json` run that says nothing on stderr never loads it."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from evtui.render import json_text, plain, safe

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.text import Text

_beside_app: str | None = None  # the read-only note of a library opened beside the app, said on a refused write
WIDE_TABLE = 110  # columns from which `search` gives the paper and section a column of their own
WIDE_JUDGE = 140  # ... and from which `judge` gives the rationale and the paper columns of their own
PAPERS_ON_SCREEN = 200  # `evtui papers` on a terminal: a table this long (in a pager); piped: every paper, as TSV

err: Console | None = None  # stderr's console, made at its first use (see stderr()); a test may set its own


def stderr() -> Console:
    """The console on stderr every message and progress bar goes to."""
    global err
    if err is None:
        from rich.console import Console

        err = Console(stderr=True, emoji=False)  # paper text is never read as :emoji: codes (nor as markup)
    return err


def beside_app_note() -> str | None:
    """The note of a library the last open_library(reading=True) opened beside the app (None: it did not)."""
    return _beside_app


def emit_json(obj: Any) -> None:
    sys.stdout.write(json_text(obj, indent=2) + "\n")  # C1 and bidi controls escaped (evtui.render)


def say(markup: str | Text, *, highlight: bool | None = None) -> None:
    """One message on stderr (markup). Piped, it stays one line: Rich would wrap it at 80 columns, and a script reading
    stderr line by line (or a log) would get half a sentence per line."""
    stderr().print(markup, soft_wrap=not stderr().is_terminal, highlight=highlight)


def _close_matches(word: str, choices: Sequence[str]) -> str:
    import difflib

    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {near[0] if near[0].startswith('-') else repr(near[0])}?)" if near else ""


class Parser(argparse.ArgumentParser):
    """argparse, made for scripts: a mistyped verb, choice or flag gets "did you mean", and a usage error in a
    command that asked for --json is, like every other failure, one JSON document on stdout and one line on
    stderr (exit 2), not a usage block a JSON reader cannot parse."""

    _seen: list[str] = []  # the arguments this parser was given (a sub-command's parser: the verb's own)
    _argv: list[str] = []  # the whole command line, verb and all (set by the top-level parse)
    _top = False  # the `evtui` parser itself, not a verb's

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        self._seen = list(sys.argv[1:] if args is None else args)
        if self._top:
            Parser._argv = self._seen
        return super().parse_known_args(args, namespace)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices and isinstance(value, str):
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from {choices})"
                                                 f"{_close_matches(value, [str(c) for c in action.choices])}")
        super()._check_value(action, value)

    def _leaf(self) -> argparse.ArgumentParser:
        """The (sub-)command parser the arguments reached: its flags are the ones a typo was meant for."""
        parser: argparse.ArgumentParser = self
        for word in self._seen:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if subs and word in subs[0].choices:
                parser = subs[0].choices[word]
        return parser

    def error(self, message: str) -> Any:
        leaf = self._leaf()
        if message.startswith("unrecognized arguments:"):
            flags = [o for a in leaf._actions for o in a.option_strings if a.help != argparse.SUPPRESS]
            message += "".join(_close_matches(w.split("=")[0], flags) for w in message.split(":", 1)[1].split()
                               if w.startswith("--") and w.split("=")[0] not in flags)  # not "--json? --json"
        # the whole command line, not the verb's part: `evtui --json search` asked for JSON too
        seen = Parser._argv or self._seen
        options = seen[: seen.index("--")] if "--" in seen else seen
        if "--json" in options:
            emit_json({"error": message})
        else:
            leaf.print_usage(sys.stderr)
        from evtui.render import printable

        sys.stderr.write(printable(f"{leaf.prog}: error: {message}", oneline=True) + "\n")
        sys.exit(2)


@contextmanager
def progress_bar(label: str, enabled: bool, *, lazy: bool = False) -> Iterator[Callable[..., None] | None]:
    """A rich progress bar on stderr for long ingests (only on a terminal, so pipes stay clean). `lazy`: the
    terminal is looked at only at the first report (a callback is given even where no bar will be drawn), so a
    command whose reports never come does not load Rich."""
    if not enabled or not (lazy or stderr().is_terminal):
        yield None
        return
    # Drawn at the first report only: every verb opens the library through "Loading the demo library", which
    # loads nothing once the demo is in, and a bar drawn anyway flashed that label on each command.
    bar: list[tuple[Progress, Any]] = []

    def update(p: Any) -> None:
        if not bar:
            if not stderr().is_terminal:  # lazy, in a pipe
                return
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[papers]} papers · {task.fields[current]}"), TimeElapsedColumn(),
                            console=stderr(), transient=True)
            prog.start()
            bar.append((prog, prog.add_task(label, total=None, papers=0, current="")))
        prog, task = bar[0]
        name = safe(os.path.basename(p.current)[-40:], oneline=True)
        prog.update(task, total=p.files_total or None, completed=p.files_done, papers=p.papers_seen, current=name)

    try:
        yield update
    finally:
        if bar:
            bar[0][0].stop()


def config_for(args: argparse.Namespace) -> Any:
    from evtui.config import load_config

    cfg = load_config()
    if getattr(args, "home", None) is not None:  # `--home ""` (an unset $VAR) is refused, not the default library
        from evtui.config import home_path

        cfg.home = home_path(args.home, "--home")
    return cfg


def open_library(args: argparse.Namespace, *, demo: bool = True, reading: bool = False) -> Any:
    """The library; `reading` verbs open it read-only beside the app (or a read-only data home) when they
    must (evtui/access.py), writers get the "in use by" message."""
    from evtui.access import open_reader
    from evtui.demo import ensure_demo
    from evtui.library import Library

    cfg = config_for(args)
    if reading:
        lib, note = open_reader(cfg)
        global _beside_app
        # Beside the app every command printed "read-only: the library is in use…": that note now comes with a
        # refused write only (see run_command), where it says why; a data home that cannot be written is said.
        _beside_app = note if note and note.startswith("read-only: the library is") else None
        if note and not _beside_app and not getattr(args, "json", False):
            say(f"[dim]{safe(note)}[/]")
    else:
        lib = Library(cfg)
    for _severity, note in lib.opening_notes():  # a rebuilt search index: why that command took so long
        say(f"[yellow]note:[/] {safe(note)}")
    if lib.recovered:
        say(f"[yellow]repaired {len(lib.recovered)} paper(s) left unfinished by an interrupted run[/]")
    if demo and not lib.read_only:
        with progress_bar("Loading the demo library", True, lazy=True) as cb:
            report = ensure_demo(lib, cb)
        if report is not None:
            say(f"[dim]loaded the bundled demo library: {report.added} papers, {report.sentences} sentences "
                f"in {report.seconds:.1f}s[/]")
    return lib


def shortened(text: str, limit: int) -> str:
    """`text` within `limit` characters, a cut marked with an ellipsis (a bare cut read "… in carriers of he")."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def one_line(text: str) -> Text:
    """Where a row is from, under it on a narrow terminal: one dim line, cut with an ellipsis."""
    out = plain(text, "cyan dim", oneline=True)
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


def say_dim(message: str) -> None:
    say(f"[dim]{safe(message)}[/]")


@contextmanager
def stage_progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr (terminal only) whose label follows the run's stage (embedding, claims)."""
    if not enabled or not stderr().is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=stderr(), transient=True) as prog:
        task = prog.add_task("loading the corpus", total=None)

        def update(stage: str, done: int, total: int) -> None:
            prog.update(task, description=stage, completed=done, total=total or None)

        yield update


def judge_opts(args: argparse.Namespace) -> dict[str, Any]:
    """The judge options a verb was given (api keys never travel this way: only the environment has them)."""
    return {k: v for k, v in (("judge", args.judge), ("model", args.model), ("api_base", args.api_base)) if v}
