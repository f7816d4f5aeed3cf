"""`evtui bench stance`'s reading of pairs files and its figures, checked against hand-computed cases."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from evtui.bench.stance import metrics, read_pairs
from evtui.errors import EvtuiError

FIXTURES = Path(__file__).parents[1] / "fixtures" / "stance"


def test_metrics_hand_computed() -> None:
    gold = ["supports", "supports", "refutes", "refutes", "neutral", "neutral"]
    pred = ["supports", "neutral", "refutes", "supports", "neutral", "refutes"]
    m = metrics(gold, pred)
    # supports: tp 1, predicted 2, gold 2 -> P 0.5, R 0.5, F1 0.5
    assert m["labels"]["supports"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "predicted": 2, "gold": 2}
    # refutes: tp 1, predicted 2 (one on a neutral pair), gold 2 -> P 0.5, R 0.5
    assert m["labels"]["refutes"] == {"precision": 0.5, "recall": 0.5, "f1": 0.5, "predicted": 2, "gold": 2}
    # neutral: tp 1, predicted 2, gold 2
    assert m["labels"]["neutral"]["f1"] == 0.5
    assert m["macro_f1"] == 0.5  # the mean of the two sides only
    assert m["accuracy"] == round(3 / 6, 4)
    assert m["side_taken"] == round(4 / 6, 4)
    assert m["confusion"]["refutes"] == {"supports": 1, "refutes": 1, "neutral": 0}
    assert m["confusion"]["supports"]["neutral"] == 1
    assert sum(sum(row.values()) for row in m["confusion"].values()) == 6


def test_a_neutral_on_a_side_pair_is_a_miss() -> None:
    m = metrics(["supports", "refutes"], ["neutral", "neutral"])
    assert m["macro_f1"] == 0.0 and m["side_taken"] == 0.0
    assert m["labels"]["supports"]["precision"] == 0.0  # nothing predicted: 0, not a division error


def test_uneven_sides() -> None:
    gold = ["supports"] * 3 + ["refutes"]
    pred = ["supports", "supports", "refutes", "refutes"]
    m = metrics(gold, pred)
    # supports P 1, R 2/3 -> F1 0.8; refutes P 1/2, R 1 -> F1 2/3; mean 0.7333
    assert m["labels"]["supports"]["f1"] == 0.8
    assert m["labels"]["refutes"]["f1"] == round(2 / 3, 4)
    assert m["macro_f1"] == round((0.8 + 0.6667) / 2, 4)


def test_pairs_file_plain_and_gzipped_read_alike() -> None:
    plain = read_pairs(FIXTURES / "pairs.jsonl")
    gz = read_pairs(FIXTURES / "pairs.jsonl.gz")
    assert [p.label for p in plain.pairs] == [p.label for p in gz.pairs] == ["supports", "refutes", "neutral"]
    assert not plain.problems


def test_malformed_lines_are_named_and_the_rest_kept() -> None:
    parsed = read_pairs(FIXTURES / "malformed.jsonl")
    assert [(p.line, p.label) for p in parsed.pairs] == [(1, "supports"), (6, "refutes")]
    assert [msg.split(":")[0] for msg in parsed.problems] == ["line 2", "line 3", "line 4", "line 5"]
    assert "maybe" in parsed.problems[2]


def test_deeply_nested_line_is_one_problem(tmp_path: Path) -> None:
    path = tmp_path / "deep.jsonl"
    path.write_text("[" * 100_000 + "\n" + json.dumps({"premise": "a", "hypothesis": "b", "label": "neutral"}) + "\n")
    parsed = read_pairs(path)
    assert len(parsed.pairs) == 1 and parsed.problems[0].startswith("line 1")


def test_unreadable_gzip_is_one_error(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl.gz"
    path.write_bytes(gzip.compress(b'{"premise": "a"}\n')[:15])
    with pytest.raises(EvtuiError, match="cannot read the pairs file"):
        read_pairs(path)
