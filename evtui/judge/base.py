"""The judgment contract shared by every judge (local, llm): one rubric, one record shape.

Rubric (adapted from Paper Lantern's academic-search prompt, from (query, paper) to (query, sentence)):
level 0–5 on a Likert scale, score = 20 × level, confidence 0–10, stance, covered aspect ids, a one-line rationale.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal, Protocol

from evtui.models import LEVELS, Evidence, ParsedQuery

Stance = Literal["supports", "refutes", "neutral"]
STANCES: tuple[str, ...] = ("supports", "refutes", "neutral")


@dataclass
class Judgment:
    """One judge's verdict on one (query, sentence) pair. `status` is 'failed' (with `error`) when the judge
    could not produce a valid verdict; score fields are then 0 and must not be shown as a verdict."""

    sentence_id: str
    score: int  # 0..100, = 20 * level
    level: int  # 0..5
    confidence: int  # 0..10
    stance: str  # supports | refutes | neutral
    aspects: list[str]  # aspect ids the sentence covers
    rationale: str
    judge: str  # "local" | "llm"
    model: str  # e.g. "evtui-local-v1", "openai/gpt-4o-mini"
    prompt_version: str
    cost: float = 0.0  # USD; 0 for local models (and unknown prices, with a note)
    tokens_in: int = 0
    tokens_out: int = 0
    status: str = "ok"  # ok | failed
    error: str | None = None
    cached: bool = False
    notes: list[str] = field(default_factory=list)
    # For a neutral: the side the verifier found more probable than neutral, below its precision threshold ("" none).
    # Shown dim ("leans ▼"), never as a verdict.
    lean: str = ""

    @property
    def label(self) -> str:
        return LEVELS.get(self.level, "")

    def to_json(self) -> dict[str, object]:
        d = asdict(self)
        d["level_label"] = self.label
        return d


class Judge(Protocol):
    name: str  # "local" | "llm"
    model: str
    prompt_version: str

    def judge(self, query: ParsedQuery, evidence: list[Evidence]) -> list[Judgment]:
        """One Judgment per Evidence, in the same order. Never raises for a single bad item."""
        ...
