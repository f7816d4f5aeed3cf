"""Claim-level verdicts: which papers of the library support the query, which refute it, which only mention it."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from rich.table import Table
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.widgets import Header, OptionList, Static
from textual.widgets.option_list import Option

from evtui.errors import EvtuiError
from evtui.judge.claims import CLAIM_PAPERS
from evtui.render import TailKept, safe_text
from evtui.tui.base import EvtuiScreen
from evtui.tui.data import EMPTY_LIBRARY
from evtui.tui.messages import WorkFailed
from evtui.tui.widgets.keybar import KeyBar
from evtui.verify.model import default_verifier

if TYPE_CHECKING:
    from evtui.judge.claims import ClaimVerdict, PaperVerdict
    from evtui.models import ParsedQuery

_LABEL = {"SUPPORT": ("▲ supports", "bold green"), "CONTRADICT": ("▼ refutes", "bold red"),
          "NEI": ("● no evidence", "dim")}


LABEL_WIDTH = 18  # "● no evidence" and the confidence: "▲ supports    0.68"


class VerdictsDone(Message):
    def __init__(self, verdict: ClaimVerdict, seconds: float, *, empty: bool = False) -> None:
        super().__init__()
        self.verdict = verdict
        self.seconds = seconds
        self.empty = empty  # the library has no paper at all


class VerdictsScreen(EvtuiScreen):
    """Opened with `c` from Search: the query verified paper by paper with the offline verifier (in a worker)."""

    FAILURE_TIMEOUT = None
    BINDINGS = [
        # priority: the list's own enter (select) came first, so enter did nothing and the key bar never showed it
        Binding("enter", "open_paper", "Open paper", priority=True, id="verdicts.open"),
        Binding("j", "cursor_down", "Down", show=False, id="verdicts.down"),
        Binding("k", "cursor_up", "Up", show=False, id="verdicts.up"),
        Binding("escape", "close", "Back", id="verdicts.back"),
    ]
    DEFAULT_CSS = """
    VerdictsScreen #verdicts-head { padding: 0 1; height: auto; }
    VerdictsScreen OptionList { height: 1fr; }
    """

    def __init__(self, query: str, papers: int = CLAIM_PAPERS) -> None:
        super().__init__()
        self.claim = query
        self.papers = papers
        self.verdict: ClaimVerdict | None = None

    def compose(self) -> ComposeResult:
        yield Header()
        yield Static(id="verdicts-head")
        yield OptionList(id="verdicts-list")
        yield KeyBar()

    def on_mount(self) -> None:
        head = Text(self.claim + "\n", style="bold")
        head.append(f"verifying the {self.papers} best-matching papers with the offline verifier…", style="dim")
        self.query_one("#verdicts-head", Static).update(safe_text(head))
        self.query_one(OptionList).focus()
        self.verify()

    @work(thread=True, exclusive=True, group="verdicts")
    def verify(self) -> None:
        from evtui.judge.claims import verify_claim

        searcher = self.evtui.searcher
        if searcher is None:
            self.post_message(WorkFailed("Verify", "the library is still opening"))
            return
        t0 = time.perf_counter()
        with self.failures("Verify", lambda exc: str(exc) or type(exc).__name__):
            # The library's one DuckDB connection is shared by the workers, which take turns (db_lock): unlocked,
            # this ran beside the automatic judge and through its switch to read-write that reopens the connection.
            with self.evtui.db_lock:
                verdict = verify_claim(searcher.library, self.claim, papers=self.papers, searcher=searcher)
                empty = not verdict.papers and searcher.library.is_empty()
            self.post_message(VerdictsDone(verdict, time.perf_counter() - t0, empty=empty))

    def work_failed(self, msg: WorkFailed) -> None:
        self.query_one("#verdicts-head", Static).update(safe_text(Text(f"{self.claim}\ncould not verify: "
                                                                         f"{msg.reason}", style="red")))

    def on_verdicts_done(self, msg: VerdictsDone) -> None:
        self.verdict = v = msg.verdict
        head = Text(self.claim + "\n", style="bold")
        head.append(v.summary_line() + "\n", style="bold")
        # What a side is worth, measured on claims the verifier never saw (not its in-sample figures).
        worth = default_verifier().reliability(short=True) or "a side only above its precision threshold"
        head.append(f"verifier {v.model} (offline, trained on SciFact + Check-COVID) · {msg.seconds:.1f}s · {worth}",
                    style="dim")
        self.query_one("#verdicts-head", Static).update(safe_text(head))
        ol = self.query_one(OptionList)
        ol.clear_options()
        if not v.papers:
            why = EMPTY_LIBRARY if msg.empty else "no paper in the library matches this query"
            ol.add_option(Option(Text(why, style="yellow"), disabled=True))
            return
        for n, p in enumerate(v.papers):
            ol.add_option(Option(self.paper_prompt(p), id=str(n)))
        ol.highlighted = 0  # the cursor on the first paper: enter opens the one the user sees chosen

    @staticmethod
    def paper_prompt(p: PaperVerdict) -> Table:
        """The verdict and confidence in a column of their own, so a wrapped title or rationale continues under its
        text (at 80 columns each paper's lines ran back to the left edge, and the papers ran into each other)."""
        label, style = _LABEL[p.label]
        grid = Table.grid(padding=(0, 1, 0, 0))
        grid.add_column(width=LABEL_WIDTH, no_wrap=True)
        grid.add_column(ratio=1)
        head = Text(p.title or p.paper_id, style="bold")
        head.append(f"  {p.paper_id}", style="cyan")
        grid.add_row(Text.assemble((f"{label:<14}", style), (f"{p.confidence:4.2f}", "dim")), safe_text(head))
        for r in p.rationales:
            # the probabilities as one group: at the end of the sentence's last line if whole, else below it
            odds = Text(f"(P support {r.p_support:.2f} · refute {r.p_refute:.2f})", style="dim")
            grid.add_row(Text(f"#{r.position}", style="dim", justify="right"), TailKept(safe_text(Text(r.text)), odds))
        if not p.rationales:
            grid.add_row("", Text("mentions the topic; no sentence takes a side", style="dim"))
        return grid

    def cursor_list(self) -> OptionList:
        return self.query_one(OptionList)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.action_open_paper()  # a click on a paper opens it, as enter does

    def action_open_paper(self) -> None:
        ol = self.query_one(OptionList)
        if self.verdict is None or not self.verdict.papers:
            return
        if ol.highlighted is None:
            ol.highlighted = 0  # nothing highlighted yet (the list was just filled): the first paper
        option = ol.get_option_at_index(ol.highlighted)
        if option.id is None:
            return
        p = self.verdict.papers[int(option.id)]
        from evtui.tui.screens.reader import ReaderScreen

        focus = p.rationales[0].sentence_id if p.rationales else None
        self.app.push_screen(ReaderScreen(p.paper_id, self.parsed_claim(), "verify", [], focus=focus))

    def parsed_claim(self) -> ParsedQuery | None:
        """The claim's aspects, so that the reader lights them up and n/p move between the sentences that cover
        the most of them (None: the reader shows the paper plain)."""
        searcher = self.evtui.searcher
        if searcher is None:
            return None
        try:
            return searcher.parse(self.claim)
        except EvtuiError:
            return None

    def action_close(self) -> None:
        self.app.pop_screen()
