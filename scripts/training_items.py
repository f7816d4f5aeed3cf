"""Write each shipped model's training queries as keys (evtui.bench.provenance.TRAINING_ITEMS), so that a benchmark
run on any file holding some of them is marked in-sample whatever the file is called.

    python scripts/training_items.py --shared ../shared/datasets

The ranker's files are its model.json `training_data.files`; the verifier's are the SciFact training claims and the
Check-COVID training claims it was trained and calibrated on (its model.json `training_data`). Keys only: sha1 of
each claim's or hypothesis's words, no dataset text is shipped.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from evtui.bench.provenance import MODEL_DIR, TRAINING_ITEMS, VERIFIER_DIR, read_items

ROOT = Path(__file__).resolve().parents[1]
VERIFIER_FILES = ("scifact/claims_train.jsonl", "check-covid/train/covidCheck_train_composed+extracted.json")


def write(model_dir: Path, files: list[str], shared: Path) -> None:
    keys: set[str] = set()
    for f in files:
        found = read_items(shared / f)
        print(f"{model_dir.name}: {f}: {len(found)} queries")
        keys |= found
    (model_dir / TRAINING_ITEMS).write_text("".join(f"{k}\n" for k in sorted(keys)), encoding="utf-8")
    print(f"{model_dir / TRAINING_ITEMS}: {len(keys)} keys")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    args = ap.parse_args()
    meta = json.loads((MODEL_DIR / "model.json").read_text(encoding="utf-8"))
    ranker_files = [f for group in meta["training_data"]["files"].values() for f in group
                    if not f.endswith(("corpus.jsonl", "corpus.json"))]
    write(MODEL_DIR, ranker_files, args.shared)
    write(VERIFIER_DIR, list(VERIFIER_FILES), args.shared)


if __name__ == "__main__":
    main()
