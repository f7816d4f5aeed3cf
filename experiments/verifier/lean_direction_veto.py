"""Leans to refuting with and without a veto by the direction words (`evtui.verify.cues`): on the protocol's
calibration part (where the rule was chosen) and its final check (read once for it), from a recalibration's saved
logits.

    python experiments/verifier/lean_direction_veto.py --model DIR   # DIR: `scripts/train_verifier_nli.py
                                                                     # --recalibrate --out DIR` (cal_logits.npy,
                                                                     # final_logits.npy, model.json)
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
    cal, final = nli.parts(args.shared)
    t = json.loads((args.model / "model.json").read_text())["temperature"]
    for part, exs, name in (("calibration", cal, "cal_logits.npy"), ("final check", final, "final_logits.npy")):
        p = tv.softmax(np.load(args.model / name), t)
        y = nli.ys(exs)
        said = np.array([cues._cue_side(cues._reading(e["sentence"])[0], cues._reading(e["claim"])[0]) for e in exs])
        src = np.array([e["source"] for e in exs])
        for source in [*sorted(set(src)), "all"]:
            m = (src == source) if source != "all" else np.ones(len(y), bool)
            for side, c in (("supports", 0), ("refutes", 1)):
                lean = m & (p[:, c] > p[:, 1 - c]) & (p[:, c] > p[:, 2])
                vetoed = lean & (said == "supports") & (c == 1)
                row = {"leans": int(lean.sum()), "right": int((y[lean] == c).sum()),
                       "vetoed": int(vetoed.sum()), "vetoed_right": int((y[vetoed] == c).sum())}
                print(json.dumps({"part": part, "source": source, "side": side, **row}))


if __name__ == "__main__":
    main()
