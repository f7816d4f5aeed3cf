"""Relevance judges: a 0–100 rubric verdict, stance and covered aspects for each (query, sentence) pair.

`local` is the offline default; `llm` is any litellm model (imported lazily, only when used).
"""

from evtui.judge.base import LEVELS, STANCES, Judge, Judgment
from evtui.judge.rubric import PROMPT_VERSION
from evtui.judge.service import (
    JUDGES,
    Estimate,
    estimate,
    failure_line,
    judge_evidence,
    make_judge,
    summarize,
)

__all__ = [
    "JUDGES", "LEVELS", "PROMPT_VERSION", "STANCES", "Estimate", "Judge", "Judgment", "estimate", "failure_line",
    "judge_evidence", "make_judge", "summarize",
]
