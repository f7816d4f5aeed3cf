"""An abstract-level reader for the verifier: (claim, title + whole abstract) -> P(supports), P(refutes), P(neutral).

The shipped verifier reads one sentence (and its previous one) at a time, and a MiniLM reading one sentence misses the
direction its neighbour states outright (stop 19: "a sentence takes its paper's side"). MultiVerS (Wadden et al. 2022)
labels the claim against the whole abstract and selects rationales beside it. This script trains that reader from
the same MiniLM on the same splits as train_verifier.py (its examples.jsonl.gz: SciFact fold 0 and Check-COVID dev
held out), one pair per (claim, paper):
- SciFact: an evidence paper -> its label; a cited paper of a claim without evidence -> neutral; a SUPPORT claim
  flipped by rule -> refutes (train only); a claim against another training paper's abstract -> neutral (train only);
- Check-COVID: the claim's abstract -> its label (NOTENOUGHINFO -> neutral).
It writes the held-out pairs' logits (abstract_logits.json: "claim_id|paper" -> 3 logits), for
`bench_verifier_levers.py`-style measures that join them to the sentence verifier's, and the weights' change
(`--delta-rank`, as train_verifier.py --train-only).

    python experiments/verifier/train_abstract_verifier.py --examples RUN/examples.jsonl.gz --out DIR [--base-dir MINILM]
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import train_verifier as tv  # noqa: E402

MAX_LEN = 320  # a SciFact abstract is ~250 word pieces; the claim takes ~25


def _docs(shared: Path | None, docs_file: Path | None) -> dict[str, str]:
    """paper id -> title + abstract, from ../shared or a file written here earlier (a GPU machine has no ../shared)."""
    if docs_file is not None and docs_file.exists():
        with gzip.open(docs_file, "rt") as fh:
            return json.load(fh)
    assert shared is not None
    out = {}
    for prefix, corpus in (("scifact:", tv.scifact_corpus(shared)), ("cord:", tv.checkcovid_corpus(shared))):
        for doc, (title, sents) in corpus.items():
            out[prefix + doc] = " ".join([title.strip().rstrip(".") + "."] + [s.strip() for s in sents])
    return out


def doc_examples(exs: list[dict], docs: dict[str, str], seed: int = 0) -> list[dict]:
    """One pair per (claim, paper) of the sentence-level examples, labelled at the paper's level."""
    groups: dict[tuple[str, str], dict] = {}
    for e in exs:
        if e["kind"] == "offtopic" or e["paper"] not in docs:
            continue
        g = groups.setdefault((e["claim_id"], e["paper"]), {
            "claim": e["claim"], "paper": e["paper"], "claim_id": e["claim_id"], "split": e["split"],
            "source": e["source"], "labels": Counter()})
        if e["kind"] in ("gold", "flip", "nei"):
            g["labels"][e["label"]] += 1
    out = []
    for g in groups.values():
        lab = g.pop("labels")
        if not lab:
            continue
        sides = [x for x in ("supports", "refutes") if lab[x]]
        label = sides[0] if len(sides) == 1 else ("neutral" if not sides else lab.most_common(1)[0][0])
        out.append({**g, "label": label, "sentence": docs[g["paper"]], "prev": "", "kind": "abstract"})
    rng = random.Random(seed)
    train_papers = sorted({g["paper"] for g in out if g["split"] == "train" and g["source"] == "scifact"})
    for g in [g for g in out if g["split"] == "train" and g["source"] == "scifact" and g["label"] != "neutral"]:
        other = rng.choice(train_papers)
        if other != g["paper"]:  # another paper's abstract: about something else, so neutral
            out.append({**g, "paper": other, "sentence": docs[other], "label": "neutral", "kind": "offtopic"})
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=None)
    ap.add_argument("--docs", type=Path, default=None, help="docs.json.gz (written to --out when --shared is given)")
    ap.add_argument("--examples", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--base-dir", type=Path, default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--stage2-epochs", type=int, default=3)
    ap.add_argument("--stage2-lr", type=float, default=5e-5)
    ap.add_argument("--freeze-layers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--delta-rank", type=int, default=64)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--data-only", action="store_true", help="write docs.json.gz and the pairs, train nothing")
    args = ap.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    with gzip.open(args.examples, "rt") as fh:
        exs = [json.loads(x) for x in fh]
    docs = _docs(args.shared, args.docs)
    pairs = doc_examples(exs, docs, args.seed)
    tv.log(f"pairs: {Counter((p['split'], p['label']) for p in pairs)}")
    if args.data_only:
        used = {p["paper"] for p in pairs}
        with gzip.open(args.out / "docs.json.gz", "wt") as fh:
            json.dump({k: v for k, v in docs.items() if k in used}, fh)
        return 0
    import torch

    t0 = time.perf_counter()
    tv.BASE_DIR = args.base_dir
    enc = tv.Encoder(tv.base_dir() / "tokenizer.json", max_len=MAX_LEN)
    tr = [p for p in pairs if p["split"] == "train"]
    if args.limit:
        tr = random.Random(0).sample(tr, min(args.limit, len(tr)))
    ns = argparse.Namespace(**vars(args), init=None, kd_temperature=2.0, kd_weight=1.0)
    model = tv.train(tr, enc, ns)
    if args.stage2_epochs:
        model = tv.train(tr, enc, argparse.Namespace(**{**vars(ns), "epochs": args.stage2_epochs,
                                                        "lr": args.stage2_lr}), model=model)
    held = [p for p in pairs if p["split"] != "train"]
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    model = model.to(dev)
    logits = np.zeros((len(held), 3), dtype=np.float32)
    with torch.no_grad():
        for i in range(0, len(held), 32):
            b = held[i:i + 32]
            ids, am, tt = enc([p["claim"] for p in b], [p["sentence"] for p in b])
            logits[i:i + len(b)] = model(input_ids=torch.from_numpy(ids).to(dev),
                                         attention_mask=torch.from_numpy(am).to(dev),
                                         token_type_ids=torch.from_numpy(tt).to(dev)).logits.float().cpu().numpy()
    (args.out / "abstract_logits.json").write_text(json.dumps(
        {f"{p['claim_id']}|{p['paper']}": [round(float(x), 4) for x in row] for p, row in zip(held, logits,
                                                                                            strict=True)}))
    y = np.array([tv.LABELS.index(p["label"]) for p in held])
    for split in ("cal", "ccdev"):
        m = np.array([p["split"] == split for p in held])
        tv.log(f"{split}: 3-way accuracy {np.mean(logits[m].argmax(1) == y[m]):.3f} over {m.sum()} pairs; side "
               f"accuracy {np.mean(logits[m & (y != 2)][:, :2].argmax(1) == y[m & (y != 2)]):.3f}")
    model = model.cpu()
    tv.write_deltas({k: v.detach().float().numpy() for k, v in model.state_dict().items()}, args.out,
                    rank=args.delta_rank)
    tv.log(f"done in {time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
