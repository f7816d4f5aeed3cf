"""A DataTable that renders its rows a page at a time, as the cursor or the scroll nears the end.

Rows with wrapped, highlighted sentences are measured when added; adding 1,000 at once costs about a second,
a page of 40 a few tens of milliseconds. The data behind the table is kept whole (`items`), so ranks, keys and
selection stay exact while rows appear on demand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from textual import events
from textual.binding import Binding
from textual.message import Message
from textual.widgets import DataTable

from evtui.render import cell

T = TypeVar("T")
RowSpec = tuple[Sequence[Any], str, "int | None"]  # cells, row key, height (None: fit the content)


class RowTable(DataTable[Any]):
    """A DataTable whose home / end go to the first / last row (DataTable's own scroll sideways, which in a table
    that fits its width does nothing: dead keys that help listed)."""

    BINDINGS = [
        Binding("home", "first_row", "First row", show=False, id="list.first"),
        Binding("end", "last_row", "Last row", show=False, id="list.last"),
    ]

    def action_first_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=0, animate=False)

    def action_last_row(self) -> None:
        if self.row_count:
            self.move_cursor(row=self.row_count - 1, animate=False)


class PagedTable(RowTable, Generic[T]):
    PAGE = 24
    AHEAD = 8  # load the next page when the cursor comes this close to the last rendered row

    class WidthChanged(Message):
        """The table's width changed (the terminal was resized, a side pane opened or closed): rows laid out for
        the old width (wrapped, or columns sized to fit) need rendering again."""

        def __init__(self, table: PagedTable[Any], width: int) -> None:
            super().__init__()
            self.table = table
            self.width = width

        @property
        def control(self) -> PagedTable[Any]:
            return self.table

    class RowsAdded(Message):
        """Rows were rendered (a page as the cursor or the scroll neared the end)."""

        def __init__(self, table: PagedTable[Any], rows: range) -> None:
            super().__init__()
            self.table = table
            self.rows = rows  # their indexes (not `start`/`stop`: Message.stop() is a method)

        @property
        def control(self) -> PagedTable[Any]:
            return self.table

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.items: list[T] = []
        self._render_row: Callable[[T], RowSpec] | None = None
        self._seen_width = 0

    def reset(self) -> None:
        """No rows, no columns, no items behind them."""
        self.clear(columns=True)
        self.items = []
        self._render_row = None

    def load(self, items: Sequence[T], render_row: Callable[[T], RowSpec], *, upto: int = 0) -> None:
        """Replace the rows: render the first page (or enough pages to show row `upto`)."""
        self.clear()
        self.items = list(items)
        self._render_row = render_row
        self.more(max(self.PAGE, upto + self.AHEAD + 1))

    @property
    def rendered(self) -> int:
        return self.row_count

    @property
    def has_more(self) -> bool:
        return self.row_count < len(self.items)

    def more(self, n: int | None = None) -> int:
        """Render up to `n` (default one page) more rows; returns how many were added."""
        if self._render_row is None or not self.has_more:
            return 0
        start = self.row_count
        stop = min(len(self.items), start + (n or self.PAGE))
        for item in self.items[start:stop]:
            cells, key, height = self._render_row(item)
            self.add_row(*(cell(c) for c in cells), key=key, height=height)  # paper text: never markup
        if stop > start:
            self.post_message(self.RowsAdded(self, range(start, stop)))
        return stop - start

    def action_last_row(self) -> None:
        """The last row of all the items, rendering those not rendered yet."""
        if self.has_more:
            self.more(len(self.items) - self.row_count)
        super().action_last_row()

    def on_resize(self, _event: events.Resize) -> None:
        width = self.size.width
        if width != self._seen_width:
            self._seen_width = width
            self.post_message(self.WidthChanged(self, width))

    def item_at_cursor(self) -> T | None:
        row = self.cursor_row
        return self.items[row] if 0 <= row < min(len(self.items), self.row_count) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        if event.cursor_row >= self.row_count - self.AHEAD and self.has_more:
            self.more()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.has_more and new_value >= self.max_scroll_y - self.size.height:
            self.call_later(self.more)
