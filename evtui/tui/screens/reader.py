"""The paper reader: the whole paper by section, the query's matches in aspect colours, n/p between hits."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Region
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from evtui.export import READER_METHOD, display_names
from evtui.models import Evidence, Paper, ParsedQuery, Sentence, Span
from evtui.render import chip_style, highlight, plain, printable, safe_text
from evtui.tui.base import EvtuiScreen
from evtui.tui.data import flow, light_theme, quoted, short, verdict_mark
from evtui.tui.widgets.keybar import KeyBar


class ReaderScreen(EvtuiScreen):
    BINDINGS = [
        Binding("n", "next_hit", "Next hit", id="reader.next"),
        Binding("p", "previous_hit", "Previous hit", id="reader.previous"),
        Binding("space", "toggle_select", "Select", id="reader.select"),
        Binding("y", "copy", "Copy", id="reader.copy"),
        Binding("j", "cursor_down", "Down", show=False, id="reader.down"),
        Binding("k", "cursor_up", "Up", show=False, id="reader.up"),
        # the list's own home/end/page keys under ids of the reader's, so that `?` lists them rebindable
        Binding("home", "first", "First sentence", show=False, id="reader.first"),
        Binding("end", "last", "Last sentence", show=False, id="reader.last"),
        Binding("pageup", "page_up", "Page up", show=False, id="reader.page_up"),
        Binding("pagedown", "page_down", "Page down", show=False, id="reader.page_down"),
        Binding("escape", "close", "Back", id="reader.back"),
    ]

    # enter (the list's "select") does nothing here, `y` is the reader's copy: neither is listed by `?`
    HELP_HIDES = frozenset({"select", "screen.copy_text"})

    def __init__(self, paper_id: str, parsed: ParsedQuery | None = None, method: str = "",
                 hits: list[Evidence] | None = None, *, focus: str | None = None,
                 verdicts: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.paper_id = paper_id
        self.parsed = parsed
        self.method = method
        self.ranked = {e.sentence.id: e for e in hits or []}
        self.focus_id = focus
        self.verdicts = verdicts or {}  # sentence id -> the judge's verdict, marked ▲ ▼ ● beside its rank
        self.paper: Paper | None = None
        self.sentences: dict[str, Sentence] = {}
        self.spans: dict[str, list[Span]] = {}
        self.hits: list[str] = []  # sentence ids, in reading order
        self.selected: set[str] = set()  # selected for this reader's question (✓)
        self.elsewhere: set[str] = set()  # selected for another question (◦ where not ✓)

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="reader-head")
        yield OptionList(id="reader-text")
        yield Static(id="reader-status")
        yield KeyBar()

    def on_mount(self) -> None:
        view, searcher = self.evtui.view, self.evtui.searcher
        if view is None or searcher is None:
            return
        text = searcher.read(self.paper_id, store=view.store)
        self.paper, sentences = text.paper, text.sentences
        if self.paper is None or not sentences:
            self.notify(f"paper {self.paper_id} is not in the library", title="Reader", severity="error")
            self.app.pop_screen()
            return
        # ✓ marks the sentences selected for this reader's question (as in the results), a dim ◦ those selected for
        # another question only; space acts on this one. Opened without a query (from the Library), the question is
        # the reading's own ("read in <paper>", what space selects for): a ✓ there for a sentence selected for a
        # search's question made space add it a second time, and the next space blank a sentence still selected.
        basket = self.evtui.basket
        if basket is not None:
            question = self.question()
            keys = basket.keys()
            self.selected = {sid for sid, q in keys if q == question}
            self.elsewhere = {sid for sid, q in keys if q != question}
        else:
            self.selected = set(self.evtui.selected_ids())
        aspects = self.parsed.aspects if self.parsed else []
        matcher = None
        if aspects:
            from evtui.query import compile_matcher

            matcher = compile_matcher(aspects)
        options: list[Option] = []
        section = None
        for s in sentences:
            self.sentences[s.id] = s
            self.spans[s.id] = matcher.spans(s.text) if matcher and not s.is_heading else []
            title = s.section_title or s.section_kind
            if title != section and not s.is_heading and s.section_kind != "title":
                options.append(Option(plain(title, "bold cyan", oneline=True), disabled=True))
            section = title
            if s.is_heading:
                options.append(Option(plain(s.text, "bold cyan"), id=s.id, disabled=True))
            else:
                options.append(Option(self.prompt(s), id=s.id))
        self.hits = [s.id for s in sentences if s.id in self.ranked]
        if not self.hits and aspects:
            # Opened without ranked hits in this paper: the sentences that cover the most aspects.
            best = max((len({h.aspect for h in sp}) for sp in self.spans.values()), default=0)
            self.hits = [s.id for s in sentences if best and len({h.aspect for h in self.spans[s.id]}) == best]
        ol = self.query_one(OptionList)
        ol.add_options(options)
        self.render_head()
        target = self.focus_id or (self.hits[0] if self.hits else None)
        if target is not None:
            self.call_after_refresh(self.goto, target)
        ol.focus()

    def palette_changed(self) -> None:
        if self.paper is None:
            return
        ol = self.query_one(OptionList)
        for sid, s in self.sentences.items():
            if not s.is_heading:
                ol.replace_option_prompt(sid, self.prompt(s))
        self.render_head()

    def render_head(self) -> None:
        p = self.paper
        if p is None:
            return
        out = Text(p.title + "\n", style="bold")
        authors = display_names(p.authors, 4)  # "García Márquez, Gabriel" shown "Gabriel García Márquez"
        meta = " · ".join(x for x in (authors, p.journal or "", str(p.year or ""), p.id) if x)
        out.append(meta + "\n", style="italic dim")
        if self.parsed is not None:
            # each chip and the hit count whole on its line ("10 | hit(s)" was split at 80 columns)
            head = self.query_one("#reader-head", Static)
            look = {"mono": self.app.no_color, "light": light_theme(self.app)}
            parts = [Text(f" {a.id}: {printable(a.label, oneline=True)} ", style=chip_style(i, **look))
                     for i, a in enumerate(self.parsed.aspects)]
            parts.append(Text(f" {len(self.hits)} hit(s) · n next · p previous", style="dim"))
            out.append_text(flow(parts, head.content_region.width or max(20, self.app.size.width - 4), sep="  "))
        else:
            out.append(f"{len(self.sentences)} sentences", style="dim")
        self.query_one("#reader-head", Static).update(safe_text(out))

    def prompt(self, s: Sentence) -> Table:
        """The mark and rank in a column of their own, so a wrapped sentence's next lines start under its text."""
        aspects = self.parsed.aspects if self.parsed else []
        e = self.ranked.get(s.id)
        mark = Text()
        if s.id in self.selected:
            mark.append("✓", style="bold green")
        elif s.id in self.elsewhere:
            mark.append("◦", style="dim green")
        else:
            mark.append(" ", style="bold green")  # styled as before: the reader snapshots keep their spacing
        if e is not None:
            mark.append(f"#{e.rank:<3}", style="bold reverse")
        if self.verdicts:  # where the user decides what to keep: the verdict the results showed
            mark.append(" ")
            mark.append_text(verdict_mark(self.verdicts[s.id]) if s.id in self.verdicts else Text(" "))
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(width=7 if self.verdicts else 5, no_wrap=True)
        grid.add_column(ratio=1)
        grid.add_row(mark, highlight(s.text, self.spans.get(s.id, []), aspects,
                                     base_style="bold" if s.section_kind == "title" else "", mono=self.app.no_color,
                                     light=light_theme(self.app)))
        return grid

    def question(self) -> str:
        """The question space selects for here: the search's, or without one the reading's own."""
        if self.parsed is not None:
            return self.parsed.text
        return f"read in {self.paper.id if self.paper is not None else self.paper_id}"

    def goto(self, sentence_id: str) -> None:
        ol = self.query_one(OptionList)
        try:
            ol.highlighted = ol.get_option_index(sentence_id)
        except Exception:  # noqa: BLE001 - an unknown id leaves the cursor where it is
            return
        ol.scroll_to_highlight(top=False)
        # the hit mid-screen, with the sentences after it in sight: at the bottom edge, a jump (n, or the reader
        # opened at a verdict's sentence) showed the hit as the last line and none of what followed it. Through the
        # list's line map (Textual's own, private: where absent the hit stays just in sight, as before).
        update_lines = getattr(ol, "_update_lines", None)
        if callable(update_lines):
            update_lines()
        y, heights = getattr(ol, "_index_to_line", {}).get(ol.highlighted), getattr(ol, "_heights", {})
        if y is not None and ol.highlighted in heights:
            ol.scroll_to_region(Region(0, y, ol.scrollable_content_region.width, heights[ol.highlighted]),
                                center=True, force=True, animate=False, immediate=True)
        self.show_status()

    def current_id(self) -> str | None:
        opt = self.query_one(OptionList).highlighted_option
        return opt.id if opt is not None else None

    def show_status(self) -> None:
        sid = self.current_id()
        out = Text()
        if sid in self.hits:
            out.append(f"hit {self.hits.index(sid) + 1}/{len(self.hits)}", style="bold")
            e = self.ranked.get(sid or "")
            if e is not None:
                out.append(f" · rank {e.rank} · score {e.score:.2f}")
        elif self.hits:
            out.append(f"{len(self.hits)} hit(s)", style="dim")
        tail = f"  · {len(self.selected)} selected" + (" (not saved)" if self.evtui.selection_note() else "")
        other = len((self.elsewhere - self.selected) & self.sentences.keys())  # in this paper
        if other:
            tail += f" · ◦ {other} for another question"
        if sid is not None:
            s = self.sentences[sid]
            # the section title gives way (cut with …) so the sentence number and selected count stay on the line
            where = f" · sentence {s.position}"
            status = self.query_one("#reader-status", Static)
            width = status.content_region.width or self.app.size.width - 2
            room = width - len(out.plain) - 2 - len(where) - len(tail)
            # under 8 cells a section title says nothing ("Ab…"): it goes, and the line stays one line
            section = f"  {short(s.section_title or s.section_kind, room)}" if room >= 8 else ""
            out.append(f"{section}{where}", style="dim")
        out.append(tail, style="dim")
        self.query_one("#reader-status", Static).update(safe_text(out))

    def on_resize(self) -> None:
        self.render_head()  # the chips' lines follow the width

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("next_hit", "previous_hit"):  # opened without a query (from the Library): no hits to visit
            return self.parsed is not None
        return True

    def on_option_list_option_highlighted(self) -> None:
        self.show_status()

    def _jump(self, step: int) -> None:
        if not self.hits:
            self.notify("no hits of the query in this paper", title="Reader", severity="warning")
            return
        order = {sid: i for i, sid in enumerate(self.sentences)}
        here = order.get(self.current_id() or "", -1)
        hits = sorted(self.hits, key=lambda sid: order[sid])
        if step > 0:
            nxt = next((h for h in hits if order[h] > here), hits[0])
        else:
            nxt = next((h for h in reversed(hits) if order[h] < here), hits[-1])
        self.goto(nxt)

    def action_next_hit(self) -> None:
        self._jump(1)

    def action_previous_hit(self) -> None:
        self._jump(-1)

    def cursor_list(self) -> OptionList:
        return self.query_one(OptionList)

    def action_first(self) -> None:
        self.cursor_list().action_first()

    def action_last(self) -> None:
        self.cursor_list().action_last()

    def action_page_up(self) -> None:
        self.cursor_list().action_page_up()

    def action_page_down(self) -> None:
        self.cursor_list().action_page_down()

    def action_toggle_select(self) -> None:
        app = self.evtui
        sid = self.current_id()
        if sid is None or app.basket is None or self.paper is None:
            return
        s = self.sentences[sid]
        ranked = self.ranked.get(sid)
        e = ranked or Evidence(rank=0, sentence=s, title=self.paper.title, score=0.0,
                               highlights=self.spans.get(sid, []))
        parsed = self.parsed or ParsedQuery(text=self.question(), mode="claim", aspects=[])
        # A sentence the search did not rank is stored as picked while reading (method "reader"), so the export
        # never shows its placeholder 0.0 as the ranking method's score.
        method = self.method if ranked is not None and self.method else READER_METHOD
        try:
            now = app.basket.toggle(e, parsed, method)
        except Exception as exc:  # noqa: BLE001
            self.notify(f"cannot change the selection: {exc}", title="Select", severity="error")
            return
        if now:
            self.selected.add(sid)
        else:
            self.selected.discard(sid)
        ol = self.query_one(OptionList)
        ol.replace_option_prompt(sid, self.prompt(s))
        self.show_status()

    def action_copy(self) -> None:
        """The sentence under the cursor with its citation to the clipboard, as `y` on the Search screen."""
        sid = self.current_id()
        if sid is None or self.paper is None:
            self.notify("move to a sentence first", title="Copy", severity="warning")
            return
        self.app.copy_to_clipboard(quoted(self.sentences[sid].text, self.paper, self.paper.id))
        self.notify("sentence and citation copied (OSC 52: the terminal must allow it)", title="Copy", timeout=3)

    def action_close(self) -> None:
        self.app.pop_screen()
