"""A Checkbox whose box is empty when off: Textual draws an X in both states and tells them apart by colour alone
(the same fix as CheckList, for a single option)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Checkbox


class TickBox(Checkbox):
    """Ticked: ✔ in the box; unticked: an empty box."""

    TICK = "✔"

    @property
    def _button(self) -> Content:
        self.BUTTON_INNER = self.TICK if self.value else " "
        return super()._button
