"""Small modal dialogs: confirm, edit an aspect, the key help."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static

from evtui.models import Aspect
from evtui.render import plain, safe_text, short
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.oneline import OneLineInput

ROLES = ("head", "relation", "tail", "concept")


class ConfirmScreen(ModalScreen[bool]):
    """Yes / no. `y` or enter confirms, `n` or escape cancels."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", id="confirm.yes"),
        Binding("n,escape", "answer(False)", "No", id="confirm.no"),
    ]

    def __init__(self, title: str, body: str | Text, yes: str = "Yes") -> None:
        super().__init__()
        self.title_text = title
        self.body = body
        self.yes = yes

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog"):
            yield Label(plain(self.title_text), classes="dialog-title")
            body = self.body
            with VerticalScroll(classes="dialog-scroll"):
                yield Static(safe_text(body) if isinstance(body, Text) else plain(body), classes="dialog-body")
            with Horizontal(classes="dialog-buttons"):
                yield Button(f"{self.yes} (y)", variant="primary", id="yes")
                yield Button("Cancel (n)", id="no")
        # the dialog's own keys at the bottom: the screen's key bar underneath listed keys the dialog swallows
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#yes", Button).focus()

    @on(Button.Pressed)
    def pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)


class AspectEditScreen(ModalScreen["Aspect | None"]):
    """Edit one aspect: its label, the surface terms it matches, its role. Empty terms: derived from the label."""

    BINDINGS = [Binding("escape", "cancel", "Cancel", id="aspect.cancel")]

    def __init__(self, aspect: Aspect, derive: object) -> None:
        super().__init__()
        self.aspect = aspect
        self.derive = derive  # (label, role) -> terms

    def compose(self) -> ComposeResult:
        a = self.aspect
        with Vertical(classes="dialog"):
            yield Label(f"Aspect {a.id}", classes="dialog-title")
            yield Label("label")
            yield OneLineInput(a.label, placeholder="e.g. colorectal cancer", id="label")
            yield Label("terms it matches (comma-separated; empty: derived from the label)")
            yield OneLineInput(", ".join(a.terms), placeholder="derived from the label", id="terms")
            yield Label("role")
            yield Select([(r, r) for r in ROLES], value=a.role if a.role in ROLES else "concept", id="role",
                         allow_blank=False)
            with Horizontal(classes="dialog-buttons"):
                yield Button("Save (enter)", variant="primary", id="save")
                yield Button("Cancel (esc)", id="cancel")
        yield KeyBar()

    def on_mount(self) -> None:
        self.query_one("#label", Input).focus()

    @on(Input.Submitted)
    @on(Button.Pressed, "#save")
    def save(self) -> None:
        label = self.query_one("#label", Input).value.strip()
        if not label:
            self.notify("an aspect needs a label", title="Aspect", severity="warning")
            return
        role = str(self.query_one("#role", Select).value)
        raw = self.query_one("#terms", Input).value
        terms = [t.strip() for t in raw.split(",") if t.strip()]
        unchanged_terms = terms == list(self.aspect.terms)
        if not terms or (unchanged_terms and (label != self.aspect.label or role != self.aspect.role)):
            terms = list(self.derive(label, role))  # type: ignore[operator]
        if label not in terms:
            terms.insert(0, label)
        self.dismiss(Aspect(self.aspect.id, label, terms, role))

    @on(Button.Pressed, "#cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)


def help_text(rows: list[tuple[str, str, str]], width: int | None = None) -> Text:
    """The key table as padded columns of one Text: a Rich Table here took ~25 ms a render, twice per opening,
    which made `?` slow to appear while a sweep loaded the machine. Within `width` columns (80 columns: a 74-wide
    dialog) the ids stay whole and a description too long for its column goes on under itself, broken between
    words (cut to its column it read "Back to search, or out of a text fi…": what the key does, lost)."""
    header = ("key", "does", "id")  # the footer says what the id is for
    kw = max(len(r[0]) for r in [header, *rows])
    dw = max(len(r[1]) for r in [header, *rows])
    iw = max(len(r[2]) for r in [header, *rows])
    if width is not None and kw + dw + iw + 4 > width:
        dw = max(len(header[1]), 16, width - kw - iw - 4)
    out = Text(no_wrap=True, overflow="ellipsis")
    out.append(f"{header[0]:<{kw}}  {header[1]:<{dw}}  {header[2]}", style="bold")
    for key, desc, bid in rows:
        out.append("\n")
        out.append(f"{key:<{kw}}", style="bold cyan")
        desc = short(desc, len(desc) + 1)  # one line, no control characters
        parts = textwrap.wrap(desc, dw) if len(desc) > dw else [desc]
        out.append(f"  {parts[0]:<{dw}}  ")
        out.append(bid, style="dim")
        for part in parts[1:]:  # the rest of the description under its start, the key and id columns blank
            out.append(f"\n{'':<{kw}}  {part}")
    return out


class HelpScreen(ModalScreen[None]):
    """Every key of the screen underneath and of the app, with what it does (keymap overrides included)."""

    BINDINGS = [Binding("escape,question_mark,q", "close", "Close", id="help.close")]

    def __init__(self, title: str, rows: Iterable[tuple[str, str, str]]) -> None:
        super().__init__()
        self.title_text = title
        self.rows = list(rows)

    def show(self, title: str, rows: Iterable[tuple[str, str, str]]) -> None:
        """Refill the installed help screen for the screen it is opened over (the app keeps one)."""
        self.title_text = title
        self.rows = list(rows)
        if self.is_mounted:
            self.query_one("#help-title", Label).update(f"Keys · {title}")
            self.fit_keys()
            self.query_one(VerticalScroll).scroll_home(animate=False)

    def fit_keys(self) -> None:
        """The key table within the dialog's width (known once laid out; the terminal's, less the frame, before)."""
        keys = self.query_one("#help-keys", Static)
        width = keys.size.width or max(40, self.app.size.width - 8)
        keys.update(help_text(self.rows, width))

    def on_resize(self) -> None:
        self.call_after_refresh(self.fit_keys)

    def on_screen_resume(self) -> None:
        self.call_after_refresh(self.fit_keys)  # the terminal may have been resized since it was last open

    def compose(self) -> ComposeResult:
        with Vertical(classes="dialog help"):
            yield Label(f"Keys · {self.title_text}", classes="dialog-title", id="help-title")
            with VerticalScroll():
                yield Static(help_text(self.rows, max(40, self.app.size.width - 8)), id="help-keys")
            yield Static(Text("id: for [keymap] in config.toml · ctrl+p: every action · esc closes"), classes="dim")
        yield KeyBar()

    def action_close(self) -> None:
        self.dismiss(None)
