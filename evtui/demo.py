"""The bundled demo library: found beside the source tree (editable install) or under <prefix>/share/evtui."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from evtui.library import IngestProgress, IngestReport, Library


def demo_dir() -> Path | None:
    env = os.environ.get("EVTUI_DEMO_DIR")
    candidates = [Path(env)] if env else []
    candidates += [
        Path(__file__).resolve().parent.parent / "data" / "demo",
        Path(sys.prefix) / "share" / "evtui" / "demo",
    ]
    for c in candidates:
        if c.is_dir() and any(c.iterdir()):
            return c
    return None


def ensure_demo(library: Library, on_progress: Callable[[IngestProgress], None] | None = None) -> IngestReport | None:
    """Load the demo library into an empty data home once (unless the user turned `demo` off). In a home that has
    it, the demo papers an earlier evtui read wrongly are read again instead (see `correct_demo`); None then."""
    if not library.config.demo:
        return None
    loaded = library.store.get_meta("demo_loaded")
    if loaded:
        correct_demo(library, loaded, on_progress)
        return None
    if not library.is_empty():
        return None
    src = demo_dir()
    if src is None:
        return None
    report = library.ingest([src], on_progress=on_progress)
    library.store.set_meta("demo_loaded", str(src))
    return report


def correct_demo(library: Library, loaded: str,
                 on_progress: Callable[[IngestProgress], None] | None = None) -> IngestReport | None:
    """Read again the demo papers that an earlier evtui stored wrongly (Library.stale_reads: the 12 JATS articles
    with their abstract twice), from the demo as installed now, else from where it was loaded: those papers'
    rows are replaced, nothing else is touched (other papers, selections, verdicts), and a demo paper the user
    removed stays removed. Costs one meta read when there is nothing to correct (every launch but one)."""
    stale = library.stale_reads()
    if not stale:
        return None
    bases = [b for b in (demo_dir(), Path(loaded)) if b is not None]
    files: list[Path] = []
    for path in stale.values():
        try:
            rel = Path(path).relative_to(loaded)
        except ValueError:  # the user's own copy of a paper, not the demo's: Library's note names it
            continue
        found = next((b / rel for b in bases if (b / rel).is_file()), None)
        if found is not None:
            files.append(found)
    if not files:
        return None
    return library.ingest(files, on_progress=on_progress)
