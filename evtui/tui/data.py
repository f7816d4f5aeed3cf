"""What the screens share besides widgets: the UI thread's own view of the library, and cell renderers.

The Library's DuckDB connection belongs to the workers (search, ingest, judge, bench saves take turns on it
under `EvtuiApp.db_lock`). The UI thread reads through a *second* connection to the same in-process database
(`LibraryView`), so a long ingest never freezes the detail pane, the paper reader or the selection basket.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from evtui.config import Config
from evtui.render import bar as bar  # re-exported: the screens' table helpers live with the renderers
from evtui.render import printable
from evtui.render import short as short
from evtui.store import Store

if TYPE_CHECKING:
    from evtui.export import Basket
    from evtui.library import Library

# Rubric level (0–5) → colour of the judge score; the same scale the CLI's judge output uses.
LEVEL_COLORS: dict[int, str] = {
    0: "grey50", 1: "red3", 2: "dark_orange", 3: "yellow3", 4: "chartreuse3", 5: "bold green1",
}
# The same scale on a light theme: yellow3, chartreuse3 and green1 are all but invisible on white (these are 256-colour
# values, which Textual's light ANSI theme does not remap as it does "yellow" or "green").
LEVEL_COLORS_LIGHT: dict[int, str] = {
    0: "grey42", 1: "red3", 2: "#af5f00", 3: "#7f6a00", 4: "green4", 5: "bold dark_green",
}
STANCE_GLYPHS: dict[str, str] = {"supports": "▲", "refutes": "▼", "neutral": "●"}
# A neutral whose verifier leaned to a side below its precision threshold: a hollow triangle, dim ("leans ▼").
LEAN_GLYPHS: dict[str, str] = {"supports": "△", "refutes": "▽"}


STANCE_STYLES: dict[str, str] = {"supports": "bold green", "refutes": "bold red", "neutral": "grey62"}


def verdict_mark(verdict: Any | None) -> Text:
    """▲ / ▼ / ● for a verdict's stance (a dict, as the selection holds it, or a Judgment); a dim · when not judged."""
    stance = verdict.get("stance") if isinstance(verdict, dict) else getattr(verdict, "stance", None)
    if stance in STANCE_GLYPHS:
        return Text(STANCE_GLYPHS[stance], style=STANCE_STYLES[stance])
    return Text("·", style="dim")


def light_theme(app: Any) -> bool:
    """The app's theme is a light one: aspect colours come from the palette that reads on white (evtui.render)."""
    theme = getattr(app, "current_theme", None)
    return theme is not None and not theme.dark


class Gated:
    """`obj` with every method call made under `gate`: the app holds the gate while the shared library reopens
    DuckDB around a write (Library.rw), so no UI-thread read runs on a connection being closed."""

    def __init__(self, obj: Any, gate: threading.RLock) -> None:
        self._obj = obj
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._obj, name)
        if not callable(attr) or name == "con":
            return attr

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._gate:
                return attr(*args, **kwargs)

        return call


class LibraryView:
    """A second connection (a cursor of the library's store, re-derived when the library reopens DuckDB) for
    the UI thread or a worker. It has the `store` and `config` that Basket and write_export use."""

    def __init__(self, library: Library, gate: threading.RLock | None = None) -> None:
        self.config: Config = library.config
        self.library = library
        self._cursor: Store = library.store.cursor()
        self.store: Any = Gated(self._cursor, gate) if gate is not None else self._cursor

    @property
    def read_only(self) -> bool:
        return bool(self._cursor.read_only)

    def close(self) -> None:
        self._cursor.close()


class SharedBasket:
    """The Basket for the app: reads under the gate, each change inside Library.rw() (DuckDB is read-only
    between writes, so a CLI beside the app can read the library)."""

    WRITES = frozenset({"add", "add_row", "remove", "toggle", "move", "clear"})
    saved = True  # each change is in the library file (MemoryBasket: not)

    def __init__(self, basket: Basket, library: Library, gate: threading.RLock) -> None:
        self._basket = basket
        self._library = library
        self._gate = gate

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._basket, name)
        if not callable(attr):
            return attr
        write = name in self.WRITES

        def call(*args: Any, **kwargs: Any) -> Any:
            with self._write_window() if write else nullcontext(), self._gate:
                out = attr(*args, **kwargs)
            if write:
                self._changed()
            return out

        return call

    def _write_window(self) -> AbstractContextManager[object]:
        return self._library.rw(wait=2.0)

    def _changed(self) -> None:
        """After a change: stored already, nothing to remember."""


# What the app says wherever a read-only library's selection shows (select, the Export screen, quitting).
NOT_SAVED = "selection not saved: library is read-only"
# What a library without a paper says where results would be (Search, claim verdicts): the way to fill it.
EMPTY_LIBRARY = "the library is empty: l opens the Library, where a adds files or folders (PDF, JATS XML, .bib, " \
    "a Zotero folder…)"


class MemoryBasket(SharedBasket):
    """The selection of an app whose library is read-only (a colleague's share, a read-only mount, a full disk):
    the domain Basket over a TEMP `selections` table of the UI thread's own connection, which shadows the stored
    one. Select, reorder, remove, clear and export (write_export reads through the same connection) all work, and
    nothing reaches the library file; it starts as the stored selection and ends with the app."""

    saved = False

    def __init__(self, view: LibraryView, library: Library, gate: threading.RLock) -> None:
        from evtui.export import SELECTIONS_DDL, Basket

        self.unexported = False  # changed since the last export: quitting asks first (it would be lost)

        with gate:
            con = view.store.con
            stored = con.execute(
                "SELECT sentence_id, position, coalesce(query, '') AS query, mode, aspects, highlights, method,"
                " score, added_at FROM selections").fetchall() if con.execute(
                "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'selections'").fetchone()[0] else []
            # TEMP: a read-only DuckDB still makes a connection's own temporary tables (in memory), and they come
            # first in name resolution, so from here on the Basket's SQL reads and writes this one.
            con.execute(SELECTIONS_DDL.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
            if stored:  # the colleague's selection, to start from
                con.executemany("INSERT OR REPLACE INTO selections (sentence_id, position, query, mode, aspects,"
                                " highlights, method, score, added_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", stored)
        super().__init__(Basket(view), library, gate)  # type: ignore[arg-type]  # Basket needs .store only

    def _write_window(self) -> AbstractContextManager[object]:
        return nullcontext()  # never Library.rw(): that refuses every write of a read-only library

    def _changed(self) -> None:
        self.unexported = True


def flow(parts: Sequence[Text], width: int, sep: str | Sequence[str] = " ") -> Text:
    """`parts` on as few lines of `width` cells as they fit, a line ending only between two parts: Rich wraps at any
    space, which split an aspect chip ("a8:" | "reduce"), "10 | hit(s)" and "pubtator | 1,500" over two lines. A part
    wider than a line starts one of its own and wraps inside it. `sep` goes between two parts on one line (a list:
    the one before each part after the first). `width` 0 (not laid out yet): no breaks."""
    out = Text()
    col = 0
    for i, part in enumerate(parts):
        w = part.cell_len
        if i:
            gap = sep if isinstance(sep, str) else sep[i - 1]
            if width > 0 and col + len(gap) + w > width:
                out.append("\n")
                col = 0
            else:
                out.append(gap)
                col += len(gap)
        out.append_text(part)
        col = width if width > 0 and col + w > width else col + w  # a part that wrapped ends its line
    return out


def score_bar(score: float, best: float, width: int = 8) -> Text:
    frac = 0.0 if best <= 0 else max(0.0, min(1.0, score / best))
    full = int(round(frac * width))
    out = Text()
    out.append("█" * full + "░" * (width - full), style="green")
    out.append(f"{score:6.1f}", style="dim")
    return out


def judge_cell(judgment: Any | None, pending: bool = False, *, light: bool = False) -> Text:
    """Judge score 0–100 coloured by rubric level, with the stance glyph (▲ supports, ▼ refutes, ● neutral)."""
    if judgment is None:
        return Text("  …" if pending else "", style="dim")
    status = getattr(judgment, "status", "ok")
    if status == "skipped":
        return Text("  –", style="dim")
    if status != "ok":
        return Text("  ✗", style="red")
    level = int(judgment.level)
    glyph = STANCE_GLYPHS.get(judgment.stance, "?")
    colours = LEVEL_COLORS_LIGHT if light else LEVEL_COLORS
    if lean := LEAN_GLYPHS.get(getattr(judgment, "lean", "") or ""):  # below the side's threshold: a hollow mark
        out = Text(style=colours.get(level, ""))
        out.append(lean, style="dim")
        out.append(f" {int(judgment.score):3d}")
        return out
    return Text(f"{glyph} {int(judgment.score):3d}", style=colours.get(level, ""))


def judge_lines(judgment: Any, *, light: bool = False) -> Text:
    """The judge's verdict for the detail pane: level, score, stance, confidence, rationale, model."""
    out = Text()
    out.append("judge ", style="bold")
    if getattr(judgment, "status", "ok") != "ok":
        out.append(printable(f"{judgment.status}: {judgment.error or 'no verdict'}") + "\n", style="red")
        return out
    style = (LEVEL_COLORS_LIGHT if light else LEVEL_COLORS).get(int(judgment.level), "")
    label = getattr(judgment, "label", "")
    out.append(f"{int(judgment.score)}/100 · level {judgment.level} {label}", style=style)
    out.append(f" · {STANCE_GLYPHS.get(judgment.stance, '?')} {judgment.stance}")
    if lean := getattr(judgment, "lean", ""):
        out.append(f" (leans {STANCE_GLYPHS.get(lean, '?')}, below the threshold for a side)", style="dim")
    out.append(f" · confidence {judgment.confidence}/10\n")
    if judgment.rationale:
        out.append(printable(judgment.rationale) + "\n", style="italic")
    out.append(printable(f"{judgment.judge} · {judgment.model}"), style="dim")
    if getattr(judgment, "cost", 0.0):
        out.append(f" · ${judgment.cost:.4f}", style="dim")
    out.append("\n")
    return out


def browser_available() -> bool:
    """Whether `open_url` can show a page: a desktop (macOS, Windows, an X or Wayland display) or a browser the user
    named ($BROWSER). Without them Python's webbrowser finds nothing, or a text browser that would take over the
    app's terminal."""
    import os
    import sys

    if sys.platform in ("darwin", "win32") or os.environ.get("BROWSER"):
        return True
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def default_dataset() -> Path | None:
    """The bundled EvidenceBench dev set (data/bench, installed with evtui), else the one beside the checkout
    (../shared), when there is one."""
    from evtui.demo import bundled_bench

    if (bundled := bundled_bench("evidencebench")) is not None:
        return bundled
    rel = Path("..") / "shared" / "datasets" / "evidencebench" / "evidencebench_dev_set.json"
    repo = Path(__file__).resolve().parents[2]
    for cand in (Path.cwd() / rel, repo / rel):
        if cand.is_file():
            return cand.resolve()
    return None


def quoted(text: str, paper: Any | None, paper_id: str) -> str:
    """A sentence as `y` copies it: on one line, in quotes, with its paper's citation (the id if it has none)."""
    from evtui.export import citation

    return f"“{' '.join(printable(text).split())}” — {citation(paper) if paper else paper_id}"
