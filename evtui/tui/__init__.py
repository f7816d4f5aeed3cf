"""Textual UI for evtui: the only package allowed to import textual."""
