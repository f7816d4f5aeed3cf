"""A lever measured and not shipped: abbreviations expanded (Schwartz-Hearst) before the verifier reads a pair.

    pip install abbreviations==0.2.5                          # only for this benchmark
    python experiments/verifier/bench_verifier_abbrev.py [--claim]      # --claim: expand the claim too

Side accuracy, 3-way accuracy and the stance figures (shipped temperature and thresholds) on the held-out SciFact
calibration pairs and Check-COVID dev, plain and expanded (BENCHMARKS.md "abbreviations expanded").
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))


def paper_texts(shared: Path) -> dict[str, list[str]]:
    texts = {}
    for line in (shared / "scifact" / "corpus.jsonl").open():
        d = json.loads(line)
        texts[f"scifact:{d['doc_id']}"] = [d["title"], *d["abstract"]]
    for line in (shared / "check-covid" / "corpus.json").open():
        d = json.loads(line)
        texts[f"cord:{d['cord_id']}"] = [d["title"], *d["abstract"]]
    return texts


def expand(text: str, definitions: dict[str, str]) -> str:
    """The first use of each abbreviation becomes "definition (ABBR)", unless the definition is already there."""
    for abbr, definition in sorted(definitions.items(), key=lambda t: -len(t[0])):
        if definition.lower() not in text.lower():
            text = re.sub(rf"(?<![\w-]){re.escape(abbr)}(?![\w-])", f"{definition} ({abbr})", text, count=1)
    return text


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--claim", action="store_true", help="expand the claim too")
    args = ap.parse_args()
    try:
        from abbreviations import schwartz_hearst
    except ImportError:
        raise SystemExit("needs the abbreviations package: pip install abbreviations==0.2.5") from None
    import train_verifier as tv

    from evtui.verify.adapter import AdapterModel
    from evtui.verify.model import MODEL_DIR, Verifier

    logging.disable(logging.WARNING)  # the extractor logs every candidate it omits
    texts = paper_texts(args.shared)
    maps: dict[str, dict[str, str]] = {}
    manifest = json.loads((MODEL_DIR / "model.json").read_text())
    encoder = Verifier()
    runtime = AdapterModel(MODEL_DIR, manifest)
    exs = tv.build_examples(args.shared, aug=True)
    for split in ("cal", "ccdev"):
        plain = [e for e in exs if e["split"] == split]
        expanded = []
        for e in plain:
            if e["paper"] not in maps:
                maps[e["paper"]] = schwartz_hearst.extract_abbreviation_definition_pairs(
                    doc_text="\n".join(texts.get(e["paper"], [])), first_definition=True)
            m = maps[e["paper"]]
            expanded.append({**e, "sentence": expand(e["sentence"], m), "prev": expand(e["prev"], m),
                             "claim": expand(e["claim"], m) if args.claim else e["claim"]})
        changed = sum(1 for a, b in zip(plain, expanded, strict=True) if a != b)
        y = np.array([tv.LABELS.index(e["label"]) for e in plain])
        gold = y != 2
        for name, data in (("plain", plain), ("expanded", expanded)):
            logits = tv.predict_with(runtime, encoder._encode, data)
            side = np.where(logits[:, 0] >= logits[:, 1], 0, 1)
            ev = tv.evaluate(logits, data, manifest["temperature"], manifest["thresholds"])
            print(json.dumps({"pairs": split, "text": name, "changed": changed, "of": len(plain),
                              "side_accuracy": round(float((side[gold] == y[gold]).mean()), 3),
                              "accuracy_3way": ev["accuracy_3way_argmax"], "stance": ev["stance_on_gold"],
                              "neutral_given_a_side": ev["neutral_given_a_side"]}))


if __name__ == "__main__":
    main()
