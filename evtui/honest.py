"""Honest result lists: say when no sentence mentions the query's concepts instead of filling the page.

A query's concepts are its aspects other than the relation ("cause", "reduce"): a sentence that matches only the
relation ("xylophonic zebrafication causes quarkitis" -> rows about anything that "causes") is no evidence. The
lexical methods hide the rows that mention none of the concepts and name the concepts no row mentions; dense and
hybrid rank paraphrases on purpose (no word in common), so their rows are kept and only the note is given.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from evtui.methods import is_semantic
from evtui.models import Aspect, Evidence


@dataclass
class Honest:
    evidence: list[Evidence]
    hidden: int = 0  # rows dropped because they mention none of the concepts
    missing: list[str] = field(default_factory=list)  # concept labels no row mentions
    notes: list[str] = field(default_factory=list)

    @property
    def nothing(self) -> bool:
        """No row mentions any concept of the query."""
        return not self.evidence


def _or(labels: Sequence[str]) -> str:
    quoted = [f"“{x}”" for x in labels]
    return quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]


def concepts(aspects: Sequence[Aspect]) -> list[Aspect]:
    """The aspects a row must mention to count (all of them when the query has only relations)."""
    found = [a for a in aspects if a.role != "relation"]
    return found or list(aspects)


def honest(evidence: Sequence[Evidence], aspects: Sequence[Aspect], method: str) -> Honest:
    wanted = concepts(aspects)
    ids = {a.id for a in wanted}
    if not evidence or not ids:
        return Honest(list(evidence))
    mentioned = {h.aspect for e in evidence for h in e.highlights} & ids
    missing = [a.label for a in wanted if a.id not in mentioned]
    out = Honest(list(evidence), missing=missing)
    if not is_semantic(method):  # a semantic method's rows may rightly share no word with the query
        out.evidence = [e for e in evidence if any(h.aspect in ids for h in e.highlights)]
        out.hidden = len(evidence) - len(out.evidence)
    if not mentioned:
        out.notes.append(f"no sentence mentions {_or([a.label for a in wanted])}")
    elif missing:
        out.notes.append(f"no sentence mentions {_or(missing)}")
    if out.hidden and mentioned:
        out.notes.append(f"{out.hidden} sentence(s) mentioning none of the concepts hidden")
    return out
