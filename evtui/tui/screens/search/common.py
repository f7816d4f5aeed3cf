"""What the Search screen's parts share: its constants, the automatic judge's message, the method list, and
`SearchBase`, the state SearchScreen.__init__ sets with the methods one part calls of another (declared for the type
checker). Each part (header, searching, results, detail, judging) is a mixin over it; screen.py assembles them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

from evtui.models import Evidence
from evtui.tui.base import EvtuiScreen

if TYPE_CHECKING:
    from rich.text import Text
    from textual.timer import Timer

    from evtui.models import ParsedQuery
    from evtui.request import Filters
    from evtui.search import SearchResult

FIRST_K = 50  # a search asks for this many (or config.k, if larger) ...
MAX_K = 1000  # ... and fetches more, doubling, when the cursor reaches the last row
DETAIL_DELAY = 0.06  # seconds the cursor rests before the detail pane follows it
NARROW = 110  # below this width the detail pane hides until `d` (the sentence column keeps 40+ columns)
STANCE_CYCLE: tuple[str | None, ...] = (None, "supports", "refutes", "neutral")
NOTES_LINES = 3  # rows of the notes line at most (app.tcss #notes); longer ones end "… (all in the side pane: d)"
# Below this height (24 rows) the header folds (no aspect chips, one notes row) and each result takes two rows at
# most, the rest of its sentence cut with "…" (the detail pane, d, has it whole): 80×24 showed three results.
SHORT = 30
SHORT_ROW_LINES = 2
AUTO_CHUNK = 8  # the automatic local judge posts its verdicts this many at a time (a new search cancels it)


class AutoVerdicts(Message):
    """Verdicts of the automatic local judge (or cached ones) for the query they were made for."""

    def __init__(self, query: str, judgments: list[Any], done: bool = False, *, generation: int = 0,
                 ids: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.query = query
        self.judgments = judgments
        self.done = done
        self.generation = generation  # the search it belongs to (SearchScreen.generation)
        self.ids = ids  # with done: the rows this worker was asked to judge (no longer pending, verdict or not)


def _methods() -> tuple[tuple[str, ...], str]:
    """The Searcher's methods as the registry has them now (never a copy)."""
    from evtui import methods

    return methods.search_methods(), methods.DEFAULT_METHOD


def derive_terms(label: str, role: str, abbreviations: dict[str, str] | None = None) -> list[str]:
    from evtui.query import concept_variants, relation_terms

    return relation_terms(label) if role == "relation" else concept_variants(label, abbreviations)


FEW_HITS = 3  # fewer matching sentences than this: the app offers a look in Europe PMC (ctrl+g)


class SearchBase(EvtuiScreen):
    """The Search screen's state (set in SearchScreen.__init__, where each field says what it is)."""

    result: SearchResult | None
    search_k: int
    judgments: dict[str, Any]
    judge_pending: set[str]
    detail_row: int | None
    _chips_text: str
    _parse_timer: Timer | None
    _searching: bool
    _rendered_width: int
    _rendered_short: bool
    _detail_timer: Timer | None
    detail_wanted: bool | None
    filters_open: bool
    stance: str | None
    grouped: bool
    kept: list[Evidence]
    partly: dict[str, frozenset[str]]
    rows: list[Evidence]
    group_heads: set[str]
    honest_notes: list[str]
    search_notes: str
    notes_text: str
    notes_cut: bool
    judge_failure: str | None
    generation: int
    _more: bool
    _resume_focus: Any
    _history_at: int | None
    library_empty: bool
    _submitted: str
    _typed: str

    if TYPE_CHECKING:  # defined by one part, called by another
        def status(self, text: str | Text) -> None: ...
        def show_notes(self, notes: str) -> None: ...
        def refresh_notes(self) -> None: ...
        def show_mode(self, mode: str) -> None: ...
        def current_query(self) -> str | ParsedQuery: ...
        def filters(self) -> Filters: ...
        def run_search(self, *, more: bool = False) -> None: ...
        def render_results(self, *, keep_row: int = 0) -> None: ...
        def update_verdicts(self) -> None: ...
        def apply_layout(self) -> None: ...
        def schedule_detail(self, row: int) -> None: ...
        def show_detail(self, row: int) -> None: ...
        def auto_judge(self) -> None: ...
