"""The Bench screen's item views, computed in the domain (evtui.bench.report): short item ids, aspects named by a
gold sentence, the per-item score plot and the per-item diff of two runs."""

from __future__ import annotations

from rich.console import Console

from evtui.bench.report import (
    ItemDelta,
    aspect_label,
    aspect_sentences,
    item_diff,
    score_plot,
    short_item_id,
    sparkline,
)


def _text(renderable: object, width: int = 200) -> str:
    console = Console(width=width, record=True)
    console.print(renderable)
    return console.export_text()


def test_short_ids_and_aspect_labels() -> None:
    assert short_item_id("evidencebench_dev_id_15") == "dev_id_15"
    assert short_item_id("other_42") == "other_42"
    item = "evidencebench_dev_id_28"
    assert aspect_label(f"{item}_aspect_2", item) == "a2"
    assert aspect_label(f"{item}_aspect_10", item) == "a10"
    assert aspect_label("elsewhere_x", item) == "elsewhere_x"  # not this item's: left whole


def test_each_aspect_is_named_by_its_most_specific_gold_sentence() -> None:
    # a0 is in 8 (shared by all three) and 41 (its own); a2 in 8 and 50 (its own); a1 only in shared ones.
    item = {
        "sentence_index2aspects": {"8": ["a0", "a1", "a2"], "41": ["a0"], "43": ["a0", "a1", "a2"], "50": ["a2"]},
        "aspect2sentence_indices": {"a0": [8, 41, 43], "a1": [8, 43], "a2": [8, 50, 43]},
    }
    texts = {8: "shared sentence", 41: "a0 only, a longer sentence", 43: "another shared one, longer", 50: "a2 only"}
    named = aspect_sentences(item, texts)
    assert named == {"a0": 41, "a1": 8, "a2": 50}
    # a sentence missing from the paper's text names nothing; an aspect with none left is left out
    assert aspect_sentences(item, {50: "a2 only"}) == {"a2": 50}


def test_sparkline_sorted_and_scaled() -> None:
    assert sparkline([100, 0, 50], 10) == " ▄█"
    assert sparkline([], 10) == ""
    line = sparkline([float(i) for i in range(101)], 11)  # more values than room: quantiles, ends kept
    assert len(line) == 11 and line[0] == " " and line[-1] == "█"
    assert list(line) == sorted(line, key=" ▁▂▃▄▅▆▇█".index)


def test_score_plot_lines_and_figures() -> None:
    text = _text(score_plot([("bm25", {"a": 0.0, "b": 50.0, "c": 100.0, "d": None})], width=120))
    assert "bm25" in text and "0▕" in text and "▏100" in text
    assert "mean 50.0" in text and "median 50.0" in text
    assert "1 at 0" in text and "1 at 100" in text and "1 skipped" in text
    two = _text(score_plot([("A x", {"a": 10.0}), ("B y", {})], width=120)).splitlines()
    assert two[0].startswith("A x") and "mean 10.0" in two[0]
    assert two[1].startswith("B y") and "no scored items" in two[1]
    # narrow: the extras go before the plot loses its room, and nothing wraps
    narrow = _text(score_plot([("bm25", {str(i): float(i) for i in range(40)})], width=60), width=60)
    assert len(narrow.splitlines()) == 1 and "mean" in narrow and "at 100" not in narrow


def test_item_diff_most_different_first() -> None:
    a = {"i1": 10.0, "i2": 50.0, "i3": 80.0, "skipped": None, "only_a": 5.0}
    b = {"i1": 90.0, "i2": 50.0, "i3": 40.0, "skipped": 30.0, "only_b": 1.0}
    rows = item_diff(a, b)
    assert rows == [ItemDelta("i1", 10.0, 90.0), ItemDelta("i3", 80.0, 40.0), ItemDelta("i2", 50.0, 50.0)]
    assert [r.delta for r in rows] == [-80.0, 40.0, 0.0]
    assert item_diff({}, b) == []
