"""Direction words as a second opinion for a side: on the calibration part of the verifier's protocol, how often a
side named by `evtui.verify.cues` (alone, with the verifier preferring that side, with it as the argmax) is right.
With --leans: the verifier's leans (a side more probable than the other and than neutral, below its threshold), and
those a veto by the words would hide (a lean to refuting where the words say "supports"), on the calibration part
(where the veto was chosen) and the final check (read once for it; needs final_logits.npy).

    python experiments/verifier/cue_second_opinion.py --model DIR [--leans]   # DIR: a recalibration's output
                                          # (cal_logits.npy, model.json), e.g. scripts/train_verifier_nli.py
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
    ap.add_argument("--leans", action="store_true", help="the leans and a veto of them by the words")
    args = ap.parse_args()
    if args.leans:
        leans(args)
        return
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


def leans(args: argparse.Namespace) -> None:
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
                print(json.dumps({"part": part, "source": source, "side": side, "leans": int(lean.sum()),
                                  "right": int((y[lean] == c).sum()), "vetoed": int(vetoed.sum()),
                                  "vetoed_right": int((y[vetoed] == c).sum())}))


if __name__ == "__main__":
    main()
