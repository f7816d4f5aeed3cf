"""The app's screens: one module per mode (search, library, bench, export), the reader, the verdicts and the
dialogs. Each imports evtui.tui.base, never evtui.tui.app."""
