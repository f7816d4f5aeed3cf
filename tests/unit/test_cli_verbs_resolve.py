"""The parser names each verb's function as "module:function" (evtui/cli/parser.py) rather than importing it, so
that a cold command loads only its own verb's module. A name nothing checks at import time is checked here: every
verb and subverb resolves to a function of the CLI package."""

from __future__ import annotations

import argparse
import inspect

from evtui.cli import build_parser
from evtui.cli.parser import verb_function


def _leaves(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], object]]:
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return [(path, parser.get_default("fn"))]
    return [leaf for name, sub in subs[0].choices.items() for leaf in _leaves(sub, (*path, name))]


def test_every_verb_names_a_function_of_the_cli_package() -> None:
    leaves = _leaves(build_parser())
    assert len(leaves) == 20  # 13 verbs, bench's 6 benchmarks and llm serve
    for path, ref in leaves:
        assert isinstance(ref, str), path
        fn = verb_function(ref)
        assert inspect.isfunction(fn) and fn.__module__.startswith("evtui.cli."), (path, ref)
        assert list(inspect.signature(fn).parameters) == ["args"], (path, ref)


def test_the_app_that_a_bare_evtui_opens_is_a_verb_too() -> None:
    assert verb_function("tui:cmd_tui").__name__ == "cmd_tui"
