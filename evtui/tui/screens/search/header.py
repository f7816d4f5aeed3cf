"""The Search screen's header: the query bar with its history, the aspect chips parsed as one types, the status
line, and the notes line (what the search changed or could not find, fitted to its rows)."""

from __future__ import annotations

from rich.text import Text
from textual import on
from textual.suggester import SuggestFromList
from textual.widgets import Input, Label, Static

from evtui.errors import EvtuiError
from evtui.models import Aspect, ParsedQuery
from evtui.tui.data import EMPTY_LIBRARY
from evtui.tui.screens.modals import AspectEditScreen
from evtui.tui.screens.search.common import NOTES_LINES, SearchBase, derive_terms
from evtui.tui.widgets import AspectBar


class SearchHeader(SearchBase):
    def status(self, text: str | Text) -> None:
        self.query_one("#status", Static).update(text, layout=False)  # one line, always

    def show_notes(self, notes: str) -> None:
        """The search's notes on their own line below the status (two at most, wrapped), so that at 80 columns
        "mentioned only in part: …" is read in full rather than cut after its first words; hidden when there are
        none."""
        self.search_notes = notes
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """The notes line: the search's notes, and why the table is empty when a stance filter hides every row (at
        80 columns the detail pane that also says so is closed)."""
        parts = [self.search_notes] if self.search_notes else []
        if self.judge_failure and self.result is not None:
            parts.insert(0, self.judge_failure)  # first: the line shows two rows at most
        if self.stance is not None and self.result is not None and self.kept and not self.rows:
            parts.append(f"no judged result is {self.stance} (v shows the next stance)")
        box = self.query_one("#notes", Static)
        self.notes_text = "; ".join(parts)
        box.update(self.fit_notes(self.notes_text, box.size.width or max(20, self.app.size.width - 4)))
        box.display = bool(parts)

    def fit_notes(self, notes: str, width: int) -> Text:
        """The notes as the notes line shows them: whole when they wrap to NOTES_LINES rows, else cut between two
        words with a pointer to the side pane, which has them all (its height used to cut them mid-phrase, so that
        "mentioned only in part: “Vitamin" ended the line)."""
        self.notes_cut = False
        text = Text(notes, style="yellow")
        lines = text.wrap(self.app.console, width)
        # one row on a short terminal while results need the room; all of them when they say why there are none
        most = 1 if self.has_class("short") and self.result is not None and self.rows else NOTES_LINES
        if len(lines) <= most:
            return text
        self.notes_cut = True
        more = " … (all in the side pane: d)"
        words = " ".join(line.plain.strip() for line in lines[:most]).split(" ")
        while words and len(Text(" ".join(words) + more).wrap(self.app.console, width)) > most:
            words.pop()
        # back to the end of the last clause a few words back, rather than leave "… risk”; 9 …"
        end = next((i for i in range(len(words) - 1, max(-1, len(words) - 8), -1) if words[i].endswith((";", ","))),
                   len(words) - 1)
        return Text(" ".join(words[:end + 1]).rstrip(";,:") + more, style="yellow")

    # -- the library -------------------------------------------------------------------------------
    def library_ready(self, note: str) -> None:
        self.query_one("#main").display = True
        self.status(note)
        self.refresh_papers()
        self.query_one("#query", Input).focus()

    def refresh_papers(self) -> None:
        view = self.evtui.view
        if view is None:
            return
        ids = [p.id for p in view.store.papers()]
        self.query_one("#paper", Input).suggester = SuggestFromList(ids, case_sensitive=True)
        self.library_empty = not ids
        if self.result is None and self.search_notes in ("", EMPTY_LIBRARY):
            # a first launch without the demo: say how to fill the library rather than show a blank screen
            self.show_notes(EMPTY_LIBRARY if self.library_empty else "")
        elif not self.library_empty and EMPTY_LIBRARY in self.search_notes:  # papers added since that search
            self.show_notes("; ".join(x for x in self.search_notes.split("; ") if x != EMPTY_LIBRARY))

    # -- the query and its aspects -----------------------------------------------------------------
    @on(Input.Changed, "#query")
    def query_changed(self, event: Input.Changed) -> None:
        if self._parse_timer is not None:
            self._parse_timer.stop()
        self._parse_timer = self.set_timer(0.25, self.parse_live)

    def parse_live(self) -> None:
        """Show the detected mode and the aspects while the user types (parsing is cheap and local)."""
        app = self.evtui
        text = self.query_one("#query", Input).value
        bar = self.query_one(AspectBar)
        if app.searcher is None or text == self._chips_text:
            return
        self._chips_text = text
        try:
            parsed = app.searcher.parse(text)
        except EvtuiError:
            bar.clear()
            self.show_mode("")
            return
        self.show_mode(parsed.mode)
        bar.set_aspects(parsed.aspects, parsed.mode)

    def show_mode(self, mode: str) -> None:
        label = self.query_one("#mode", Label)
        if str(label.content) != mode:
            label.update(Text(mode, style="bold"), layout=False)  # a fixed-width slot

    def action_focus_aspects(self) -> None:
        self.parse_live()
        bar = self.query_one(AspectBar)
        if not bar.aspects:
            self.notify("type a query first: its aspects appear as chips", title="Aspects", severity="warning")
            return
        bar.focus()

    @on(AspectBar.EditRequested)
    def edit_aspect(self, event: AspectBar.EditRequested) -> None:
        bar = event.bar
        abbreviations = self.evtui.abbreviations()
        current = bar.aspects[event.index] if event.index >= 0 else Aspect(bar.new_id(), "", [], "concept")

        def done(aspect: Aspect | None) -> None:
            if aspect is not None:
                bar.replace(event.index, aspect)

        self.app.push_screen(AspectEditScreen(current, lambda label, role: derive_terms(label, role, abbreviations)),
                             done)

    @on(AspectBar.Changed)
    def aspects_changed(self) -> None:
        # the keys that search from where the user is: enter in the chips edits the aspect under the cursor
        self.status("aspects edited · s searches with them" if self.query_one(AspectBar).has_focus
                    else "aspects edited · enter in the query bar searches with them")

    @on(AspectBar.SearchRequested)
    def search_aspects(self) -> None:
        self.run_search()

    def current_query(self) -> str | ParsedQuery:
        """The edited aspects when the user changed them for this text, else the text itself."""
        text = self.query_one("#query", Input).value
        bar = self.query_one(AspectBar)
        if bar.edited and bar.aspects and text == self._chips_text:
            return ParsedQuery(text=text.strip(), mode=bar.mode, aspects=list(bar.aspects),
                               notes=["aspects edited by hand"])
        return text

    def action_history(self, step: int) -> None:
        """↑ the previous query (persisted between runs), ↓ back towards what was being typed."""
        history = self.evtui.ui_state.history()
        query = self.query_one("#query", Input)
        if not history:
            return
        if self._history_at is None:
            if step > 0:
                return
            self._typed = query.value
            at = len(history) - 1
        else:
            at = self._history_at + step
        if at >= len(history):
            self._history_at = None
            query.value = self._typed
        else:
            self._history_at = max(0, at)
            query.value = history[self._history_at]
        query.cursor_position = len(query.value)

    def focus_query(self) -> None:
        query = self.query_one("#query", Input)
        # also where the screen's resume puts focus back (restore_focus runs after this when `/` came from another
        # screen): else it went back to the results, and the query typed next ran as keys (e: Export, l: Library)
        self._resume_focus = query
        query.focus()
