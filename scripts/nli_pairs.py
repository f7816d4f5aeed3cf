"""The inference pairs of ../shared/datasets/nli, read as the verifier's (claim, evidence, label) pairs, and the fixed
split of them into training, calibration and final-check parts (BENCHMARKS.md "The verifier": the protocol).

The split is decided by a hash of each claim, never by a figure: HealthVer dev claims fall into three parts (training,
calibration, final check) so that no claim sits in two; NLI4CT dev and Check-COVID dev are final-check only. Labels
are mapped entailment -> supports, contradiction -> refutes; binary sets (FEVER, COVID-Fact, NLI4CT) have no neutral.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
from pathlib import Path

LABEL_MAP = {"supports": "supports", "entailment": "supports", "refutes": "refutes", "contradiction": "refutes",
             "neutral": "neutral"}

# file -> (name in the manifest, licence as its source states it, part of the protocol)
FILES = {
    "snli_dev.jsonl.gz": ("snli-dev", "SNLI CC BY-SA 4.0 (e-SNLI MIT)", "train"),
    "snli_test.jsonl.gz": ("snli-test", "SNLI CC BY-SA 4.0 (e-SNLI MIT)", "train"),
    "taxinli_mnli10k.jsonl.gz": ("mnli-10k", "Microsoft Computational Use of Data Agreement v1.0", "train"),
    "fever_rte_dev.jsonl.gz": ("fever", "FEVER CC BY-SA 3.0 (Wikipedia text)", "train"),
    "climate_fever_pairs.jsonl.gz": ("climate-fever", "no licence file in the source repository", "train"),
    "rte-covidfact_train.jsonl.gz": ("covid-fact", "no licence file in the source repository", "train"),
    "nli4ct2023_train_goldevidence.jsonl.gz": ("nli4ct-train", "no licence file; ClinicalTrials.gov text", "train"),
    "healthver_dev.jsonl.gz": ("healthver-dev", "no licence file in the source repository", "by claim"),
    "nli4ct2023_dev_goldevidence.jsonl.gz": ("nli4ct-dev", "no licence file; ClinicalTrials.gov text", "final"),
}
# Left out: SciNLI's labels are discourse relations (contrasting, reasoning), not inference.

_PTB = [(re.compile(r"-LRB-"), "("), (re.compile(r"-RRB-"), ")"), (re.compile(r"-LSB-"), "["),
        (re.compile(r"-RSB-"), "]"), (re.compile(r"``\s*|\s*''"), '"'), (re.compile(r" ([,.;:!?)\]])"), r"\1"),
        (re.compile(r"([(\[]) "), r"\1"), (re.compile(r"\s+"), " ")]


def clean(text: str) -> str:
    """Tokenised corpora (FEVER's Wikipedia, SNLI) written back as plain prose, as papers read."""
    for pat, rep in _PTB:
        text = pat.sub(rep, text)
    return text.strip()


def part_of(claim: str) -> str:
    """HealthVer claims: one third each for training, calibration and the final check, by a hash of the claim."""
    return ("train", "cal", "final")[int(hashlib.sha1(claim.strip().lower().encode()).hexdigest(), 16) % 3]


def read_pairs(folder: Path) -> list[dict]:
    """Every usable pair with its `part` (train | cal | final) and `source`."""
    out: list[dict] = []
    for name, (source, _licence, part) in FILES.items():
        path = folder / name
        if not path.exists():
            continue
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                r = json.loads(line)
                label = LABEL_MAP.get(str(r.get("label", "")).lower())
                if label is None or not r.get("premise") or not r.get("hypothesis"):
                    continue
                claim = clean(r["hypothesis"])
                out.append({"claim": claim, "sentence": clean(r["premise"]), "prev": "", "label": label,
                            "source": source, "part": part_of(claim) if part == "by claim" else part,
                            "binary": source in ("fever", "covid-fact", "nli4ct-train", "nli4ct-dev")})
    return out


def manifest_record(folder: Path, pairs: list[dict]) -> list[dict]:
    """Each file used, its licence and how many of its pairs went to each part (for model.json)."""
    rec = []
    for name, (source, licence, _part) in FILES.items():
        mine = [p for p in pairs if p["source"] == source]
        if not mine:
            continue
        counts: dict[str, int] = {}
        for p in mine:
            counts[p["part"]] = counts.get(p["part"], 0) + 1
        rec.append({"file": f"../shared/datasets/nli/{name}", "source": source, "licence": licence,
                    "pairs": counts})
    return rec
