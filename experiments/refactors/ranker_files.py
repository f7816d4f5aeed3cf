"""The ranker's model files: the merged heads against the 5-seed ensemble they came from, and what they cost in git.

    python experiments/refactors/ranker_files.py [--ensemble-rev 0b4b2a6] [--home DEMO_HOME] [--git]

- merge: re-merges the ensemble stored at --ensemble-rev (15 files, 3 heads x 5 seeds) and checks the result is
  byte-identical to the shipped head files; compares predictions (random rows with missing values, and with
  --home the real candidate pools of a few searches on that library) and times prediction;
- sizes: bytes, what git stores (zlib) and smaller representations (a compact binary form, for comparison);
- --git: in a scratch clone, what each commit that touched evtui/resources/ranker added to the pack, and what a
  retrained-looking variant of the shipped files (every leaf value changed) adds after `git gc`.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import tempfile
import time
import zlib
from pathlib import Path
from typing import Any

import lightgbm as lgb
import numpy as np

from evtui.checksum import sha256_file
from evtui.rank.features import FEATURES, JUDGE_FEATURES
from evtui.rank.model import MODEL_DIR, RankerModel
from evtui.rank.modelfile import merge_ensemble, strip_for_prediction

ROOT = Path(__file__).resolve().parents[2]
RANKER = "evtui/resources/ranker"
QUERIES = ["aspirin reduces the risk of colorectal cancer", "(BRCA1, associated with, breast cancer)",
           "Vitamin D supplementation reduces fracture risk", "statins lower LDL cholesterol",
           "ACE inhibitors cause cough", "(resveratrol, inhibit, pancreatic cancer)"]


def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True).stdout


def ensemble_texts(rev: str, head: str, seeds: int) -> list[str]:
    return [git("show", f"{rev}:{RANKER}/{head}.txt" if i == 0 else f"{rev}:{RANKER}/{head}.{i}.txt")
            for i in range(seeds)]


def real_pools(home: Path) -> list[np.ndarray]:
    """The feature rows `best` scores for a few searches (library-wide, and one within a paper)."""
    from evtui.config import load_config
    from evtui.library import Library
    from evtui.search import Searcher

    rows: list[np.ndarray] = []
    real_score = RankerModel.score

    def capture(self: RankerModel, x: np.ndarray, head: str = "evidence") -> np.ndarray:
        rows.append(np.array(x))
        return real_score(self, x, head)

    RankerModel.score = capture  # type: ignore[method-assign]
    os.environ["EVTUI_HOME"] = str(home)
    lib = Library(load_config())
    try:
        s = Searcher(lib)
        for q in QUERIES:
            s.search(q, k=10)
        s.search("transcription factor binding", k=10, paper="PMC2768302")
    finally:
        lib.close()
        RankerModel.score = real_score  # type: ignore[method-assign]
    return [r for r in rows if len(r)]


def compact_binary(text: str, leaf_dtype: type = np.float64) -> int:
    """Bytes of the trees as deflated arrays (split feature, threshold, decision type, children, leaf values)."""
    arrays: dict[str, list[float]] = {}
    for block in re.split(r"^Tree=\d+\n", text.partition("end of trees")[0], flags=re.M)[1:]:
        for line in block.splitlines():
            key, _eq, value = line.partition("=")
            if key in ("num_leaves", "split_feature", "threshold", "decision_type", "left_child", "right_child",
                       "leaf_value"):
                arrays.setdefault(key, []).extend(float(v) for v in value.split())
    packed: dict[str, Any] = {k: np.array(v, dtype=np.int8 if k in ("left_child", "right_child") else np.uint8)
                              for k, v in arrays.items() if k not in ("threshold", "leaf_value")}
    packed["threshold"] = np.array(arrays["threshold"])
    packed["leaf_value"] = np.array(arrays["leaf_value"], dtype=leaf_dtype)
    buf = io.BytesIO()
    np.savez_compressed(buf, **packed)
    return len(buf.getvalue())


def timed(fns: list[Any], reps: int) -> list[float]:
    """Best of `reps` ms for each function, taken in turns so that all see the same machine load."""
    best = [float("inf")] * len(fns)
    for _ in range(reps):
        for i, fn in enumerate(fns):
            t = time.perf_counter()
            fn()
            best[i] = min(best[i], time.perf_counter() - t)
    return [b * 1000 for b in best]


def merge_report(args: argparse.Namespace) -> None:
    meta = json.loads((MODEL_DIR / "model.json").read_text())
    model = RankerModel.load()
    pools = real_pools(args.home) if args.home else []
    rng = np.random.default_rng(0)
    for head, entry in meta["files"].items():
        texts = ensemble_texts(args.ensemble_rev, head, int(entry["seeds"]))
        merged = strip_for_prediction(merge_ensemble(texts))
        same = merged.encode() == (MODEL_DIR / entry["file"]).read_bytes()
        members = [lgb.Booster(model_str=t) for t in texts]
        nf = len(JUDGE_FEATURES) if head == "judge" else len(FEATURES)
        x = rng.normal(scale=3, size=(5000, nf))
        x[rng.random(x.shape) < 0.2] = np.nan
        sets = [x] + ([p[:, [FEATURES.index(f) for f in JUDGE_FEATURES]] if head == "judge" else p for p in pools])

        def ensemble(z: np.ndarray, members: list[lgb.Booster] = members) -> np.ndarray:
            return np.asarray(np.mean([b.predict(z, raw_score=True, num_threads=1) for b in members], axis=0))

        exact = all(np.array_equal(model._raw(head, z), ensemble(z)) for z in sets)
        print(f"{head}: shipped file = merge of {args.ensemble_rev}'s {len(texts)} seeds: {same}; scores "
              f"bit-identical to the 5 boosters' mean on {sum(len(z) for z in sets):,} rows "
              f"({len(x):,} random, {len(sets) - 1} real pools): {exact}")
        if pools and head == "evidence":
            one = model.boosters["evidence"]
            t_ens, t_chunk, t_one = timed([
                lambda: [ensemble(z) for z in pools],
                lambda: [model.score(z) for z in pools],
                lambda: [one.predict(z, raw_score=True, num_threads=1) / 5 for z in pools],  # noqa: B023
            ], args.reps)
            print(f"  predict {sum(len(p) for p in pools):,} rows of {len(pools)} real pools (best of {args.reps}, in turns): "
                  f"5 boosters {t_ens:.0f} ms, merged file by seed blocks (as shipped) {t_chunk:.0f} ms, "
                  f"merged file in one pass {t_one:.0f} ms")


def size_report() -> None:
    total = {"text": 0, "zlib": 0, "npz64": 0, "npz32": 0}
    for f in sorted(MODEL_DIR.iterdir()):
        data = f.read_bytes()
        total["text"] += len(data)
        total["zlib"] += len(zlib.compress(data, 6))
        if f.suffix == ".txt":
            total["npz64"] += compact_binary(data.decode())
            total["npz32"] += compact_binary(data.decode(), np.float32)
    print(f"shipped {RANKER}: {total['text']:,} bytes, {total['zlib']:,} zlib-compressed (a git blob without a delta); "
          f"as deflated arrays: {total['npz64']:,} (float64 leaves, lossless), {total['npz32']:,} (float32 leaves)")


def pack_kib(repo: Path) -> int:
    git("gc", "-q", cwd=repo)
    return int(re.search(r"size-pack: (\d+)", git("count-objects", "-v", cwd=repo)).group(1))  # type: ignore[union-attr]


def git_report() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        repo = Path(tmp) / "clone"
        git("clone", "-q", "--no-local", str(ROOT), str(repo))
        before = pack_kib(repo)
        for line in git("log", "--format=%h %s", "--", RANKER, cwd=repo).splitlines():
            rev = line.split()[0]
            objs = [row.split()[2] for row in git("ls-tree", "-r", rev, RANKER, cwd=repo).splitlines()]
            rows = subprocess.run(["git", "cat-file", "--batch-check=%(objectsize) %(objectsize:disk) %(deltabase)"],
                                  cwd=repo, input="\n".join(objs) + "\n", capture_output=True, text=True,
                                  check=True).stdout.split("\n")
            sizes = [r.split() for r in rows if r]
            deltas = sum(1 for s in sizes if set(s[2]) != {"0"})
            print(f"  {line[:70]}: {len(objs)} files, {sum(int(s[0]) for s in sizes):,} bytes, "
                  f"{sum(int(s[1]) for s in sizes):,} in the pack ({deltas} stored as deltas)")
        folder = repo / RANKER
        for f in folder.iterdir():  # the working tree's files, where they are not committed yet
            f.unlink()
        for f in MODEL_DIR.iterdir():
            (folder / f.name).write_bytes(f.read_bytes())
        git("add", "-A", RANKER, cwd=repo)
        if git("status", "--porcelain", cwd=repo).strip():
            git("-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "shipped", cwd=repo)
            now = pack_kib(repo)
            print(f"  committing the working tree's {RANKER}: pack {before:,} -> {now:,} KiB (+{now - before:,})")
            before = now
        # A retrained-looking variant: every leaf value moved (trees and thresholds kept, which favours deltas).
        rng = np.random.default_rng(0)
        meta = json.loads((folder / "model.json").read_text())
        for entry in meta["files"].values():
            path = folder / entry["file"]
            text = re.sub(r"^leaf_value=(.*)$", lambda m: "leaf_value=" + " ".join(
                repr(float(v) * (1 + rng.normal(scale=1e-3))) for v in m.group(1).split()), path.read_text(), flags=re.M)
            path.write_text(text)
            entry["sha256"] = sha256_file(path)
        (folder / "model.json").write_text(json.dumps(meta, indent=1) + "\n")
        git("add", "-A", RANKER, cwd=repo)
        git("-c", "user.name=bench", "-c", "user.email=bench@localhost", "commit", "-qm", "variant", cwd=repo)
        after = pack_kib(repo)
        print(f"  pack {before:,} KiB; after committing a retrained-looking variant {after:,} KiB "
              f"(+{after - before:,} KiB)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ensemble-rev", default="0b4b2a6", help="a commit holding the 15-file seed ensemble")
    ap.add_argument("--home", type=Path, help="a data home with the demo library, for real candidate pools")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--git", action="store_true", help="measure the pack in a scratch clone")
    args = ap.parse_args()
    merge_report(args)
    size_report()
    if args.git:
        git_report()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
