"""`evtui bench stance`: the verifier's stance on labelled (evidence, claim) pairs, decided exactly as the judge decides
a sentence read without its context (evtui/judge/local.py `sentence_stance`), with the figures a user needs to know
what a side is worth.

A pairs file is JSON Lines, optionally gzipped: `premise` (the evidence), `hypothesis` (the claim), `label`
(supports | refutes | neutral, or entailment | contradiction | neutral). `macro_f1` is the mean F1 of supports and
refutes over every pair: a neutral given to a side pair is a miss, a side given to a neutral pair a false one.
"""

from __future__ import annotations

import gzip
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evtui.errors import EvtuiError

STANCES = ("supports", "refutes", "neutral")
LABELS = {"supports": "supports", "entailment": "supports", "refutes": "refutes", "contradiction": "refutes",
          "neutral": "neutral"}
MAX_LINE = 1_000_000  # characters: a pair is a sentence or a passage, not a book


@dataclass
class Pair:
    premise: str
    hypothesis: str
    label: str  # supports | refutes | neutral
    line: int


@dataclass
class PairsFile:
    pairs: list[Pair]
    problems: list[str] = field(default_factory=list)  # one line per malformed line, naming its number


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open("rb") as fh:
            gz = fh.read(2) == b"\x1f\x8b"
        opener: Callable[..., Any] = gzip.open if gz else open
        with opener(path, "rt", encoding="utf-8-sig", errors="replace", newline="") as fh:
            yield from fh
    except (OSError, EOFError, gzip.BadGzipFile) as exc:
        raise EvtuiError(f"cannot read the pairs file {path}: {exc}") from exc


def read_pairs(path: Path) -> PairsFile:
    """Every well-formed pair of the file; each malformed line is one problem naming its line number."""
    out = PairsFile([])
    for n, raw in enumerate(_lines(path), start=1):
        line = raw.strip()
        if not line:
            continue
        if len(line) > MAX_LINE:
            out.problems.append(f"line {n}: longer than {MAX_LINE:,} characters")
            continue
        try:
            row = json.loads(line)
        except (ValueError, RecursionError) as exc:
            out.problems.append(f"line {n}: not JSON ({str(exc).splitlines()[0][:80]})")
            continue
        if not isinstance(row, dict):
            out.problems.append(f"line {n}: not a JSON object")
            continue
        premise, hypothesis, label = row.get("premise"), row.get("hypothesis"), row.get("label")
        missing = [k for k, v in (("premise", premise), ("hypothesis", hypothesis)) if not isinstance(v, str)
                   or not v.strip()]
        if missing:
            out.problems.append(f"line {n}: no {' or '.join(missing)} text")
            continue
        gold = LABELS.get(str(label).strip().lower()) if isinstance(label, str) else None
        if gold is None:
            out.problems.append(f"line {n}: label {str(label)[:40]!r} is not one of "
                                "supports|refutes|neutral|entailment|contradiction")
            continue
        out.pairs.append(Pair(str(premise).strip(), str(hypothesis).strip(), gold, n))
    return out


def metrics(gold: list[str], predicted: list[str]) -> dict[str, Any]:
    """accuracy, macro-F1 of the two sides, side_taken, per-label precision/recall/F1 and the confusion matrix."""
    n = len(gold)
    labels: dict[str, dict[str, float | int]] = {}
    for c in STANCES:
        tp = sum(1 for g, p in zip(gold, predicted, strict=True) if g == p == c)
        npred = sum(1 for p in predicted if p == c)
        ngold = sum(1 for g in gold if g == c)
        prec = tp / npred if npred else 0.0
        rec = tp / ngold if ngold else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        labels[c] = {"precision": round(prec, 4), "recall": round(rec, 4), "f1": round(f1, 4), "predicted": npred,
                     "gold": ngold}
    confusion = {g: {p: sum(1 for a, b in zip(gold, predicted, strict=True) if a == g and b == p) for p in STANCES}
                 for g in STANCES}
    return {
        "accuracy": round(sum(g == p for g, p in zip(gold, predicted, strict=True)) / n, 4) if n else 0.0,
        "macro_f1": round((float(labels["supports"]["f1"]) + float(labels["refutes"]["f1"])) / 2, 4),
        "side_taken": round(sum(p != "neutral" for p in predicted) / n, 4) if n else 0.0,
        "labels": labels,
        "confusion": confusion,
    }


def run_stance(path: Path, on_progress: Callable[[int, int], None] | None = None,
               on_problem: Callable[[str], None] | None = None) -> dict[str, Any]:
    """Read the file, decide each pair as the judge would, and score the decisions."""
    from evtui.judge.local import sentence_stance
    from evtui.verify.model import default_verifier

    parsed = read_pairs(path)
    for problem in parsed.problems:
        if on_problem:
            on_problem(problem)
    if not parsed.pairs:
        raise EvtuiError(f"no usable pair in {path}" + (f" ({parsed.problems[0]})" if parsed.problems else ""))
    verifier = default_verifier()
    predicted: list[str] = []
    for i, pair in enumerate(parsed.pairs, start=1):
        sp = verifier.verify(pair.hypothesis, [pair.premise], [""])[0]
        predicted.append(sentence_stance(pair.hypothesis, pair.premise, "", sp)[0])
        if on_progress:
            on_progress(i, len(parsed.pairs))
    return {"pairs": len(parsed.pairs), "model": verifier.version,
            **metrics([p.label for p in parsed.pairs], predicted)}
