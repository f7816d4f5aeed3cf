"""The Search screen (screen.py), one module per part: header (query bar, chips, status and notes lines), searching
(filters, the request, the search worker), results (the table, ranks, verdict bar), detail (layout and the side pane)
and judging (automatic and asked-for verdicts), over the state they share (common.py)."""

from evtui.tui.screens.search.common import (
    AUTO_CHUNK,
    DETAIL_DELAY,
    FEW_HITS,
    FIRST_K,
    MAX_K,
    NARROW,
    NOTES_LINES,
    SHORT,
    SHORT_ROW_LINES,
    STANCE_CYCLE,
    AutoVerdicts,
    _methods,
    derive_terms,
)
from evtui.tui.screens.search.screen import SearchScreen

__all__ = [
    "AUTO_CHUNK",
    "DETAIL_DELAY",
    "FEW_HITS",
    "FIRST_K",
    "MAX_K",
    "NARROW",
    "NOTES_LINES",
    "SHORT",
    "SHORT_ROW_LINES",
    "STANCE_CYCLE",
    "AutoVerdicts",
    "SearchScreen",
    "_methods",
    "derive_terms",
]
