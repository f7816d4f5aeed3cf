"""The trained verifier at run time: int8 ONNX through onnxruntime, no torch.

(claim, sentence, previous sentence) -> calibrated P(supports), P(refutes), P(neutral). The model (a < 1 MB adapter
over the base MiniLM, see evtui/verify/adapter.py), its temperature and the precision-chosen thresholds for taking a
side ship in evtui/resources/verifier; model.json records the sha256s, the training data and the held-out figures
(scripts/train_verifier.py writes both).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from evtui.checksum import checked_file
from evtui.errors import EvtuiError

MODEL_DIR = Path(__file__).resolve().parent.parent / "resources" / "verifier"
TOKENIZER = Path(__file__).resolve().parent.parent / "resources" / "minilm" / "tokenizer.json"
LABELS = ("supports", "refutes", "neutral")
# The same rule as training (scripts/train_verifier.py): the previous sentence is read only when the sentence
# opens with a word that points back to it.
_ANAPHOR = re.compile(r"^(?:this|these|those|such|it|they|its|their|both|the latter|the former|here|thus|"
                      r"therefore|however|in contrast|similarly|moreover|furthermore|in addition)\b", re.I)


def pair_text(sentence: str, prev: str) -> str:
    return f"{sentence} [SEP] {prev}" if prev and _ANAPHOR.match(sentence) else sentence


def fit_claim(tok: Any, claim: str) -> str:
    """The claim cut to half the model's length: truncation takes tokens from the sentence only (a claim is short and
    every word of it counts), so a pasted paragraph as the claim would leave the sentence no room at all and the
    tokenizer refuses the pair. Claims up to that length (every training claim) are read whole, as before."""
    trunc = tok.truncation  # "only_second" cannot cut a lone sequence: measure the claim without it
    limit = int((trunc or {}).get("max_length", 128)) // 2
    if len(claim) <= limit:  # a token covers at least one character
        return claim
    tok.no_truncation()
    try:
        enc = tok.encode(claim, add_special_tokens=False)
    finally:
        if trunc:
            tok.enable_truncation(**trunc)
    if len(enc.ids) <= limit:
        return claim
    return claim[: enc.offsets[limit - 1][1]]


def encode_pairs(tok: Any, claims: Sequence[str], texts: Sequence[str], *,
                 fitted: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(input_ids, attention_mask, token_type_ids) for (claim, text) pairs, padded to the longest (training uses it
    too, so the model is trained on exactly what it reads at run time). `fitted`: the claims are fit_claim's
    already (a verifier reads one claim against many sentences, and fits it once)."""
    fit = {c: c if fitted else fit_claim(tok, c) for c in dict.fromkeys(claims)}  # each distinct claim once
    enc = tok.encode_batch([(fit[c], t) for c, t in zip(claims, texts, strict=True)])
    n = max(len(e.ids) for e in enc)
    ids = np.zeros((len(enc), n), dtype=np.int64)
    tt = np.zeros_like(ids)
    am = np.zeros_like(ids)
    for i, e in enumerate(enc):
        m = len(e.ids)
        ids[i, :m], tt[i, :m], am[i, :m] = e.ids, e.type_ids, 1
    return ids, am, tt


@dataclass(frozen=True, slots=True)
class StanceProbs:
    """The verifier's reading of one sentence against one claim."""

    p_support: float
    p_refute: float
    p_neutral: float
    stance: str  # supports | refutes | neutral, after the thresholds

    @property
    def lean(self) -> tuple[str, float] | None:
        """For a neutral: the side more probable than neutral that missed its threshold, with its probability."""
        side, p = max((("supports", self.p_support), ("refutes", self.p_refute)), key=lambda sp: sp[1])
        return (side, p) if self.stance == "neutral" and p > self.p_neutral else None

    @property
    def p_side(self) -> float:
        """P(support) + P(refute): how much the sentence bears on the claim either way (+VeriRel's signal)."""
        return self.p_support + self.p_refute

    @property
    def confidence(self) -> float:
        """The probability of the label given (for neutral: of not taking a side)."""
        return {"supports": self.p_support, "refutes": self.p_refute}.get(self.stance, self.p_neutral)


class Verifier:
    """Thread-safe after construction (onnxruntime sessions are); build one with `default_verifier()`."""

    def __init__(self, folder: Path = MODEL_DIR, threads: int = 2) -> None:
        from tokenizers import Tokenizer

        try:
            manifest = json.loads((folder / "model.json").read_text())
        except (OSError, ValueError) as exc:
            raise EvtuiError(f"the verifier model is missing or unreadable in {folder}: {exc}") from exc
        self.version: str = manifest["version"]
        self.temperature = float(manifest["temperature"])
        self.thresholds: dict[str, float] = dict(manifest["thresholds"])
        self.manifest = manifest
        if "members" in manifest:  # several adapters over the same base, their logits averaged (an ensemble)
            self._logits = _mean_of(folder, manifest, threads)
        elif "adapter" in manifest:  # the shipped form: a small adapter over the base MiniLM (evtui/verify/adapter.py)
            from evtui.verify.adapter import AdapterModel

            self._logits = AdapterModel(folder, manifest, threads).logits
        else:  # one self-contained int8 ONNX file (`train_verifier.py --lora 0`)
            self._logits = self._onnx_file(folder, manifest, threads)
        self._tok = Tokenizer.from_file(str(TOKENIZER))
        self._tok.enable_truncation(max_length=int(manifest.get("max_len", 128)), strategy="only_second")
        self._tok.no_padding()
        self._lock = threading.Lock()  # the tokenizer's truncation settings are shared state

    @staticmethod
    def _onnx_file(folder: Path, manifest: dict[str, Any], threads: int) -> Any:
        import onnxruntime as ort

        path = checked_file(folder / manifest["file"], manifest["sha256"], "verifier model file")
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        so.inter_op_num_threads = 1
        session = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

        def logits(ids: np.ndarray, am: np.ndarray, tt: np.ndarray) -> np.ndarray:
            return session.run(None, {"input_ids": ids, "attention_mask": am, "token_type_ids": tt})[0]

        return logits

    def _encode(self, claims: Sequence[str], texts: Sequence[str], *,
                fitted: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        with self._lock:
            return encode_pairs(self._tok, claims, texts, fitted=fitted)

    def probabilities(self, claim: str, sentences: Sequence[str], prevs: Sequence[str] | None = None) -> np.ndarray:
        """(n, 3) calibrated probabilities, columns supports / refutes / neutral."""
        if not sentences:
            return np.zeros((0, 3), dtype=np.float32)
        prevs = prevs if prevs is not None else [""] * len(sentences)
        texts = [pair_text(s, p) for s, p in zip(sentences, prevs, strict=True)]
        # One (claim, sentence) pair per model call: the int8 products quantise their input with one scale per call
        # (evtui/verify/adapter.py), so in a batch a sentence's probabilities would depend on its batch mates and
        # their padding (4.5% of stance decisions on the calibration pairs moved; BENCHMARKS.md "One pair per call").
        # Alone, a sentence gets the same verdict in the judge, `evtui verify` and the app, at no cost in speed.
        with self._lock:
            claim = fit_claim(self._tok, claim)  # once for every sentence read against it
        logits = np.concatenate([self._logits(*self._encode([claim], [t], fitted=True)) for t in texts])
        z = logits / self.temperature
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)

    def reliability(self, *, short: bool = False) -> str:
        """How often its sides were right on claims it never saw, as model.json records them: the final check (sets
        read once, after training, never used to choose anything), or for an older model its cross-fitted and
        held-out figures — never figures from data a threshold was chosen on. The line shown beside its verdicts,
        so a reader weighs a side by what it is worth. "" when the manifest has no held-out figures."""
        m = self.manifest.get("metrics") or {}
        final = {k: v for k, v in (m.get("final_check") or {}).items() if k != "all"}
        if final:  # a side's precision over every pair of the set, neutral ones included (None: never given)
            sets = [{"supports": {"precision": v["supports"].get("precision_all_pairs")},
                     "refutes": {"precision": v["refutes"].get("precision_all_pairs")},
                     "side_taken": v["side_taken"]} for v in final.values()]
            named = "final check: " + ", ".join(sorted(final))
        else:
            sets = [m[k]["stance_on_gold"] for k in ("scifact_cal_crossfit", "checkcovid_dev") if k in m]
            named = "SciFact cross-fitted, Check-COVID dev"
        if len(sets) < 2:
            return ""

        def span(values: list[float | None]) -> str:
            known = [v for v in values if v is not None]
            if not known:
                return "never given"
            lo, hi = round(100 * min(known)), round(100 * max(known))
            return f"{lo}%" if lo == hi else f"{lo}–{hi}%"

        sup_s = span([x["supports"]["precision"] for x in sets])
        ref_s = span([x["refutes"]["precision"] for x in sets])
        taken = span([x["side_taken"] for x in sets])
        if ref_s == "never given" or sup_s == "never given":
            never = "'refutes'" if ref_s == "never given" else "'supports'"
            given = ("supports", sup_s) if ref_s == "never given" else ("refutes", ref_s)
            if short:
                glyph, none = ("▲", "▼") if given[0] == "supports" else ("▼", "▲")
                return f"held out: {glyph} right {given[1]} · {none} never given (leans only)"
            return (f"on held-out claims a '{given[0]}' was right {given[1]} of the time; it gives no {never} at all "
                    f"(no threshold made one right 85% of the time), only leans ({named})")
        if short:  # the app's claim screen, at 80 columns
            return f"held out: ▲ right {sup_s} · ▼ right {ref_s} · a side on {taken} of true evidence"
        return (f"on held-out claims a 'supports' was right {sup_s} of the time, a 'refutes' {ref_s}; it took a side "
                f"on {taken} of the true evidence ({named})")

    def decide(self, p: np.ndarray) -> str:
        """A side only when its calibrated probability clears the threshold chosen for precision."""
        if self.takes("refutes") and p[1] >= self.thresholds["refutes"] and p[1] > p[0]:
            return "refutes"
        if self.takes("supports") and p[0] >= self.thresholds["supports"] and p[0] >= p[1]:
            return "supports"
        return "neutral"

    def takes(self, side: str) -> bool:
        """Whether the side is ever given: a threshold of 0.99 or more says no threshold made it right often enough
        on held-out pairs (scripts/train_verifier_nli.py), so it is only ever a lean."""
        return self.thresholds[side] < 0.99

    def verify(self, claim: str, sentences: Sequence[str], prevs: Sequence[str] | None = None) -> list[StanceProbs]:
        probs = self.probabilities(claim, sentences, prevs)
        return [StanceProbs(float(p[0]), float(p[1]), float(p[2]), self.decide(p)) for p in probs]


def _mean_of(folder: Path, manifest: dict[str, Any], threads: int) -> Any:
    """Students of different seeds misread different findings: on the held-out sets the mean of two students' logits
    read sides better than either (though not plain wording; BENCHMARKS.md "Near-topic findings from the teacher").
    Each member is an adapter spec as a single model's `adapter` block, over the one `base`; the temperature and
    thresholds in model.json are fitted to the mean."""
    from evtui.verify.adapter import AdapterModel

    models = [AdapterModel(folder, {**manifest, "adapter": spec}, threads) for spec in manifest["members"]]
    if not models:
        raise EvtuiError(f"the verifier in {folder} lists no members; reinstall evtui")

    def logits(ids: np.ndarray, am: np.ndarray, tt: np.ndarray) -> np.ndarray:
        return np.mean([m.logits(ids, am, tt) for m in models], axis=0)

    return logits


@lru_cache(maxsize=1)
def default_verifier() -> Verifier:
    """The shipped model, loaded once per process (the sha256 checks and the merge take about a second)."""
    return Verifier()
