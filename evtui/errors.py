"""Errors the user sees: each carries a message fit to print, never a traceback."""

from __future__ import annotations


class EvtuiError(Exception):
    """Base class for errors shown to the user as a clear message."""


class IngestError(EvtuiError):
    """A source file could not be loaded; the path and the reason are kept for the report."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason


class QueryError(EvtuiError):
    """A query that cannot be turned into a search (empty, nothing searchable)."""


class LibraryLockedError(EvtuiError):
    """Another process holds the writable library."""
