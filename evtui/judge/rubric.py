"""The versioned relevance rubric an LLM judge answers, and the strict-but-forgiving parser of its answers.

Adapted from Paper Lantern's academic-search relevance prompt (Apache-2.0; 0–5 Likert, confidence 0–10, one
summary sentence) from (query, paper title + abstract) to (query, one evidence sentence in its context). The
level descriptions follow evidence rather than topic: a sentence only reaches 3+ when it *reports* something
that bears on the query. Any change to the wording must bump PROMPT_VERSION: the judgment cache is keyed by it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evtui.judge.base import LEVELS, STANCES
from evtui.models import Evidence, ParsedQuery, Sentence

PROMPT_VERSION = "evtui-rubric-v2"  # v2: back matter is level 0

SYSTEM_PROMPT = """You are an expert scientific research assistant who judges evidence.

You will be given this INPUT:
- QUERY: a researcher's hypothesis, claim, or (head, relation, tail) triplet
- ASPECTS: the parts of the query, each with an id
- PAPER: the title of the paper the sentence comes from, and its section
- CONTEXT BEFORE / CONTEXT AFTER: the neighbouring sentences, for reading only
- SENTENCE: the one sentence you judge

TASK
Judge how strongly the SENTENCE (read in its context) is evidence bearing on the QUERY. Judge the SENTENCE
itself: the context only helps you understand it. Use this rubric:

5 - Direct Correspondence - The sentence reports a result or analysis that directly tests the query's claim or
relation, with the query's entities in the query's roles.
4 - Primary Evidence - The sentence gives evidence on the query's core relation (e.g. an effect, an
association, a measurement linking the query's entities), with minor differences in population, measure or
direction of interest.
3 - Substantial Evidence - The sentence gives evidence on a part of the query (one entity or one step of the
relation), or on the core relation only indirectly.
2 - Peripheral - The sentence is on the query's topic (same entities or domain) but reports no evidence on it:
background, aims, methods without results, speculation.
1 - Tangential - Only shared terminology or domain; relevance needs inference.
0 - No Relevance - No meaningful connection to the query.

STANCE: "supports" if the sentence is evidence for the query, "refutes" if it is evidence against it (an
opposite effect, no effect, no association), "neutral" if it reports no evidence either way.

OUTPUT FORMAT
Return only a JSON object with these fields:
{"level": <0-5 integer per the rubric>,
 "confidence": <0-10 integer, your confidence in this assessment>,
 "stance": "supports" | "refutes" | "neutral",
 "aspects": [<ids of the ASPECTS the sentence covers>],
 "rationale": "<one sentence explaining the level>"}

IMPORTANT GUIDELINES
1. Match meaning, not keywords: a sentence that repeats the query's words without reporting evidence is at most 2.
2. Pay careful attention to the direction of relationships and to the roles of entities (subject vs. object).
3. A result against the query is still strong evidence: give it a high level with stance "refutes".
4. Terms may have domain-specific meanings; abbreviations defined in the context count.
5. Funding, acknowledgement, conflict-of-interest and trial-registration statements are never evidence: level 0,
stance "neutral", whatever words they share with the query.
6. Be concise and objective."""

USER_TEMPLATE = """QUERY ({mode}): {query}

ASPECTS:
{aspects}

PAPER: {title}
SECTION: {section}

CONTEXT BEFORE: {before}

SENTENCE: {sentence}

CONTEXT AFTER: {after}"""

REPAIR_TEMPLATE = """Your reply could not be used: {error}
Reply again with only the JSON object, exactly in this form and nothing else:
{{"level": 0-5, "confidence": 0-10, "stance": "supports" | "refutes" | "neutral", "aspects": [{ids}], "rationale": "one sentence"}}"""

# The schema constrained decoders (llama.cpp's json_object + schema) follow; it mirrors RubricOutput.
OUTPUT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "level": {"type": "integer", "minimum": 0, "maximum": 5},
        "confidence": {"type": "integer", "minimum": 0, "maximum": 10},
        "stance": {"type": "string", "enum": list(STANCES)},
        "aspects": {"type": "array", "items": {"type": "string"}},
        "rationale": {"type": "string"},
    },
    "required": ["level", "confidence", "stance", "aspects", "rationale"],
}

# Small models echo Paper Lantern's field names or synonyms; accept them rather than waste a repair call.
_ALIASES = {
    "level": ("level", "relevance", "relevanceScore", "relevance_score", "relevance_level"),
    "confidence": ("confidence", "confidenceLevel", "confidence_level"),
    "stance": ("stance", "verdict", "label"),
    "aspects": ("aspects", "aspect_ids", "covered_aspects"),
    "rationale": ("rationale", "summaryStatement", "summary", "reason", "explanation"),
}
_STANCE_WORDS = {"support": "supports", "supported": "supports", "supporting": "supports",
                 "refute": "refutes", "refuted": "refutes", "refuting": "refutes", "contradicts": "refutes",
                 "none": "neutral", "no evidence": "neutral"}
MAX_RATIONALE = 400


class RubricError(ValueError):
    """The model's reply is not a valid rubric verdict; the message says why (it goes into the repair prompt)."""


class RubricOutput(BaseModel):
    model_config = ConfigDict(extra="ignore")

    level: int = Field(ge=0, le=5)
    confidence: int = Field(ge=0, le=10)
    stance: str
    aspects: list[str] = Field(default_factory=list)
    rationale: str = ""

    @field_validator("level", "confidence", mode="before")
    @classmethod
    def _whole_number(cls, v: object) -> object:
        # "4" and 4.0 are fine; 3.5 or "high" are not (pydantic rejects them after this).
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            return int(v.strip())
        return v

    @field_validator("stance", mode="before")
    @classmethod
    def _stance(cls, v: object) -> str:
        s = str(v).strip().lower()
        s = _STANCE_WORDS.get(s, s)
        if s not in STANCES:
            raise ValueError(f"stance must be one of {', '.join(STANCES)}, got {v!r}")
        return s

    @field_validator("aspects", mode="before")
    @classmethod
    def _aspect_list(cls, v: object) -> list[str]:
        if v is None:
            return []
        if isinstance(v, str):
            return [p.strip() for p in v.split(",") if p.strip()]
        if isinstance(v, list):
            return [str(x).strip() for x in v if str(x).strip()]
        raise ValueError("aspects must be a list of aspect ids")

    @field_validator("rationale", mode="before")
    @classmethod
    def _one_line(cls, v: object) -> str:
        return " ".join(str(v or "").split())[:MAX_RATIONALE]


def extract_json(text: str) -> dict[str, Any]:
    """The first JSON object in a reply, also when the model wraps it in prose or ``` fences."""
    if not text or not text.strip():
        raise RubricError("the reply was empty")
    decoder = json.JSONDecoder()
    for m in re.finditer(r"\{", text):
        try:
            obj, _end = decoder.raw_decode(text, m.start())
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict):
            return obj
    raise RubricError("the reply contains no JSON object")


def _unalias(obj: dict[str, Any]) -> dict[str, Any]:
    # Paper Lantern nests its verdict: {"paper_query_relevance": {...}}; take the inner object.
    if len(obj) == 1:
        inner = next(iter(obj.values()))
        if isinstance(inner, dict):
            obj = inner
    out: dict[str, Any] = {}
    for field, names in _ALIASES.items():
        for name in names:
            if name in obj:
                out[field] = obj[name]
                break
    return out


def parse_output(text: str, aspect_ids: Sequence[str] = ()) -> RubricOutput:
    """Validate a reply into a RubricOutput. Unknown aspect ids are dropped (the model may invent some)."""
    obj = _unalias(extract_json(text))
    if "level" not in obj:
        raise RubricError('the JSON object has no "level" field')
    obj.setdefault("stance", "neutral")
    try:
        out = RubricOutput.model_validate(obj)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors())
        raise RubricError(f"invalid fields: {problems}") from exc
    if aspect_ids:
        known = {a.lower(): a for a in aspect_ids}
        out.aspects = list(dict.fromkeys(known[a.lower()] for a in out.aspects if a.lower() in known))
    return out


@dataclass(frozen=True)
class Context:
    """What the judge sees of one sentence besides its text."""

    before: str = ""
    after: str = ""


def context_from(sentences: Sequence[Sentence], target_id: str) -> Context:
    """Split a store.context() window into the text before and after the target sentence."""
    before: list[str] = []
    after: list[str] = []
    seen = False
    for s in sentences:
        if s.id == target_id:
            seen = True
        elif seen:
            after.append(s.text)
        else:
            before.append(s.text)
    return Context(" ".join(before), " ".join(after))


def user_prompt(query: ParsedQuery, evidence: Evidence, context: Context | None = None) -> str:
    ctx = context or Context()
    s = evidence.sentence
    aspects = "\n".join(f"- {a.id}: {a.label}" for a in query.aspects) or "- (none)"
    section = s.section_title or s.section_kind or "unknown"
    if s.section_title and s.section_kind and s.section_kind != "other" and s.section_kind.lower() != s.section_title.lower():
        section = f"{s.section_title} ({s.section_kind})"
    return USER_TEMPLATE.format(
        mode=query.mode, query=query.text, aspects=aspects, title=evidence.title or "(untitled)", section=section,
        before=ctx.before or "(none)", sentence=s.text, after=ctx.after or "(none)",
    )


def build_messages(query: ParsedQuery, evidence: Evidence, context: Context | None = None) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": user_prompt(query, evidence, context)}]


def repair_messages(messages: Sequence[dict[str, str]], reply: str, error: str,
                    aspect_ids: Sequence[str] = ()) -> list[dict[str, str]]:
    """The conversation so far, the bad reply, and a request for the bare JSON object."""
    ids = ", ".join(f'"{a}"' for a in aspect_ids)
    return [*messages, {"role": "assistant", "content": reply[:2000]},
            {"role": "user", "content": REPAIR_TEMPLATE.format(error=error, ids=ids)}]


def level_label(level: int) -> str:
    return LEVELS.get(level, "")
