"""The help (f1 / ?) at 80x24 says what each key does in full: a description too long for its column goes on under
itself, broken between words, instead of being cut ("Back to search, or out of a text fi…"); ids stay whole."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static
from tui_pilot import run, started, until

from evtui.tui.screens.modals import HelpScreen


def test_help_descriptions_are_whole_at_80_columns(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await pilot.press("f1")  # as a first-time user: from the query bar
            await until(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
            await pilot.pause(0.2)
            help_screen = app.screen
            assert isinstance(help_screen, HelpScreen)
            keys = help_screen.query_one("#help-keys", Static)
            lines = str(keys.render()).splitlines()
            assert all(len(line) <= keys.size.width for line in lines)
            assert not [line for line in lines if "…" in line]  # nothing cut
            id_col = lines[0].index(" id") + 1
            # the key and description columns, read in order: a wrapped description reads on across its lines
            words = " ".join(" ".join(line[:id_col] for line in lines).split())
            for _key, desc, bid in help_screen.rows:
                assert " ".join(desc.split()) in words, desc  # every description whole, in reading order
                if bid:
                    assert any(line.rstrip().endswith(bid) for line in lines), bid  # every id whole
            back = next(i for i, line in enumerate(lines) if line.rstrip().endswith("app.back"))
            # the description's rest on the next line, under its start: the key column blank
            assert lines[back].split()[0] == "esc" and lines[back + 1].startswith(" " * 4)
            assert " ".join(" ".join(line[:id_col] for line in lines[back:back + 2]).split()) == (
                "esc Back to search, or out of a text field")

    run(flow)
