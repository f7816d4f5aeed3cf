"""Direction words as a second opinion for a side: on the calibration part of the verifier's protocol, how often a
side named by `evtui.verify.cues` (alone, with the verifier preferring that side, with it as the argmax) is right.

    python experiments/verifier/cue_second_opinion.py --model DIR   # DIR: a recalibration's output (cal_logits.npy,
                                                                    # model.json), e.g. scripts/train_verifier_nli.py
                                                                    # --recalibrate --out DIR
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_verifier as tv  # noqa: E402
import train_verifier_nli as nli  # noqa: E402

from evtui.verify import cues  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", type=Path, required=True)
    ap.add_argument("--shared", type=Path, default=Path("../shared/datasets"))
    args = ap.parse_args()
    cal, _ = nli.parts(args.shared)
    logits = np.load(args.model / "cal_logits.npy")
    p = tv.softmax(logits, json.loads((args.model / "model.json").read_text())["temperature"])
    y = nli.ys(cal)
    src = np.array([e["source"] for e in cal])
    said = np.array([cues._cue_side(cues._reading(e["sentence"])[0], cues._reading(e["claim"])[0]) for e in cal])
    for source in sorted(set(src)):
        for side, c in (("supports", 0), ("refutes", 1)):
            alone = (src == source) & (said == side)
            prefers = alone & (p[:, c] > p[:, 1 - c])
            argmax = prefers & (p[:, c] > p[:, 2])
            row = [f"{int(s.sum())} pairs, {np.mean(y[s] == c):.0%} right" if s.any() else "0 pairs"
                   for s in (alone, prefers, argmax)]
            print(f"{source} · words say {side}: alone {row[0]} · verifier prefers it {row[1]} · its argmax {row[2]}")


if __name__ == "__main__":
    main()
