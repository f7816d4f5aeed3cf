"""The Bench screen stores a sweep's finished items in batches of at most a second (evtui.bench.sweep)."""

from __future__ import annotations

from evtui.bench.runs import ItemResult
from evtui.bench.sweep import ItemBatches


def test_items_go_in_batches_a_second_apart_and_flush_stores_the_rest() -> None:
    now = [0.0]
    stored: list[list[str]] = []
    batches = ItemBatches(lambda items: stored.append([i.item_id for i in items]), every=1.0, clock=lambda: now[0])
    for t, item in ((0.0, "a"), (0.4, "b"), (1.0, "c"), (1.2, "d"), (1.5, "e")):
        now[0] = t
        batches.add(ItemResult(item, 1.0, []))
    assert stored == [["a", "b", "c"]]  # the first batch went a second after its first item
    batches.flush()
    assert stored == [["a", "b", "c"], ["d", "e"]]
    batches.flush()  # nothing pending: no empty store (each store is a library switch)
    assert len(stored) == 2
