"""The paper channel's documents reach its writer as each paper's sentences are added (so its thread analyses
them while the sentences are indexed), with the same results as writing them at the commit: one document per
paper, a paper added in two parts whole, a delete after an add honoured, a rollback dropping them."""

from __future__ import annotations

from pathlib import Path

from evtui.index import SentenceIndex
from evtui.models import Sentence


def _sents(pid: str, texts: list[str], start: int = 0) -> list[Sentence]:
    return [Sentence(f"{pid}#{start + i}", pid, start + i, "Abstract", "abstract", False, t)
            for i, t in enumerate(texts)]


def _titles(*pids: str) -> dict[str, str]:
    return {p: f"Title of {p}" for p in pids}


def test_documents_written_while_adding(tmp_path: Path) -> None:
    ix = SentenceIndex(tmp_path / "index")
    ix.add(_sents("p1", ["aspirin lowered risk", "in adults"]) + _sents("p2", ["statins and cholesterol"]),
           _titles("p1", "p2"), {"p1": 2001, "p2": None})
    # both papers are complete once add() returns: nothing of them is left waiting for the commit
    assert not ix.papers._staged
    ix.commit()
    assert sorted(ix.paper_ids()) == ["p1", "p2"]
    assert ix.paper_search(["aspirin"], 5)[0][0] == "p1"
    ix.close()


def test_paper_added_in_two_parts_is_one_whole_document(tmp_path: Path) -> None:
    ix = SentenceIndex(tmp_path / "index")
    ix.add(_sents("p1", ["aspirin lowered risk"]), _titles("p1"), {})
    ix.add(_sents("p1", ["metformin too"], start=1), _titles("p1"), {})
    ix.commit()
    assert ix.paper_ids() == ["p1"]
    assert ix.paper_search(["metformin"], 5)[0][0] == "p1"
    assert ix.paper_search(["aspirin"], 5)[0][0] == "p1"


def test_delete_after_add_and_rollback(tmp_path: Path) -> None:
    ix = SentenceIndex(tmp_path / "index")
    ix.add(_sents("p1", ["aspirin lowered risk"]) + _sents("p2", ["statins"]), _titles("p1", "p2"), {})
    ix.delete_papers(["p1"])
    ix.commit()
    assert ix.paper_ids() == ["p2"]
    ix.add(_sents("p3", ["lithium toxicity"]), _titles("p3"), {})
    ix.rollback()
    ix.commit()
    assert ix.paper_ids() == ["p2"]
    ix.add(_sents("p4", ["ace inhibitors cough"]), _titles("p4"), {})
    ix.delete_all()  # a rebuild: what was written since the commit goes with the rest
    ix.add(_sents("p5", ["vitamin d"]), _titles("p5"), {})
    ix.commit()
    assert ix.paper_ids() == ["p5"]
    ix.close()
