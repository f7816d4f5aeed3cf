"""Driving the real app in tests: start it headless on the isolated home's library, wait for what a user waits
for, search, open a screen. Shared by the pilot tests (test_tui*, test_pdf, test_hardening)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

from textual.pilot import Pilot
from textual.widgets import Input, Select

from evtui.config import load_config
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.library import LibraryScreen
from evtui.tui.screens.search import SearchScreen

TRIPLET = "(aspirin, reduce, colorectal cancer)"
SIZE = (140, 40)

T = TypeVar("T")


def run(flow: Callable[[], Any]) -> None:
    asyncio.run(flow())


@asynccontextmanager
async def started(size: tuple[int, int] = SIZE, *, app: EvtuiApp | None = None,
                  wait: bool = True) -> AsyncIterator[tuple[EvtuiApp, Pilot[None]]]:
    """The app (a new one on the isolated home unless `app` is given) running headless at `size`; with `wait`,
    as a user finds it: the library open on the Search screen and the query bar focused."""
    app = app if app is not None else EvtuiApp(load_config())
    record_notifications(app)
    async with app.run_test(size=size) as pilot:
        if wait:
            await ready(app, pilot)
        yield app, pilot


async def until(pilot: Any, cond: Callable[[], object], what: str = "the condition", timeout: float = 20.0) -> None:
    for _ in range(int(timeout / 0.05)):
        if cond():
            return
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for {what}; notifications: {messages(pilot.app)}; every notification "
                         f"since the start, expired ones too: {getattr(pilot.app, 'notified', [])}")


async def ready(app: EvtuiApp, pilot: Any) -> None:
    await until(pilot, lambda: app.searcher is not None and isinstance(app.screen, SearchScreen), "the library")
    # The query bar takes focus a tick after the library opens; wait for it so a test's own focus() wins.
    await until(pilot, lambda: app.focused is app.screen.query_one("#query"), "focus on the query bar")


async def search(app: EvtuiApp, pilot: Any, text: str, method: str = "bm25-coverage") -> None:
    screen = app.screen
    screen.query_one("#method", Select).value = method
    query = screen.query_one("#query", Input)
    query.focus()
    query.value = text
    app.result = None
    await pilot.press("enter")
    await until(pilot, lambda: app.result is not None, "results")
    await pilot.pause()


async def answer_confirm(app: EvtuiApp, pilot: Any, key: str = "y", what: str = "the confirmation",
                         timeout: float = 20.0, check: Callable[[Any], None] | None = None) -> None:
    """Wait for the yes/no dialog to be up and mounted (its Yes button focused: a key pressed the moment the screen
    is pushed can arrive before its bindings do), run `check` on it, answer it with `key` and wait for it to close."""
    from evtui.tui.screens.modals import ConfirmScreen

    def ready() -> bool:
        screen = app.screen
        return isinstance(screen, ConfirmScreen) and bool(screen.query("#yes")) and \
            app.focused is screen.query_one("#yes")

    await until(pilot, ready, what, timeout)
    dialog = app.screen
    if check is not None:
        check(dialog)
    await pilot.press(key)
    await until(pilot, lambda: app.screen is not dialog, f"{what} to close")


def record_notifications(app: EvtuiApp) -> None:
    """Keep every notification's title and text in `app.notified`: a timed-out wait then says what the app told
    the user earlier (a warning or error toast has expired by the time a long wait gives up)."""
    notified: list[str] = []
    notify = app.notify

    def recording(message: Any, *args: Any, **kwargs: Any) -> None:
        notified.append(f"{kwargs.get('title', '')}: {message}")
        notify(message, *args, **kwargs)

    app.notified = notified  # type: ignore[attr-defined]
    app.notify = recording  # type: ignore[method-assign]


def messages(app: EvtuiApp) -> list[str]:
    return [str(n.message) for n in app._notifications]


async def notified(pilot: Any, *texts: str, timeout: float = 20.0) -> None:
    """Wait for a notification holding any of `texts`: `notify` posts a message the app handles a tick later,
    so on a loaded machine it can land after the state change a test waited for."""
    await until(pilot, lambda: any(t in m for m in messages(pilot.app) for t in texts),
                f"a notification with {' or '.join(map(repr, texts))}", timeout)


async def focus_results(app: EvtuiApp, pilot: Any) -> None:
    """Focus the results table and wait until it has focus: a letter pressed while the query bar still holds
    focus (its focus lands a tick after the library opens, later on a loaded machine) is typed, not a key."""
    results = app.screen.query_one("#results")
    for _ in range(400):
        if app.focused is results:
            await pilot.pause()  # a focus the screen scheduled itself (its resume after the loading screen)
            if app.focused is results:  # lands now, if at all, and a loaded machine can delay it past ours
                return
        results.focus()
        await pilot.pause(0.05)
    raise AssertionError(f"timed out waiting for focus on the results table; notifications: {messages(app)}")


async def open_screen(app: EvtuiApp, pilot: Any, key: str, kind: type[T]) -> T:
    """From a started app's search screen to the screen `key` opens."""
    await focus_results(app, pilot)
    await pilot.press(key)
    await until(pilot, lambda: isinstance(app.screen, kind), f"the {kind.__name__}")
    screen = app.screen
    assert isinstance(screen, kind)
    return screen


async def library_screen(app: EvtuiApp, pilot: Any) -> LibraryScreen:
    return await open_screen(app, pilot, "l", LibraryScreen)


def plain_text(renderable: Any) -> str:
    """What a widget's content or a dialog's body shows, as plain text."""
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(renderable)
    return console.export_text()


def local_judge_missing() -> str | None:
    """Why the local judge cannot run here (its model file is missing or broken), or None."""
    try:
        from evtui.rank.model import default_model

        default_model()
    except Exception as exc:  # noqa: BLE001
        return f"the local judge's model is not available here: {exc}"
    return None


async def reader_at_top_hit(app: EvtuiApp, pilot: Any) -> Any:
    """The reader opened on the current search's top hit, as `enter` on it does, once the hit is in view."""
    from evtui.tui.screens.reader import ReaderScreen

    assert app.result is not None and app.result.evidence
    top = app.result.evidence[0]
    app.push_screen(ReaderScreen(top.sentence.paper_id, app.result.query, "best", app.result.evidence,
                                 focus=top.sentence.id))
    await until(pilot, lambda: isinstance(app.screen, ReaderScreen), "the reader")
    reader = app.screen
    assert isinstance(reader, ReaderScreen)
    await until(pilot, lambda: reader.paper is not None and reader.current_id() == top.sentence.id, "the hit")
    return reader
