"""Reusable widgets: the editable aspect chips and the lazily paged table."""

from evtui.tui.widgets.checklist import CheckList
from evtui.tui.widgets.chips import AspectBar
from evtui.tui.widgets.keybar import KeyBar
from evtui.tui.widgets.paged import PagedTable, RowTable
from evtui.tui.widgets.pane import TextPane

__all__ = ["AspectBar", "CheckList", "KeyBar", "PagedTable", "RowTable", "TextPane"]
