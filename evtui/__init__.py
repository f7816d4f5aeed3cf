"""evtui: evidence search over scientific papers (domain core; the TUI lives in evtui.tui)."""

__version__ = "0.1.0"
