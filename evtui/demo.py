"""The bundled demo library: found beside the source tree (editable install) or under <prefix>/share/evtui."""

from __future__ import annotations

import gzip
import os
import sys
import zlib
from collections.abc import Callable
from functools import cache
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


# The small public benchmark sets bundled beside the demo (data/bench; data/README.md says what and under which
# licence): `evtui bench evidencebench` / `bench scifact` without data flags and the Bench screen run on them.
BUNDLED_BENCH = {"evidencebench": "evidencebench_dev.json", "scifact-claims": "scifact_claims_train.jsonl",
                 "scifact-corpus": "scifact_corpus.jsonl.gz"}


def bundled_bench(what: str) -> Path | None:
    """A bundled benchmark file (a BUNDLED_BENCH key) from data/bench beside the source tree (editable install) or
    <prefix>/share/evtui/bench (wheel); the SciFact corpus is the demo's own abstracts. None when not installed."""
    name = BUNDLED_BENCH[what]
    env = os.environ.get("EVTUI_BENCH_DIR")
    roots = [Path(env)] if env else []
    here = Path(__file__).resolve().parent.parent / "data"
    share = Path(sys.prefix) / "share" / "evtui"
    roots += [here / "bench", share / "bench", here / "demo", share / "demo"]
    return next((r / name for r in roots if (r / name).is_file()), None)


def demo_papers() -> int:
    """About how many papers the demo holds (one line of a corpus JSON Lines file, one PubTator title, one file of
    anything else), for a progress bar in papers: by files, the demo read 93% while its biggest file, three
    quarters of its papers, was still being read. 0 without a demo. ~0.1 s, once a process."""
    src = demo_dir()
    return 0 if src is None else _count_papers(src)


@cache
def _count_papers(src: Path) -> int:
    total = 0
    for path in sorted(src.rglob("*")):
        name = path.name.lower()
        if not path.is_file() or name.startswith("."):
            continue
        if ".jsonl" not in name and "pubtator" not in name:
            total += 1
            continue
        marker = b"|t|" if "pubtator" in name else b""
        try:
            with (gzip.open(path, "rb") if name.endswith(".gz") else path.open("rb")) as fh:
                total += sum(1 for line in fh if line.strip() and marker in line)
        except (OSError, EOFError, zlib.error):
            total += 1
    return total


def ensure_demo(library: Library, on_progress: Callable[[IngestProgress], None] | None = None) -> IngestReport | None:
    """Load the demo library into an empty data home once (unless the user turned `demo` off). In a home that has
    it, the demo papers an earlier evtui read wrongly are read again instead (see `correct_demo`); None then."""
    if not library.config.demo:
        return None
    loaded = library.store.get_meta("demo_loaded")
    if loaded:
        correct_demo(library, loaded, on_progress)
        if not library.store.get_meta("demo_vectors"):  # a demo loaded before evtui shipped its vectors: once
            src = demo_dir()
            if src is not None:
                load_paper_vectors(library, src)
            library.store.set_meta("demo_vectors", "1")
        return None
    # Set before the first paper is stored: a load cut short (q, Ctrl-C, a kill) leaves a non-empty home that
    # is not the whole demo, and the next launch must finish it (unchanged papers are skipped) rather than
    # take the part for the library.
    loading = library.store.get_meta("demo_loading")
    src = demo_dir()
    if src is None and loading and Path(loading).is_dir():
        src = Path(loading)
    if src is None:
        return None
    # (an evtui from before the mark left only the papers: one of them read from the demo's folder says it)
    if not loading and not library.is_empty() and not _has_papers_from(library, src):
        return None
    library.store.set_meta("demo_loading", str(src))
    report = library.ingest([src], on_progress=on_progress)
    load_paper_vectors(library, src)
    library.store.set_meta("demo_vectors", "1")
    library.store.set_meta("demo_loaded", str(src))
    return report


VECTORS = "demo_paper_vectors.npz"  # beside the demo folder: the folder itself is ingested whole


def load_paper_vectors(library: Library, src: Path) -> int:
    """Store the demo papers' dense vectors shipped with evtui (scripts/demo_paper_vectors.py made them with the same
    MiniLM), so that `best` and `verify` use the paper channel from the first search instead of after a 13-minute
    `evtui embed`. Only a paper whose stored text is the one embedded (same content hash) gets its vector; any other
    is embedded on first use. Returns how many were stored; 0 where the file is absent or for another model."""
    import numpy as np

    from evtui import paper_vectors
    from evtui.embed import MODEL_ID

    path = src.parent / VECTORS
    if not path.is_file():
        return 0
    try:
        with np.load(path, allow_pickle=False) as data:
            if str(data["model"]) != MODEL_ID:
                return 0
            rows = {(str(i), str(h)): n for n, (i, h) in enumerate(zip(data["ids"], data["hashes"], strict=True))}
            # int8 per row with a float32 scale: half the bytes, cosine to the float vectors above 0.9999
            vecs = data["vecs_q"].astype(np.float32) * data["scale"].astype(np.float32)
    except (OSError, ValueError, KeyError):  # a damaged file: the vectors are computed on first use instead
        return 0
    con = library.store.con
    paper_vectors.ensure_table(con)
    found = [(pid, h) for pid, h in paper_vectors.missing_papers(con) if (pid, h) in rows]
    for i in range(0, len(found), 2000):
        part = found[i:i + 2000]
        paper_vectors.store_vectors(con, part, vecs[[rows[k] for k in part]], MODEL_ID)
    return len(found)


def _has_papers_from(library: Library, folder: Path) -> bool:
    prefix = str(folder).rstrip("/\\") + os.sep
    row = library.store.con.execute("SELECT 1 FROM papers WHERE starts_with(source_path, ?) LIMIT 1",
                                    [prefix]).fetchone()
    return row is not None


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
