"""Synthetic claim / evidence pairs for a first training stage of the verifier (`train_verifier.py --synthetic`).

The shipped MiniLM verifier reads the topic of a pair far better than its direction: given a claim with its direction
flipped it still answers by topic (stop 15: side accuracy 0.575 on flipped claims). No NLI data ships in any registry
package, so this builds direction-sensitive pairs from unlabelled abstracts, in the spirit of zero-shot scientific
claim generation (Wright et al. 2022, "Generating Scientific Claims for Zero-Shot Scientific Fact Checking"), by rule:
- a **declarative title** ("Ketanserin pretreatment reverses alfentanil-induced muscle rigidity") is a claim its
  abstract's conclusion states in other words: title -> the closing sentence that shares most words with it is
  `supports`; the title negated or with its direction reversed -> `refutes`; the title -> an opening background or
  methods sentence is `neutral`;
- a **finding sentence** with a direction word ("... significantly reduced LDL cholesterol (p < 0.01)") stripped of
  its statistics is a claim the sentence supports; the same claim reversed is refuted by it.

The labels are noisy by construction (a conclusion may hedge, a background sentence may state the finding), which is
why these pairs are only a first stage before the gold pairs. Sources, never a held-out paper:
BC5CDR's 1,500 PubMed abstracts (public domain), and the SciFact / Check-COVID abstracts of the *training* split of
an examples file (`train_verifier.py` writes it; its held-out calibration fold and Check-COVID dev are left out, and a
BC5CDR abstract whose title is in either corpus is dropped, so nothing of the held-out or held-back data is read).

    python experiments/verifier/synth_claims.py --shared ../shared/datasets --examples RUN/examples.jsonl.gz --out synth.jsonl.gz
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))

from train_verifier import (  # noqa: E402
    _ANTONYMS,
    _NEG,
    checkcovid_corpus,
    content_words,
    flip_claim,
    scifact_corpus,
)

from evtui.ingest.splitter import split_sentences  # noqa: E402

# Finite verbs of a finding, third person singular (their bare form after "does not").
_VERBS = {
    "reverses": "reverse", "reduces": "reduce", "increases": "increase", "decreases": "decrease",
    "inhibits": "inhibit", "prevents": "prevent", "protects": "protect", "induces": "induce", "causes": "cause",
    "improves": "improve", "attenuates": "attenuate", "enhances": "enhance", "promotes": "promote",
    "suppresses": "suppress", "mediates": "mediate", "regulates": "regulate", "impairs": "impair", "blocks": "block",
    "activates": "activate", "lowers": "lower", "raises": "raise", "predicts": "predict", "ameliorates": "ameliorate",
    "exacerbates": "exacerbate", "aggravates": "aggravate", "restores": "restore", "alleviates": "alleviate",
    "potentiates": "potentiate", "antagonizes": "antagonize", "abolishes": "abolish", "prolongs": "prolong",
    "shortens": "shorten", "triggers": "trigger", "contributes": "contribute", "correlates": "correlate",
    "affects": "affect", "modulates": "modulate"
}
_AUX_VERB = re.compile(r"\b(is|are|was|were)\s+(associated|linked|related|correlated|required|necessary|"
                       r"increased|decreased|reduced|elevated|improved|impaired|induced|caused|prevented|"
                       r"attenuated|enhanced|inhibited|protected|blocked|reversed|effective|safe|higher|lower)\b")
_STATS = re.compile(r"\s*[\(\[][^()\[\]]*\d[^()\[\]]*[\)\]]"  # parentheses / brackets holding numbers
                    r"|\s*,?\s*\b[pP]\s*[<=>≤≥]\s*0?\.\d+"
                    r"|\s*,?\s*\b\d+(\.\d+)?\s*%\s*(CI|confidence interval)[^,;.]*")
_LEAD = re.compile(r"^(in conclusion|conclusions?|results?|findings|taken together|overall|thus|therefore|"
                   r"collectively|in summary|together)\s*[:,]?\s*|^(these|our) (results|data|findings) "
                   r"(suggest|indicate|show|demonstrate)s? that\s+|^we (found|show|observed|demonstrate|conclude) that\s+",
                   re.I)
_FINDING = re.compile(r"\b(significantly|associated with|resulted in|led to|was|were)\b", re.I)
_METHODS = re.compile(r"\b(we (studied|investigated|examined|assessed|measured|evaluated|analy[sz]ed|enrolled|"
                      r"conducted|performed|aimed)|were (randomi[sz]ed|enrolled|recruited|included|assigned)|"
                      r"the aim of|the purpose of|objective|was performed|were performed)\b", re.I)


def negate(claim: str) -> str | None:
    """The claim reversed: `flip_claim`'s antonym or "not" after an auxiliary, else "does not <verb>" for a finite verb
    of a finding (only those in _VERBS, so a plural noun such as "programs" is never read as a verb)."""
    flipped = flip_claim(claim)
    if flipped:
        return flipped
    if _NEG.search(claim):
        return None
    words = claim.split()
    for i, w in enumerate(words[1:], 1):
        bare = _VERBS.get(w.lower())
        # third person only: a bare form is as often an infinitive ("mesna to prevent cystitis") as a verb
        if bare and w.lower().endswith("s") and words[i - 1].lower() not in ("to", "or", "and"):
            words[i] = f"does not {bare}"
            return " ".join(words)
    return None


def declarative(title: str) -> bool:
    t = title.lower()
    if t.endswith("?") or len(t.split()) < 4 or len(t.split()) > 30:
        return False
    return bool(_AUX_VERB.search(t) or any(w in _VERBS for w in t.split()[1:]))


def clean(sentence: str) -> str:
    """A finding sentence as a claim: statistics, a leading "In conclusion," and the like removed."""
    s = _STATS.sub("", sentence).strip()
    s = _LEAD.sub("", s).strip()
    s = re.sub(r"\s+([,.;:])", r"\1", s)
    s = re.sub(r"\s{2,}", " ", s).rstrip(" ,;:")
    if s and not s.endswith("."):
        s += "."
    return s[:1].upper() + s[1:]


def _pair(claim: str, sents: list[str], i: int, title: str, label: str, paper: str, kind: str) -> dict:
    return {"claim": claim, "sentence": sents[i].strip(), "prev": sents[i - 1].strip() if i > 0 else "",
            "title": title, "label": label, "paper": paper, "source": "synthetic", "split": "train", "kind": kind,
            "claim_id": f"synth:{paper}:{kind}:{i}", "position": i}


def pairs_for(paper: str, title: str, sents: list[str], rng: random.Random, per_paper: int = 4) -> list[dict]:
    out: list[dict] = []
    sents = [s for s in sents if 4 <= len(s.split()) <= 80]
    if len(sents) < 3:
        return out
    t = title.strip().rstrip(".")
    if declarative(t) and (flipped := negate(t)):
        tw = content_words(t)
        tail = range(max(1, len(sents) - 3), len(sents))
        best = max(tail, key=lambda i: len(tw & content_words(sents[i])))
        if len(tw & content_words(sents[best])) >= 2:
            out.append(_pair(t + ".", sents, best, title, "supports", paper, "synth-title"))
            out.append(_pair(flipped + ".", sents, best, title, "refutes", paper, "synth-title-flip"))
            opening = [i for i in range(min(3, len(sents) - 3)) if _METHODS.search(sents[i])] or [0]
            out.append(_pair(t + ".", sents, rng.choice(opening), title, "neutral", paper, "synth-title-neutral"))
    findings = []
    for i, s in enumerate(sents[1:], 1):
        words = [re.sub(r"[^\w-]", "", w).lower() for w in s.split()]
        if any(_ANTONYMS.get(w) for w in words) and _FINDING.search(s) and not _METHODS.search(s) and "?" not in s:
            c = clean(s)
            if 6 <= len(c.split()) <= 40 and (f := negate(c.rstrip("."))):
                findings.append((i, c, f + "."))
    for i, c, f in rng.sample(findings, min(per_paper, len(findings))):
        out.append(_pair(c, sents, i, title, "supports", paper, "synth-self"))
        out.append(_pair(f, sents, i, title, "refutes", paper, "synth-self-flip"))
        others = [j for j in range(len(sents)) if abs(j - i) > 1 and not any(j == k for k, _, _ in findings)]
        if others:  # the claim against a sentence of its abstract that states no finding
            out.append(_pair(c, sents, rng.choice(others), title, "neutral", paper, "synth-self-neutral"))
    return out


def bc5cdr(shared: Path) -> dict[str, tuple[str, list[str]]]:
    docs: dict[str, tuple[str, list[str]]] = {}
    for f in sorted((shared / "bc5cdr").glob("CDR_*Set.PubTator.txt")):
        title = ""
        for line in f.open(encoding="utf-8"):
            parts = line.rstrip("\n").split("|", 2)
            if len(parts) == 3 and parts[1] == "t":
                title = parts[2]
            elif len(parts) == 3 and parts[1] == "a":
                docs[f"pmid:{parts[0]}"] = (title, split_sentences(parts[2]))
    return docs


def _norm(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", title.lower()).strip()


def build(shared: Path, examples: Path, seed: int = 0) -> list[dict]:
    with gzip.open(examples, "rt") as fh:
        exs = [json.loads(x) for x in fh]
    held = {e["paper"] for e in exs if e["split"] != "train"}
    train_papers = {e["paper"] for e in exs if e["split"] == "train"} - held
    sf, cc = scifact_corpus(shared), checkcovid_corpus(shared)
    docs: dict[str, tuple[str, list[str]]] = {}
    for corpus, prefix in ((sf, "scifact:"), (cc, "cord:")):
        for doc, (title, sents) in corpus.items():
            if prefix + doc in train_papers:
                docs[prefix + doc] = (title, sents)
    known = {_norm(t) for t, _ in list(sf.values()) + list(cc.values())}
    docs.update({k: v for k, v in bc5cdr(shared).items() if _norm(v[0]) not in known})
    rng = random.Random(seed)
    out: list[dict] = []
    for paper in sorted(docs):
        title, sents = docs[paper]
        out.extend(pairs_for(paper, title, sents, rng))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parent.parent.parent / "shared" / "datasets")
    ap.add_argument("--examples", type=Path, required=True, help="train_verifier.py's examples.jsonl.gz (its splits)")
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    pairs = build(args.shared, args.examples, args.seed)
    with gzip.open(args.out, "wt") as fh:
        for p in pairs:
            fh.write(json.dumps(p) + "\n")
    print(f"{len(pairs)} pairs from {len({p['paper'] for p in pairs})} papers: "
          f"{dict(Counter(p['kind'] for p in pairs))} {dict(Counter(p['label'] for p in pairs))}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
