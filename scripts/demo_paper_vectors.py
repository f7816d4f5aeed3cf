"""Make data/demo_paper_vectors.npz: the bundled demo papers' dense vectors (MiniLM, title + abstract), so a new
library uses `best`'s paper channel and `verify` at full strength from the first search (evtui/demo.py loads them).

    python scripts/demo_paper_vectors.py            # ~15 min on 2 cores: loads the demo into a temporary home, embeds
    python scripts/demo_paper_vectors.py --home H   # the same in home H, kept (a demo library with every vector)

Stored as int8 per row with a float32 scale (cosine to the float32 vectors above 0.9999), keyed by paper id and content hash: a paper whose
stored text differs from the one embedded (another reader version) gets no shipped vector and is embedded on first use.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--home", type=Path, default=None, help="build the demo library here (default: a temporary home)")
    args = ap.parse_args()
    home = args.home or Path(tempfile.mkdtemp(prefix="evtui-demo-vectors-"))
    os.environ["EVTUI_HOME"] = str(home)
    os.environ["EVTUI_DEMO"] = "true"
    from evtui import paper_vectors
    from evtui.config import load_config
    from evtui.demo import VECTORS, demo_dir, ensure_demo
    from evtui.embed import MODEL_ID
    from evtui.library import Library

    src = demo_dir()
    if src is None:
        sys.exit("no demo folder found")
    if (src.parent / VECTORS).exists():
        (src.parent / VECTORS).unlink()  # embed every paper afresh
    t0 = time.perf_counter()
    with Library(load_config()) as lib:
        ensure_demo(lib)
        print(f"demo loaded in {time.perf_counter() - t0:.0f} s", flush=True)
        paper_vectors.ensure_paper_vectors(
            lib, on_progress=lambda d, t: print(f"{d}/{t}", flush=True) if d % 640 == 0 or d == t else None)
        rows = lib.store.con.execute(
            "SELECT p.id, p.content_hash, e.vec FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id"
            " AND e.content_hash = p.content_hash AND e.model = ? WHERE p.state = 'ready' ORDER BY p.id",
            [MODEL_ID]).fetchall()
    ids = np.array([r[0] for r in rows])
    hashes = np.array([r[1] for r in rows])
    vecs = np.array([r[2] for r in rows], dtype=np.float32)
    scale = np.maximum(np.abs(vecs).max(axis=1, keepdims=True), 1e-12) / 127.0
    out = src.parent / VECTORS
    np.savez_compressed(out, ids=ids, hashes=hashes, vecs_q=np.clip(np.rint(vecs / scale), -127, 127).astype(np.int8),
                        scale=scale.astype(np.float32), model=np.array(MODEL_ID))
    print(f"{len(ids)} vectors -> {out} ({out.stat().st_size / 1e6:.1f} MB) in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
