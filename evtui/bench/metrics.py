"""Metrics. Aspect Recall is EvidenceBench's own measure (Wang et al., COLM 2025, §2.3), written once here."""

from __future__ import annotations

from collections.abc import Iterable, Mapping


def aspect_recall(picked: Iterable[int], sentence_aspects: Mapping[int, Iterable[str]], task_aspects: Iterable[str]) -> float | None:
    """|aspects covered by the picked sentences| / |task aspects that some sentence of the paper covers|.

    Returns None when no sentence covers any task aspect (the item cannot be scored).
    """
    wanted = set(task_aspects)
    coverable = {a for aspects in sentence_aspects.values() for a in aspects} & wanted
    if not coverable:
        return None
    covered = {a for i in picked for a in sentence_aspects.get(i, ())} & coverable
    return len(covered) / len(coverable)
