"""Every `evtui` command line in the README's and the user guide's shell blocks is one the CLI accepts: its verb and
flags exist, flag values parse, and a `--method` names a method of the registry. A newcomer copies these lines; a
renamed flag or verb must fail here, not in their terminal.

Only fenced ```bash blocks are checked (inline commands in prose hold placeholders such as `…`). A block that
documents a verb landing in its own change is marked with `<!-- commands-check: skip -->` on the line above it.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from evtui import methods
from evtui.cli import build_parser

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
SKIP_MARK = "<!-- commands-check: skip -->"


def bash_blocks(text: str) -> list[list[str]]:
    """The lines of each ```bash block, less the blocks marked to skip."""
    blocks: list[list[str]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].strip() == "```bash":
            skip = i > 0 and lines[i - 1].strip() == SKIP_MARK
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if not skip:
                blocks.append(lines[i + 1:j])
            i = j
        i += 1
    return blocks


def evtui_commands(line: str) -> list[list[str]]:
    """The `evtui …` commands of one shell line, as argv lists without `evtui`: a trailing comment dropped, each
    `&&` part read alone, leading VAR=value assignments skipped."""
    commands = []
    for part in line.split("&&"):
        words = shlex.split(part, comments=True)
        while words and re.fullmatch(r"[A-Z_]+=\S*", words[0]):
            words = words[1:]
        if words and words[0] == "evtui":
            commands.append(words[1:])
    return commands


def all_commands() -> list[tuple[str, list[str]]]:
    out = []
    for page in PAGES:
        for block in bash_blocks(page.read_text(encoding="utf-8")):
            for line in block:
                out += [(f"{page.relative_to(ROOT)}: {line.strip()}", argv) for argv in evtui_commands(line)]
    return out


COMMANDS = all_commands()


def test_the_readme_and_every_guide_page_show_commands() -> None:
    pages = {where.split(":", 1)[0] for where, _ in COMMANDS}
    assert "README.md" in pages
    assert {p.name for p in (ROOT / "docs" / "guide").glob("*.md")} <= {Path(p).name for p in pages}


@pytest.mark.parametrize("argv", [argv for _, argv in COMMANDS], ids=[where for where, _ in COMMANDS])
def test_each_documented_command_parses(argv: list[str]) -> None:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse's exit on a bad verb, flag or value
        pytest.fail(f"evtui {' '.join(argv)}: the CLI refuses it (exit {e.code})")
    except Exception as e:  # evtui's parser raises for a bad choice
        pytest.fail(f"evtui {' '.join(argv)}: {e}")
    method = getattr(args, "method", None)
    if method is not None and getattr(args, "verb", None) in ("search", "select", "judge"):
        assert method in {m.name for m in methods.all_methods() if m.search}, method


def test_the_skip_mark_is_honoured_and_nothing_else_is_skipped() -> None:
    text = "```bash\nevtui search x\n```\n" + SKIP_MARK + "\n```bash\nevtui nosuchverb\n```\n"
    assert bash_blocks(text) == [["evtui search x"]]


def test_a_wrong_flag_is_caught() -> None:
    with pytest.raises((SystemExit, Exception)):
        build_parser().parse_args(["search", "x", "--no-such-flag"])
