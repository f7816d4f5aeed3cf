"""Memory across a large folder of PDFs: `Library.ingest` of N PDFs (links to the typeset benchmark PDFs, cycled)
into a fresh library, sampling the resident memory of the ingest process and of the PDF worker every 0.5 s.

    python benchmarks/bench_pdf_folder.py --pdf /tmp/pmc-pdf --n 500

Prints JSON: pages, wall and CPU seconds, pages per wall second, and RSS (MB) of both processes at each tenth of
the run, so a leak shows as a rising series. The copies share their papers' DOIs (so ids): 17 papers are stored,
every file is parsed.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import threading
import time
from pathlib import Path


def _rss_mb(pid: int) -> float:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return 0.0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--pdf", required=True, type=Path)
    ap.add_argument("--n", type=int, default=500)
    args = ap.parse_args()
    sources = sorted(args.pdf.glob("*.pdf"))
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "pdfs"
        folder.mkdir()
        for i in range(args.n):
            (folder / f"p{i:04d}.pdf").symlink_to(sources[i % len(sources)])
        os.environ["EVTUI_HOME"] = str(Path(tmp) / "home")
        os.environ["EVTUI_DEMO"] = "false"
        from evtui.config import load_config
        from evtui.ingest import pdf_worker
        from evtui.library import IngestProgress, Library

        samples: list[tuple[int, float, float]] = []
        done = [0]
        stop = threading.Event()

        def sample() -> None:
            while not stop.wait(0.5):
                child = pdf_worker._child
                samples.append((done[0], _rss_mb(os.getpid()),
                                _rss_mb(child.proc.pid) if child is not None else 0.0))

        def progress(p: IngestProgress) -> None:
            done[0] = p.files_done

        t = threading.Thread(target=sample, daemon=True)
        t0, c0 = time.perf_counter(), time.process_time()
        t.start()
        with Library(load_config()) as lib:
            report = lib.ingest([folder], on_progress=progress)
        stop.set()
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    pages = sum(len(__import__("pypdfium2").PdfDocument(str(sources[i % len(sources)]))) for i in range(args.n))
    series = []
    for tenth in range(1, 11):
        upto = [s for s in samples if s[0] <= args.n * tenth / 10]
        if upto:
            series.append({"files": upto[-1][0], "ingest_rss_mb": round(upto[-1][1], 1),
                           "worker_rss_mb": round(upto[-1][2], 1)})
    print(json.dumps({
        "files": args.n, "pages": pages, "errors": len(report.errors), "papers_stored": report.added,
        "wall_s": round(wall, 1), "parent_cpu_s": round(cpu, 1), "pages_per_wall_s": round(pages / wall, 1),
        "peak_ingest_rss_mb": round(max(s[1] for s in samples), 1) if samples else None,
        "peak_worker_rss_mb": round(max(s[2] for s in samples), 1) if samples else None,
        "rss_by_tenth": series,
    }, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
