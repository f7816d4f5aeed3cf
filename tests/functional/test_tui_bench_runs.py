"""The Bench screen's Runs and Items tabs on stored runs (made directly, without a sweep): items by their hypothesis,
the per-item score plot, the per-item diff of two marked runs, runs to CSV, and the 80×24 layout."""

from __future__ import annotations

import csv
from pathlib import Path
from typing import Any

from textual.widgets import Checkbox, DataTable, Input, Label, Static, TabbedContent
from tui_pilot import messages, open_screen, plain_text, run, started, until

from evtui.bench.evidencebench import dataset_name, run_params
from evtui.bench.runs import save_run
from evtui.config import load_config
from evtui.library import Library
from evtui.tui.app import EvtuiApp
from evtui.tui.screens.bench import BenchScreen
from evtui.tui.screens.search import SearchScreen

EB3 = Path(__file__).parents[1] / "fixtures" / "bench" / "eb3.json"
DEV28, DEV16, TRAIN49 = "evidencebench_dev_id_28", "evidencebench_dev_id_16", "evidencebench_train_id_49"
# er-10 scores per item: bm25 ahead on train_id_49 by 40, random ahead on dev_id_28 by 10, a tie on dev_id_16
SCORES = {"bm25": {DEV28: 20.0, DEV16: 50.0, TRAIN49: 80.0}, "random": {DEV28: 30.0, DEV16: 50.0, TRAIN49: 40.0}}


def _store() -> dict[str, str]:
    """method -> run id of two stored er-10 runs on the fixture (random stored last: listed first)."""
    ids = {}
    with Library(load_config()) as lib:
        for method, scores in SCORES.items():
            res = {"dataset": dataset_name(EB3), "task": "er-10", "method": method, "n_items": 3, "n_skipped": 0,
                   "aspect_recall": round(sum(scores.values()) / 3, 2), "per_item": scores, "seconds": 0.2}
            ids[method] = save_run(lib, res, run_params(EB3, 0))
    return ids


async def _runs_tab(app: EvtuiApp, pilot: Any) -> BenchScreen:
    screen = await open_screen(app, pilot, "b", BenchScreen)
    await pilot.press("2")
    runs = screen.query_one("#runs-table", DataTable)
    await until(pilot, lambda: app.focused is runs, "focus on the runs table")
    assert runs.row_count == 2
    return screen


def _row(table: DataTable[Any], n: int) -> list[str]:
    return [plain_text(c).strip() for c in table.get_row_at(n)]


def _shown(screen: BenchScreen, key: str) -> bool:
    """Is this key on the key bar now (shown and enabled)?"""
    return any(b.binding.key == key and b.enabled for b in screen.active_bindings.values()) and \
        screen.check_action(next(b.binding.action for b in screen.active_bindings.values() if b.binding.key == key),
                            ()) is True


def test_items_show_hypotheses_a_score_plot_and_named_aspects() -> None:
    ids = _store()

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _runs_tab(app, pilot)
            runs = screen.query_one("#runs-table", DataTable)
            runs.move_cursor(row=list(screen.runs).index(next(r for r in screen.runs if r["id"] == ids["bm25"])))
            await pilot.press("enter")
            items = screen.query_one("#items-table", DataTable)
            await until(pilot, lambda: app.focused is items, "the items tab")
            assert [str(c.label) for c in items.columns.values()] == ["item", "score", "hypothesis"]
            first = _row(items, 0)
            assert first[0] == "dev_id_28" and first[1] == "20.0"  # the id, short; the score
            assert first[2].startswith("Polymorphic variants in the NAT1")
            assert "bm25" in str(screen.query_one("#items-title", Label).render())
            plot = plain_text(screen.query_one("#items-plot", Static).content)
            assert "bm25" in plot and "0▕" in plot and "▏100" in plot and "mean 50.0" in plot
            # the item under the cursor: its full id and the whole hypothesis, before any re-ranking
            detail = screen.query_one("#item-detail", Static)
            await until(pilot, lambda: DEV28 in str(detail.render()), "the item preview")
            assert "bladder cancer." in str(detail.render())
            await pilot.press("j")
            await until(pilot, lambda: DEV16 in str(detail.render()), "the next item's preview")
            # drill down: the aspects are listed by the gold sentence that names them, never as aspect_0
            await pilot.press("k", "enter")
            await until(pilot, lambda: "missed" in str(detail.render()), "the item detail", timeout=60)
            text = str(detail.render())
            assert "aspects" in text and "each named by a gold sentence" in text and "a0" in text
            assert "aspect_0" not in text

    run(flow)


def test_diff_of_two_marked_runs_and_drill_into_run_a() -> None:
    _store()

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _runs_tab(app, pilot)
            assert not _shown(screen, "d")  # greyed until two runs are marked
            await pilot.press("space", "d")  # one marked run: nothing to diff, d stays off
            assert screen.query_one(TabbedContent).active == "runs" and screen.diff is None
            await pilot.press("space")
            await pilot.press("space", "j", "space")
            assert _shown(screen, "d")
            order = [screen.runs[0]["method"], screen.runs[1]["method"]]  # marked in list order: A, then B
            await pilot.press("d")
            items = screen.query_one("#items-table", DataTable)
            await until(pilot, lambda: app.focused is items and items.row_count == 3, "the diff")
            assert [str(c.label) for c in items.columns.values()] == ["item", "Δ A−B", "A", "B", "hypothesis"]
            rows = [_row(items, n) for n in range(3)]
            a, b = SCORES[order[0]], SCORES[order[1]]
            assert [r[0] for r in rows] == ["train_id_49", "dev_id_28", "dev_id_16"]  # by |Δ|: 40, 10, 0
            assert [float(r[1]) for r in rows] == [a[TRAIN49] - b[TRAIN49], a[DEV28] - b[DEV28], 0.0]
            assert rows[0][4].startswith("Exposure to welding fumes")
            title = str(screen.query_one("#items-title", Label).render())
            assert f"A {order[0]}" in title and f"B {order[1]}" in title
            plot = plain_text(screen.query_one("#items-plot", Static).content)
            assert f"A {order[0]}" in plot and f"B {order[1]}" in plot
            # x makes the other run A
            assert _shown(screen, "x")
            await pilot.press("x")
            await until(pilot, lambda: f"A {order[1]}" in str(screen.query_one("#items-title", Label).render()),
                        "the swapped diff")
            assert float(_row(items, 0)[1]) == b[TRAIN49] - a[TRAIN49]
            # enter drills into the item as run A scored it
            detail = screen.query_one("#item-detail", Static)
            await pilot.press("enter")
            await until(pilot, lambda: "missed" in str(detail.render()), "the item detail", timeout=60)
            text = str(detail.render())
            assert TRAIN49 in text and order[1] in text and f"stored run: {b[TRAIN49]:.1f}" in text
            # the Runs tab's keys are off the Items tab's key bar, and back on it in the Runs tab
            assert not _shown(screen, "d")
            await pilot.press("2")
            assert _shown(screen, "d") and not _shown(screen, "x")

    run(flow)


def test_runs_export_to_csv(tmp_path: Path) -> None:
    ids = _store()
    out = tmp_path / "bench.csv"

    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await _runs_tab(app, pilot)
            row = screen.query_one("#csv-row")
            path = screen.query_one("#csv-path", Input)
            assert not row.display
            before = path.value
            await pilot.press("j", "space", "k")  # keys for the screen never land in the hidden path
            assert path.value == before and len(screen.marked) == 1
            await pilot.press("w")
            await until(pilot, lambda: app.focused is path, "the CSV path")
            assert row.display and path.value.endswith(".csv")
            path.value = f"{tmp_path}/"
            path.cursor_position = len(path.value)
            await pilot.press(*out.name)  # the file name typed as a user types it
            await pilot.press("tab", "space")  # per-item CSV too
            assert screen.query_one("#csv-items", Checkbox).value
            path.focus()
            await pilot.press("enter")
            await until(pilot, lambda: any("wrote 1 run(s)" in m for m in messages(app)), "the CSV")
            assert not row.display and app.focused is screen.query_one("#runs-table")
            with out.open(newline="", encoding="utf-8") as fh:
                header, *runs = list(csv.reader(fh))
            marked = dict(zip(header, runs[0], strict=True))
            assert len(runs) == 1 and marked["run_id"] == screen.marked[0]  # the marked run only
            method = marked["method"]
            assert marked["dataset"] == "evidencebench:eb3.json" and marked["task"] == "er-10"
            assert marked["metric"] == "aspect_recall" and marked["run_id"] == ids[method]
            with (tmp_path / "bench-items.csv").open(newline="", encoding="utf-8") as fh:
                header, *items = list(csv.reader(fh))
            scores = {r[header.index("item_id")]: float(r[header.index("score")]) for r in items}
            assert scores == SCORES[method]
            # the path is remembered; escape closes the row, then (closed) goes back to search as everywhere
            assert app.ui_state.get("bench_csv_path") == str(out)
            await pilot.press("space")  # unmark: all runs go
            await pilot.press("w")
            await until(pilot, lambda: app.focused is path, "the CSV path again")
            assert path.value == str(out)
            await pilot.press("escape")
            assert not row.display and isinstance(app.screen, BenchScreen)
            await pilot.press("escape")
            await until(pilot, lambda: isinstance(app.screen, SearchScreen), "back to search")
            # a folder is refused in one line, and nothing is lost
            await pilot.press("b")
            await until(pilot, lambda: isinstance(app.screen, BenchScreen), "the bench screen")
            await pilot.press("2", "w")
            await until(pilot, lambda: app.focused is path, "the CSV path once more")
            path.value = str(tmp_path)
            await pilot.press("enter")
            await until(pilot, lambda: any("is a folder" in m for m in messages(app)), "the refusal")
            assert row.display and out.exists()

    run(flow)


def test_runs_and_items_fit_80x24() -> None:
    _store()

    async def flow() -> None:
        async with started(size=(80, 24)) as (app, pilot):
            screen = await _runs_tab(app, pilot)
            assert screen.has_class("-narrow")
            runs = screen.query_one("#runs-table", DataTable)
            # ✓ task method metric items: all inside the table's width (each column pads 1 cell each side)
            shown = sum(c.get_render_width(runs) for c in list(runs.columns.values())[:5])
            assert shown <= runs.size.width
            bar = plain_text(screen.query_one("KeyBar").render())
            for key in ("Mark", "Diff marked", "CSV"):
                assert key in bar, bar
            await pilot.press("space", "j", "space", "d")
            items = screen.query_one("#items-table", DataTable)
            await until(pilot, lambda: app.focused is items, "the diff")
            assert sum(c.get_render_width(items) for c in items.columns.values()) <= items.size.width
            hyp = list(items.columns.values())[-1]
            assert hyp.width >= 30  # the hypothesis column gets the room left
            assert "Swap A/B" in plain_text(screen.query_one("KeyBar").render())
            assert items.size.height >= 4 and screen.query_one("#item-pane").size.height >= 4

    run(flow)
