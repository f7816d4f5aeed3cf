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
    """Load the demo library into an empty data home once (unless the user turned `demo` off)."""
    if not library.config.demo or not library.is_empty() or library.store.get_meta("demo_loaded"):
        return None
    src = demo_dir()
    if src is None:
        return None
    report = library.ingest([src], on_progress=on_progress)
    library.store.set_meta("demo_loaded", str(src))
    return report
