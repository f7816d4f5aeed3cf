"""The Export screen: the selection basket — reorder, remove, preview the Markdown, save to a path."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, DataTable, Header, Input, Label, Markdown, Select, Static

from evtui.errors import EvtuiError
from evtui.export import (
    FORMAT_EXTENSIONS,
    FORMAT_NAMES,
    FORMATS,
    STDOUT,
    Selected,
    by_question,
    choose_format,
    format_of,
    render,
    to_markdown,
    write_export,
)
from evtui.honest import in_part
from evtui.outpaths import check_output
from evtui.render import coverage_marker, plain
from evtui.tui.base import EvtuiScreen
from evtui.tui.data import light_theme, short, verdict_mark
from evtui.tui.screens.modals import ConfirmScreen
from evtui.tui.suggest import PathSuggester
from evtui.tui.widgets.keybar import KeyBar

STACKED_BELOW = 160  # columns: below this the list sits over the preview, each full width (two panes side by side
# left the list's sentences 3 characters of paper id at 80 columns, 26 of sentence at 120 and 34 at 140)
_SUB = re.compile(r"(?<!\\)<sub>(.*?)</sub>")
# Files this app process wrote: saving to one again replaces it without asking; any other existing file asks first.
_WRITTEN: set[str] = set()


def now() -> datetime:
    """The export date in the preview's footer (tests pin it for stable snapshots)."""
    return datetime.now(timezone.utc)


def preview_markdown(text: str) -> str:
    """The Markdown as the preview shows it: the widget drops HTML, and an aspect tag set inline (as a code span)
    made the sentence read "aspirin head per day": the preview keeps the matches in bold and leaves the tags
    (**aspirin**<sub>head</sub>) to the file."""
    return _SUB.sub("", text)


class BasketTable(DataTable[Any]):
    """The selection list: home / end go to its first / last sentence (a row-cursor DataTable's own home / end
    only scroll sideways, so after `end` the next `K` moved the wrong sentence)."""

    BINDINGS = [
        Binding("home", "scroll_top", "First", show=False),
        Binding("end", "scroll_bottom", "Last", show=False),
    ]


class ExportScreen(EvtuiScreen):
    CSS = """
    ExportScreen.-stacked #export-main { layout: vertical; }
    ExportScreen.-stacked #basket-pane { width: 100%; height: auto; }
    ExportScreen.-stacked #basket { height: auto; max-height: 40vh; }
    ExportScreen.-stacked #preview-pane { width: 100%; height: 1fr; border-left: none; border-top: solid $primary; }
    ExportScreen #preview MarkdownH3 { width: 100%; }
    ExportScreen #basket-question { width: 1fr; margin: 0 1; }
    ExportScreen #save-row #save { width: 10; min-width: 10; margin: 0 0 0 1; }
    """
    BINDINGS = [
        Binding("K,shift+up", "move(-1)", "Move up", id="export.up"),
        Binding("J,shift+down", "move(1)", "Move down", id="export.down"),
        Binding("j", "cursor_down", "Down", show=False, id="export.cursor_down"),
        Binding("k", "cursor_up", "Up", show=False, id="export.cursor_up"),
        Binding("x,delete", "remove", "Remove", id="export.remove"),
        Binding("ctrl+s", "save", "Save", id="export.save"),
        Binding("w", "focus_path", "Save to…", id="export.path"),
        Binding("m", "toggle_preview", "Raw/rendered", id="export.raw"),
        Binding("n", "toggle_plain", "Plain notes", id="export.plain"),
        Binding("o", "open_paper", "Open paper", id="export.open"),
        Binding("C", "clear", "Clear all", id="export.clear"),
        # esc in the path field leaves the field, not the screen (as from the Library's fields): it went back to
        # Search, and the path field kept the focus, so the keys typed on coming back went into the file name
        Binding("escape", "leave_path", "Out of the path field", show=False, id="export.leave_path"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.items: list[Selected] = []
        self.raw = False
        self._loaded = False
        self._left_mode = False  # suspended by a switch to another mode, not by a dialog on top

    def compose(self) -> ComposeResult:
        yield Header()
        with Horizontal(id="export-main"):
            with Vertical(id="basket-pane"):
                yield Label("", id="basket-title")
                # with items for 2+ questions: the question of the row under the cursor (its Qn heading row may
                # have scrolled out of the list's few rows at 80x24); hidden, taking no line, with one question
                yield Label("", id="basket-question")
                yield BasketTable(id="basket", cursor_type="row", zebra_stripes=True)
            with VerticalScroll(id="preview-pane"):
                yield Markdown(id="preview")
                yield Static(id="preview-raw")
        with Horizontal(id="save-row"):
            # select_on_focus off: after `w` the next key must not replace the whole path
            yield Input(placeholder="file to write", id="export-path", suggester=PathSuggester(),
                        select_on_focus=False)
            yield Select([(f, f) for f in FORMATS], value="md", id="export-format", allow_blank=False)
            yield Button("Save", id="save", variant="primary")
        yield KeyBar()

    def on_mount(self) -> None:
        self.fit_layout()
        # the format follows the saved path's extension (path_changed)
        self.query_one("#export-path", Input).value = self.evtui.config.export_path
        self.query_one("#preview-raw").display = False
        self.query_one("#basket-question").display = False
        self.call_after_refresh(self.reload)
        self.query_one("#basket", DataTable).focus()

    def on_screen_suspend(self) -> None:
        # Handled after the switch: left for another mode (ctrl+p, a mode key) when this screen is no longer on the
        # current stack; a dialog or the reader pushed over it keeps it there.
        self._left_mode = self not in self.app.screen_stack

    def on_screen_resume(self) -> None:
        if self._loaded:
            self.reload()
        if self._left_mode:
            # back from another mode: the list takes the keys, not the path field they would be typed into
            self._left_mode = False
            if isinstance(self.focused, Input):
                self.query_one("#basket", DataTable).focus()

    def fit_layout(self) -> None:
        """Below STACKED_BELOW columns the list sits over the preview (CSS above), each as wide as the screen."""
        self.set_class((self.size.width or self.app.size.width) < STACKED_BELOW, "-stacked")

    def palette_changed(self) -> None:
        if self._loaded:
            self.fill_table()

    def on_resize(self) -> None:
        self.fit_layout()
        if self._loaded:
            self.call_after_refresh(self.fill_table)

    def fill_table(self, row: int | None = None) -> None:
        """The list's rows, the sentence column taking the width the other columns leave. With items for more than
        one question, each question's first row opens with the question (as the preview's ## heading) and `#`
        counts within the question (as the preview's ### n.), so rows under different questions tell apart."""
        table = self.query_one("#basket", DataTable)
        row = table.cursor_row if row is None else row
        papers = [it.paper.id if it.paper else "—" for it in self.items]
        width = table.size.width or (self.app.size.width - 2 if self.has_class("-stacked")
                                     else self.app.size.width // 2 - 2)
        # paper ids whole where they fit in a quarter of the list (scifact:15648443 always), cut beyond
        paper_w = min(max(16, (width - 23) // 4), max([5, *map(len, papers)]))
        # 5 columns with a cell's padding (1 each side), and room for a vertical scrollbar
        sentence_w = max(20, width - (3 + 1 + 4 + paper_w) - 2 * 5 - 2)
        table.clear(columns=True)
        table.add_column("#", key="n", width=3)
        table.add_column("v", key="verdict", width=1)  # ▲ ▼ ● where the user decides what to keep
        table.add_column("asp", key="asp", width=4)
        table.add_column("sentence", key="sentence", width=sentence_w)
        table.add_column("paper", key="paper", width=paper_w)
        questions = list(dict.fromkeys(it.query for it in self.items))
        n = 0
        for i, (it, paper) in enumerate(zip(self.items, papers, strict=True)):
            head = i == 0 or self.items[i - 1].query != it.query
            n = 1 if head else n + 1
            cells: list[Text] = [Text(str(n)), verdict_mark(it.verdict), coverage_marker(it.highlights, it.aspects,
                                                               in_part(it.text, it.aspects),
                                                               light=light_theme(self.app)),
                                 Text(short(it.text, sentence_w)), Text(short(paper, paper_w), style="cyan")]
            opens = head and len(questions) > 1  # a question's first row
            if opens:
                k = questions.index(it.query) + 1
                label = Text.assemble((f"Q{k}", "bold reverse"), " ", (short(it.query, sentence_w - 4), "bold"))
                # the question on a line above the sentence; the other cells' values on the sentence's line
                cells = [label.append("\n").append_text(c) if c is cells[3] else Text("\n").append_text(c)
                         for c in cells]
            table.add_row(*cells, key=f"{it.sentence_id}\x1f{it.query}",  # an item: (sentence, question)
                          height=2 if opens else 1)
        if self.items:
            table.move_cursor(row=max(0, min(row, len(self.items) - 1)), animate=False)
        self.show_question()

    def show_question(self) -> None:
        """The label over the list, with items for 2+ questions: "Q2 of 3 · <question>" for the row under the cursor
        (as its heading row and the preview's ## heading number it), cut to the list's width."""
        label = self.query_one("#basket-question", Label)
        questions = list(dict.fromkeys(it.query for it in self.items))
        it = self.current()
        label.display = len(questions) > 1
        if len(questions) < 2 or it is None:
            label.update("")
            return
        k = questions.index(it.query) + 1
        width = label.size.width or self.query_one("#basket", DataTable).size.width or self.app.size.width - 2
        head = f"Q{k} of {len(questions)}"
        label.update(Text.assemble((head, "bold reverse"), " · ", (short(it.query, max(10, width - len(head) - 3)),
                                                                   "bold")))

    @on(DataTable.RowHighlighted, "#basket")
    def row_highlighted(self) -> None:
        self.show_question()

    @staticmethod
    def grouped(items: list[Selected]) -> list[Selected]:
        """The items as the export lists them (evtui.export.by_question), one after another."""
        return [it for group in by_question(items).values() for it in group]

    def reload(self, keep: int | None = None) -> None:
        basket = self.evtui.basket
        if basket is None:
            return
        self._loaded = True
        self.items = self.grouped(basket.items())
        self.fill_table(keep)
        n = len(self.items)
        nq = len({it.query for it in self.items})
        unsaved = self.evtui.selection_note()
        self.query_one("#basket-title", Label).update(
            Text.assemble((f"Selection · {n} sentence(s)" + (f" · {nq} questions" if nq > 1 else ""), "bold"),
                          ("   J/K move · x remove · ctrl+s save" if n else "   space selects a result", "dim"),
                          # a read-only library: said where the selection is, so nobody counts on finding it again
                          (f"\n{unsaved} · export it to keep it" if unsaved else "", "bold")))
        self.update_preview()

    def update_preview(self) -> None:
        if not self.items:
            text = "*Nothing selected yet: select results with space on the Search screen or in the reader.*"
        else:
            fmt = str(self.query_one("#export-format", Select).value)
            # The preview is the file as it will be saved, References list included.
            text = (to_markdown(self.items, now=now(), plain=self.plain) if fmt == "md"
                    else render(self.items, fmt))
        md = self.query_one("#preview", Markdown)
        raw = self.query_one("#preview-raw", Static)
        fmt = str(self.query_one("#export-format", Select).value)
        show_raw = self.raw or fmt != "md"
        md.display = not show_raw
        raw.display = show_raw
        if show_raw:
            raw.update(plain(text))
        else:
            md.update(preview_markdown(text))

    @on(Select.Changed, "#export-format")
    def format_changed(self, event: Select.Changed) -> None:
        """A format picked: the file name takes its extension (unless it has one that already means it)."""
        path = self.query_one("#export-path", Input)
        fmt = str(event.value)
        if path.value and format_of(path.value) != fmt:
            stem = path.value.rsplit(".", 1)[0] if "." in Path(path.value).name else path.value
            path.value = stem + FORMAT_EXTENSIONS.get(fmt, "")
        self.update_preview()

    @on(Input.Changed, "#export-path")
    def path_changed(self, event: Input.Changed) -> None:
        """A file name typed: its extension picks the format (out.bib -> bibtex), as `evtui export --out` does; any
        other extension leaves the format as it is."""
        implied = format_of(event.value)
        select = self.query_one("#export-format", Select)
        if implied is not None and implied != select.value:
            with self.prevent(Select.Changed):  # the path is not rewritten while it is being typed
                select.value = implied
            self.update_preview()

    def current(self) -> Selected | None:
        table = self.query_one("#basket", DataTable)
        row = table.cursor_row
        return self.items[row] if 0 <= row < len(self.items) else None

    def cursor_list(self) -> DataTable[Any]:
        return self.query_one("#basket", DataTable)

    def action_move(self, delta: int) -> None:
        """Move the item under the cursor past its neighbour under the same question (the list and the export
        group items by question: a swap with another question's item moved nothing that either shows)."""
        it = self.current()
        basket = self.evtui.basket
        if it is None or basket is None:
            return
        row = self.query_one("#basket", DataTable).cursor_row
        to = row + delta
        if not 0 <= to < len(self.items) or self.items[to].query != it.query:
            return  # first / last under its question
        keys = basket.keys()
        here = keys.index((it.sentence_id, it.query))
        there = keys.index((self.items[to].sentence_id, it.query))
        # Basket.move swaps the two places: the other questions' items stay where they are
        basket.move(it.sentence_id, there - here, it.query)  # this item: the sentence under this question
        self.reload(keep=to)

    def action_remove(self) -> None:
        it = self.current()
        basket = self.evtui.basket
        if it is None or basket is None:
            return
        row = self.query_one("#basket", DataTable).cursor_row
        basket.remove(it.sentence_id, it.query)  # under this question only: it stays selected for any other
        self.notify(f"removed from the selection: {short(it.text, 60)}", title="Selection", timeout=3)
        self.reload(keep=row)

    def action_clear(self) -> None:
        basket = self.evtui.basket
        if basket is None or not self.items:
            return

        def confirmed(yes: bool | None) -> None:
            if yes and basket is not None:
                basket.clear()
                self.reload()

        self.app.push_screen(ConfirmScreen("Clear the selection?", f"{len(self.items)} sentence(s) leave it."),
                             confirmed)

    def action_toggle_preview(self) -> None:
        self.raw = not self.raw
        self.update_preview()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_path":  # only while the field has the focus; else esc is the app's (back to Search)
            return self.query_one("#export-path", Input).has_focus
        return True

    def action_leave_path(self) -> None:
        self.query_one("#basket", DataTable).focus()

    def action_focus_path(self) -> None:
        path = self.query_one("#export-path", Input)
        path.focus()
        path.cursor_position = len(path.value)  # at the end, nothing selected: typing adds, never replaces

    @property
    def plain(self) -> bool:
        """Markdown as plain notes (no <sub>aspect</sub> tags); remembered between runs."""
        return bool(self.evtui.ui_state.get("export_plain", False))

    def action_toggle_plain(self) -> None:
        self.evtui.ui_state.set("export_plain", not self.plain)
        self.notify("Markdown: plain notes (no aspect tags)" if self.plain else "Markdown: aspect tags after "
                    "each match", title="Export", timeout=3)
        self.update_preview()

    def action_open_paper(self) -> None:
        it = self.current()
        if it is None or it.paper is None:
            return
        from evtui.models import ParsedQuery
        from evtui.tui.screens.reader import ReaderScreen

        parsed = ParsedQuery(text=it.query, mode=it.mode, aspects=it.aspects)
        self.app.push_screen(ReaderScreen(it.paper.id, parsed, it.method, focus=it.sentence_id))

    @on(Input.Submitted, "#export-path")
    @on(Button.Pressed, "#save")
    def action_save(self) -> None:
        view = self.evtui.view
        if view is None:
            return
        raw = self.query_one("#export-path", Input).value.strip()
        if not raw:
            self.notify("type the file to write", title="Export", severity="warning")
            return
        if raw == STDOUT:  # the CLI's "standard output": here that is the screen the app is drawing on
            self.notify("'-' is standard output (evtui export --out -); here, type a file name",
                        title="Export", severity="warning")
            return
        out = Path(raw).expanduser()
        # The format field follows the typed extension; one picked after it that the extension contradicts is
        # written as picked, with the warning `evtui export --format` gives.
        fmt, mismatch = choose_format(out, str(self.query_one("#export-format", Select).value))
        try:  # refused before any "Replace?" question: a file of the library itself is never the user's to replace
            check_output(out, self.evtui.config.home)
        except EvtuiError as exc:
            self.notify(str(exc), title="Export", severity="error")
            return
        try:
            exists = out.is_file() and str(out.resolve()) not in _WRITTEN
        except OSError:
            exists = False  # the write says why the path is unusable
        if not exists or not self.items:
            self._write(out, fmt, mismatch)
            return

        def confirmed(yes: bool | None) -> None:
            if yes:
                self._write(out, fmt, mismatch)

        # A file this app did not write (notes, a manuscript, another export) is never replaced without asking.
        self.app.push_screen(ConfirmScreen(f"Replace {out.name}?", f"{out} exists; saving replaces it with the "
                                           f"{FORMAT_NAMES[fmt]} export of {len(self.items)} sentence(s).",
                                           yes="Replace"), confirmed)

    def _write(self, out: Path, fmt: str, mismatch: str | None) -> None:
        view = self.evtui.view
        if view is None:
            return
        try:
            with self.evtui.db_gate:  # the UI thread's reads take the gate (a shared library's switch)
                n = write_export(view, out, fmt, plain=self.plain)  # type: ignore[arg-type]
        except EvtuiError as exc:
            self.notify(str(exc), title="Export", severity="error")
            return
        if getattr(self.evtui.basket, "unexported", False):
            self.evtui.basket.unexported = False  # type: ignore[union-attr]  # kept in the file now: quit freely
        try:
            _WRITTEN.add(str(out.resolve()))
        except OSError:
            pass
        if mismatch:
            self.notify(mismatch, title="Export", severity="warning")
        self.notify(f"wrote {n} sentence(s) to {out} ({FORMAT_NAMES[fmt]})", title="Export")
