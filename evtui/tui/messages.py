"""Typed messages: how workers (threads) report back to the screens that started them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from textual.message import Message

if TYPE_CHECKING:
    from evtui.library import IngestProgress, IngestReport, Library
    from evtui.search import SearchResult


class LibraryReady(Message):
    def __init__(self, library: Library, note: str, notices: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__()
        self.library = library
        self.note = note
        self.notices = notices  # (severity, text): what opening repaired or rebuilt, said once


class LibraryFailed(Message):
    def __init__(self, reason: str) -> None:
        super().__init__()
        self.reason = reason


class IngestStep(Message):
    """Progress of an ingest (the demo library on first launch, or files added in the Library screen)."""

    def __init__(self, progress: IngestProgress) -> None:
        super().__init__()
        self.files_done = progress.files_done
        self.files_total = progress.files_total
        self.papers_seen = progress.papers_seen
        self.current = progress.current


class IngestFinished(Message):
    def __init__(self, report: IngestReport) -> None:
        super().__init__()
        self.report = report


class LibraryChanged(Message):
    """Papers were added or removed: lists and suggestions refresh."""


class SelectionArrived(Message):
    """`evtui select` beside the app handed it rows, now in the selection (evtui/inbox.py)."""

    def __init__(self, added: int, cleared: bool, error: str | None = None) -> None:
        super().__init__()
        self.added = added
        self.cleared = cleared
        self.error = error


class SearchDone(Message):
    def __init__(self, result: SearchResult, seconds: float, keep_row: int = 0) -> None:
        super().__init__()
        self.result = result
        self.seconds = seconds
        self.keep_row = keep_row


class WorkFailed(Message):
    """Any worker's failure, with the reason fit to show (`what` names the flow: Query, Ingest, Judge...)."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__()
        self.what = what
        self.reason = reason


class JudgeEstimate(Message):
    def __init__(self, estimate: Any, n: int) -> None:
        super().__init__()
        self.estimate = estimate
        self.n = n


class JudgeScored(Message):
    def __init__(self, judgment: Any) -> None:
        super().__init__()
        self.judgment = judgment


class JudgeDone(Message):
    def __init__(self, judgments: list[Any], seconds: float) -> None:
        super().__init__()
        self.judgments = judgments
        self.seconds = seconds


class SweepProgress(Message):
    def __init__(self, run: int, runs: int, done: int, total: int, label: str) -> None:
        super().__init__()
        self.run = run
        self.runs = runs
        self.done = done
        self.total = total
        self.label = label


class SweepRunDone(Message):
    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__()
        self.result = result


class SweepFinished(Message):
    def __init__(self, completed: int, cancelled: bool) -> None:
        super().__init__()
        self.completed = completed
        self.cancelled = cancelled


class SweepEstimate(Message):
    """What the selected sweep will cost (an evtui.bench.estimate.SweepCost, or a one-line reason it has none)."""

    def __init__(self, key: tuple[Any, ...], cost: Any) -> None:
        super().__init__()
        self.key = key  # the selection it was made for: a newer selection's estimate replaces it
        self.cost = cost


class ItemDetail(Message):
    def __init__(self, key: str, text: Any) -> None:
        super().__init__()
        self.key = key
        self.text = text


class EmbedProgress(Message):
    """Background embedding of the library (Library screen `m`): papers (their title + abstract vectors, first)
    or sentences embedded so far of those missing."""

    def __init__(self, done: int, total: int, what: str = "sentences") -> None:
        super().__init__()
        self.done = done
        self.total = total
        self.what = what


class EmbedFinished(Message):
    def __init__(self, embedded: int, total: int, cancelled: bool, seconds: float) -> None:
        super().__init__()
        self.embedded = embedded
        self.total = total
        self.cancelled = cancelled
        self.seconds = seconds
