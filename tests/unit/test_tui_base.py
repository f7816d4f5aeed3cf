"""The screens' shared base (evtui.tui.base): one wording and one path for a worker's failure, and no screen
importing the app module that imports the screens."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from textual.widgets import Static
from tui_pilot import TRIPLET, messages, run, search, started, until

from evtui.errors import EvtuiError, QueryError
from evtui.tui.base import failure_reason, failure_text
from evtui.tui.screens.search import SearchScreen

TUI = Path(__file__).parents[2] / "evtui" / "tui"


def test_failure_text_names_unexpected_errors_only() -> None:
    assert failure_text(QueryError("the year range 2020–2010 is empty")) == "the year range 2020–2010 is empty"
    assert failure_text(EvtuiError("locked")) == "locked"
    assert failure_text(KeyError("x")) == "KeyError: 'x'"
    assert failure_text(RuntimeError("disk full")) == "RuntimeError: disk full"


def test_failure_reason_is_one_line_without_a_generic_type_name() -> None:
    """For "<what failed>: <reason>" lines: no "Exception:" in front of the words, the type only where it says
    something, and never a second line."""
    assert failure_reason(Exception("Truncation error: too\nshort")) == "Truncation error: too short"
    assert failure_reason(RuntimeError("disk full")) == "disk full"
    assert failure_reason(EvtuiError("locked")) == "locked"
    assert failure_reason(KeyError("x")) == "KeyError: 'x'"
    assert failure_reason(OSError()) == "OSError"


def _imported(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_screen_imports_the_app_module() -> None:
    """The app imports its screens; a screen (or the command palette) that imported evtui.tui.app back, even for a
    type only, would make a cycle: they type the app with evtui.tui.base.AppServices."""
    modules = [*sorted((TUI / "screens").glob("*.py")), TUI / "commands.py", TUI / "base.py"]
    offenders = [p.name for p in modules if "evtui.tui.app" in _imported(p)]
    assert offenders == []
    assert "evtui.tui.app" in _imported(TUI.parent / "cli" / "tui.py")  # the checker sees an import where there is one


class _Failing:
    """The real searcher, except that every search raises an unexpected error (a bug, a full disk); the rest
    (the live parse of what the user types, its library) is the real one's, so only the search fails."""

    def __init__(self, real: Any) -> None:
        self._real = real

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def _fail(self, *_args: Any, **_kwargs: Any) -> Any:
        raise RuntimeError("disk full")

    run = search = _fail


def test_a_failing_search_worker_is_one_notification_and_the_screen_recovers(papers_ingested: Path) -> None:
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            real = app.searcher
            app.searcher = _Failing(real)  # type: ignore[assignment]
            query = screen.query_one("#query")
            query.focus()
            query.value = TRIPLET  # type: ignore[attr-defined]
            await pilot.press("enter")
            failed = "the best search failed: disk full"  # what failed, then why (no exception type)
            await until(pilot, lambda: failed in messages(app), "the failure's notification")
            note = next(n for n in app._notifications if str(n.message) == failed)
            assert note.title == "Query" and note.severity == "error" and note.timeout == 8
            assert failed in str(screen.query_one("#status", Static).render())
            assert not screen._searching and app.is_running
            app.searcher = real  # the next search works again
            await search(app, pilot, TRIPLET)
            assert app.result is not None and app.result.evidence

    run(flow)
