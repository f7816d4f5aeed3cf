"""What evtui's screens share: the app's services as a type, j/k, and the one path from a worker's failure to a
notification.

Screens type the app with `AppServices` instead of importing `evtui.tui.app` (which imports the screens), so the
app sits above its screens and nothing points back up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, cast

from textual.message import Message
from textual.screen import Screen
from textual.widgets import DataTable, OptionList

from evtui.errors import EvtuiError
from evtui.tui.messages import WorkFailed

if TYPE_CHECKING:
    from evtui.config import Config
    from evtui.export import Basket
    from evtui.library import Library
    from evtui.search import Searcher, SearchResult
    from evtui.tui.data import LibraryView
    from evtui.tui.state import UiState


class AppServices(Protocol):
    """The part of the app (evtui.tui.app.EvtuiApp) that screens and the command palette use."""

    config: Config
    clock: Callable[[], float]
    library: Library | None
    view: LibraryView | None
    searcher: Searcher | None
    basket: Basket | None
    result: SearchResult | None
    status_note: str
    ui_state: UiState

    @property
    def db_lock(self) -> AbstractContextManager[Any]: ...

    @property
    def db_gate(self) -> AbstractContextManager[Any]: ...

    def post_message(self, message: Message) -> bool: ...

    def new_view(self) -> LibraryView: ...

    def selected_ids(self) -> list[str]: ...

    def selection_note(self) -> str: ...

    def notify_replacing(self, marker: str, message: str, *, timeout: float | None = None) -> None: ...

    def abbreviations(self) -> dict[str, str]: ...

    def judge_service(self) -> Any | None: ...

    def local_judge(self) -> Any: ...

    def library_writer(self) -> AbstractContextManager[None]: ...

    def judge_model(self) -> str | None: ...

    def judge_setting(self, name: str) -> Any: ...

    def mode_screens(self) -> dict[str, type[Screen[Any]]]: ...

    async def run_in_mode(self, mode: str, action: str) -> None: ...


class WorkCancelled(Exception):
    """Raised from a long worker's progress callback when it is to stop at that step (the app is closing, or the
    user cancelled): what is stored so far stays, and a later run finishes it."""


def failure_text(exc: BaseException) -> str:
    """An exception as the one line a notification shows: evtui's own errors by their message, any other with
    its type (the name of an unexpected error helps a bug report). A failure the user can meet (a read-only or
    damaged library, a full disk) gets the CLI's one line saying what happened and what to do."""
    if isinstance(exc, EvtuiError):
        return str(exc)
    from evtui.repair import user_message

    return user_message(exc, None) or f"{type(exc).__name__}: {exc}"


def failure_reason(exc: BaseException) -> str:
    """An exception's own words on one line, for a message that already says what failed ("… failed: <reason>"):
    evtui's errors and the generic Exception, RuntimeError and ValueError by their message alone (their type name
    adds nothing but noise), any other with its type (KeyError: 'x' says more than 'x')."""
    text = " ".join(str(exc).split())
    if not text:
        return type(exc).__name__
    generic = isinstance(exc, EvtuiError) or type(exc) in (Exception, RuntimeError, ValueError)
    return text if generic else f"{type(exc).__name__}: {text}"


class EvtuiScreen(Screen[None]):
    """The base of the app's screens."""

    FAILURE_TIMEOUT: ClassVar[float | None] = 10  # seconds a worker's failure stays up (None: Textual's default)
    # Generic (id-less) actions of Textual's widgets that do nothing on this screen: `?` leaves them out.
    HELP_HIDES: ClassVar[frozenset[str]] = frozenset()

    @property
    def evtui(self) -> AppServices:
        return cast("AppServices", self.app)

    # -- j / k ---------------------------------------------------------------------------------------
    def cursor_list(self) -> DataTable[Any] | OptionList | None:
        """The list j and k move through (None: none has the cursor now)."""
        return None

    def action_cursor_down(self) -> None:
        target = self.cursor_list()
        if target is not None:
            target.action_cursor_down()

    def action_cursor_up(self) -> None:
        target = self.cursor_list()
        if target is not None:
            target.action_cursor_up()

    # -- workers' failures ---------------------------------------------------------------------------
    @contextmanager
    def failures(self, what: str, describe: Callable[[Exception], str] = failure_text) -> Iterator[None]:
        """Worker code runs inside this: an exception ends that code and comes back to the screen as a WorkFailed
        message (`what` names the flow; `describe` words the exception), never as a crash of the app."""
        try:
            yield
        except Exception as exc:  # noqa: BLE001 - a loader, model, disk or network failure must not end the app
            self.post_message(WorkFailed(what, describe(exc)))

    def on_work_failed(self, msg: WorkFailed) -> None:
        self.work_failed(msg)
        self.notify(msg.reason, title=msg.what, severity="error", timeout=self.FAILURE_TIMEOUT)

    def work_failed(self, msg: WorkFailed) -> None:
        """Put the screen back after a worker failed (re-enable what it disabled); the notification follows."""
