"""Terminal-app latency on the demo library, measured through Textual's Pilot (headless, 140×40).

    python benchmarks/bench_tui.py [--home benchmarks/out/tui-home] [--queries 20] [--out benchmarks/out]

- launch: process start → the search screen ready for typing (a fresh interpreter, so imports count);
- search: enter → results in the table and the screen refreshed, per method (best, bm25, bm25-coverage);
- scroll: 1,000 results (k=1000): first page shown, then `j` through every row (pages appended on the way);
- preselected: the Bench screen's default sweep started three times as a user would (b, r): its cost line and
  the time from r to "sweep done";
- sweep: the same `j` presses while an EvidenceBench sweep runs in the background (dev set from ../shared,
  skipped without it).
Pilot's own per-key overhead (a key bound to nothing) is reported so it can be subtracted.
Prints one JSON object; BENCHMARKS.md records the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

QUERIES = [
    "(aspirin, reduce, colorectal cancer)", "ACE inhibitors cause cough", "Vitamin D may reduce fracture risk",
    "(statins, reduce, LDL cholesterol)", "Smoking increases the risk of lung cancer",
    "(metformin, reduce, mortality)", "Exercise improves insulin sensitivity", "(obesity, increase, diabetes)",
    "Does hypertension cause stroke?", "(lithium, cause, toxicity)", "Valproic acid raises blood ammonia",
    "(phenobarbital, induce, dyskinesia)", "Saliva is as sensitive as nasopharyngeal swabs for SARS-CoV-2",
    "(interleukin 6, increase, COVID-19 severity)", "Antibiotics disrupt the gut microbiome",
    "(p53, suppress, tumour growth)", "Sleep deprivation impairs memory", "(BRCA1, increase, breast cancer)",
    "Folic acid prevents neural tube defects", "(insulin, decrease, blood glucose)",
]


def stats(ms: list[float]) -> dict[str, float]:
    ms = sorted(ms)
    return {"n": len(ms), "median_ms": round(statistics.median(ms), 1),
            "p95_ms": round(ms[min(len(ms) - 1, int(0.95 * len(ms)))], 1), "max_ms": round(ms[-1], 1)}


def prepare(home: Path) -> dict[str, Any]:
    from evtui.config import Config
    from evtui.demo import ensure_demo
    from evtui.library import Library

    with Library(Config(home=home, demo=True)) as lib:
        t0 = time.perf_counter()
        report = ensure_demo(lib)
        s = lib.store.stats()
    return {"papers": s["papers"], "sentences": s["sentences"],
            "demo_ingest_s": round(time.perf_counter() - t0, 1) if report else None}


def launch(home: Path, runs: int) -> dict[str, float]:
    """A fresh interpreter each time: imports, app start, library open, search screen focused."""
    code = (
        "import time, asyncio; t0 = time.perf_counter()\n"
        "from evtui.config import load_config\n"
        "from evtui.tui.app import EvtuiApp\n"
        "from evtui.tui.screens.search import SearchScreen\n"
        "async def main():\n"
        "    app = EvtuiApp(load_config())\n"
        "    async with app.run_test(size=(140, 40)) as pilot:\n"
        "        while not (app.searcher and isinstance(app.screen, SearchScreen) and app.focused is not None\n"
        "                   and app.focused.id == 'query'):\n"
        "            await asyncio.sleep(0.005)\n"
        "        await pilot.pause()\n"
        "        print((time.perf_counter() - t0) * 1000)\n"
        "asyncio.run(main())\n"
    )
    env = {**os.environ, "EVTUI_HOME": str(home), "EVTUI_DEMO": "false", "EVTUI_CONFIG": str(home / "none.toml")}
    ms = []
    for _ in range(runs):
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        ms.append(float(out.stdout.strip().splitlines()[-1]))
    return stats(ms)


PAINTS: list[tuple[float, Any, int, str]] = []  # (time, the app's result, results cursor row, screen) at each paint


def record_paints() -> None:
    """Note every screen paint: latency = the first paint that shows the change, not when Pilot settles."""
    from textual.screen import Screen

    original = Screen._compositor_refresh

    def paint(self: Any) -> None:
        original(self)
        app = self.app
        try:
            row = self.query_one("#results").cursor_row
        except Exception:  # noqa: BLE001 - another screen
            row = -1
        PAINTS.append((time.perf_counter(), getattr(app, "result", None), row, type(self).__name__))

    Screen._compositor_refresh = paint  # type: ignore[method-assign]


def first_paint(t0: float, cond: Any, screen: str | None = None) -> float | None:
    for t, result, row, painted in PAINTS:
        if t >= t0 and (screen is None or painted == screen) and cond(result, row):
            return (t - t0) * 1000
    return None


async def in_app(home: Path, queries: list[str], sweep_data: Path | None,
                 parts: frozenset[str] = frozenset({"search", "scroll", "sweep"})) -> dict[str, Any]:
    from textual.widgets import Input, Select

    from evtui.config import Config
    from evtui.tui.app import EvtuiApp
    from evtui.tui.screens.search import SearchScreen
    from evtui.tui.widgets import PagedTable

    cfg = Config(home=home, demo=False)
    app = EvtuiApp(cfg)
    out: dict[str, Any] = {}
    async with app.run_test(size=(140, 40)) as pilot:
        t_open = time.perf_counter()
        while not (app.searcher and isinstance(app.screen, SearchScreen)):
            if time.perf_counter() - t_open > 60:
                raise RuntimeError(f"the library did not open: {[n.message for n in app._notifications]}")
            await asyncio.sleep(0.01)
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        table = screen.query_one("#results", PagedTable)
        query = screen.query_one("#query", Input)

        async def search(text: str, method: str) -> tuple[float, float]:
            """(enter → first paint showing the new results, enter → Pilot settled)."""
            sel = screen.query_one("#method", Select)
            if sel.value != method:
                sel.value = method  # searches again when there are results: let that one finish first
                await pilot.pause()
                while screen._searching:
                    await asyncio.sleep(0.01)
                await pilot.pause()
            query.value = text
            query.focus()
            await pilot.pause(0.3)  # the live parse of the typed text is done
            app.result = None
            PAINTS.clear()
            t0 = time.perf_counter()
            await pilot.press("enter")
            while app.result is None:
                if time.perf_counter() - t0 > 30:
                    status = screen.query_one("#status").render()
                    raise RuntimeError(f"no results for {text!r} ({method}): {status}")
                await asyncio.sleep(0.002)
            await pilot.pause()
            settled = (time.perf_counter() - t0) * 1000
            shown = first_paint(t0, lambda result, row: result is not None and table.row_count > 0)
            return (shown if shown is not None else settled), settled

        async def keys(key_for: Any, count: int, until: Any = None) -> tuple[list[float], list[float]]:
            """Per key: (press → first paint with the cursor moved, press → Pilot settled)."""
            shown, settled = [], []
            for n in range(count):
                if until is not None and not until():
                    break
                before = table.cursor_row
                PAINTS.clear()
                t0 = time.perf_counter()
                await pilot.press(key_for(n))
                settled.append((time.perf_counter() - t0) * 1000)
                first = first_paint(t0, lambda result, row, before=before: row != before)
                if first is not None:
                    shown.append(first)
            return shown, settled

        # Pilot's fixed cost per key: a key nothing is bound to
        table.focus()
        base = []
        for _ in range(30):
            t0 = time.perf_counter()
            await pilot.press("f12")
            base.append((time.perf_counter() - t0) * 1000)
        out["pilot_key_overhead"] = stats(base)

        for method in ("best", "bm25", "bm25-coverage") if "search" in parts else ():
            for q in queries[:3]:  # warm caches and readers
                await search(q, method)
            runs = [await search(q, method) for q in queries]
            out[f"search_{method}"] = {"first_paint": stats([a for a, _b in runs]),
                                       "settled": stats([b for _a, b in runs])}

        # 1,000 rows
        if "scroll" in parts:
            cfg.k = 1000
            t_first, _ = await search("patients with cancer", "bm25")
            n = len(app.result.evidence) if app.result else 0
            table.focus()
            shown, settled = await keys(lambda _n: "j", n - 1)
            out["scroll_1000"] = {"rows": n, "rendered": table.row_count, "first_page_ms": round(t_first, 1),
                                  "j_first_paint": stats(shown), "j_settled": stats(settled),
                                  "cursor_at": table.cursor_row}
            cfg.k = 20

        if "preselected" in parts:  # the Bench screen's own default sweep, as a user starts it: b, r
            from textual.widgets import Static

            from evtui.tui.screens.bench import BenchScreen

            runs = []
            for _ in range(3):
                await app.action_mode("bench")
                bench = app.screen
                assert isinstance(bench, BenchScreen)
                await pilot.pause(1.0)  # the cost line is computed a moment after the screen opens
                line = next((str(w.render()) for w in bench.query(Static) if "this sweep" in str(w.render())), "")
                done = len([n for n in app._notifications if "sweep done" in str(n.message)])
                t0 = time.perf_counter()
                bench.action_run()
                while len([n for n in app._notifications if "sweep done" in str(n.message)]) == done:
                    await asyncio.sleep(0.05)
                runs.append({"cost_line": line, "took_s": round(time.perf_counter() - t0, 1)})
            out["preselected_sweep"] = runs
            await app.action_mode("search")

        if sweep_data is not None and "sweep" in parts:
            await search("(aspirin, reduce, colorectal cancer)", "bm25")
            from textual.widgets import SelectionList

            from evtui.tui.screens.bench import BenchScreen

            await app.action_mode("bench")
            bench = app.screen
            assert isinstance(bench, BenchScreen)
            bench.query_one("#dataset", Input).value = str(sweep_data)
            for wid, wanted in (("#tasks", ["er-optimal", "er-10", "results-er-optimal", "results-er-5"]),
                                ("#methods", ["bm25", "bm25-coverage", "random"])):
                sl = bench.query_one(wid, SelectionList)
                sl.deselect_all()
                for v in wanted:
                    sl.select(v)
            t_sweep = time.perf_counter()
            bench.action_run()
            await app.action_mode("search")
            table.focus()
            shown: list[float] = []
            settled: list[float] = []
            sweeps = 1
            while len(settled) < 200:  # the dev set's sweep takes seconds: run it again until enough keys
                if not bench.running:
                    await app.action_mode("bench")
                    bench.action_run()
                    sweeps += 1
                    await app.action_mode("search")
                    table.focus()
                a, b = await keys(lambda n: "j" if n % 20 < 10 else "k", 200 - len(settled),
                                  until=lambda: bench.running)
                shown += a
                settled += b
            out["keys_during_sweep"] = {"first_paint": stats(shown), "settled": stats(settled)}
            # `?` (the help screen) and Esc during the sweep: press -> the screen is there
            from evtui.tui.screens.modals import HelpScreen

            helps: list[float] = []
            helps_settled: list[float] = []
            for _ in range(10):
                if not bench.running:  # measured during a sweep, as the keys above
                    await app.action_mode("bench")
                    bench.action_run()
                    sweeps += 1
                    await app.action_mode("search")
                    table.focus()
                PAINTS.clear()
                t0 = time.perf_counter()
                await pilot.press("question_mark")
                while not isinstance(app.screen, HelpScreen):
                    await asyncio.sleep(0.002)
                helps_settled.append((time.perf_counter() - t0) * 1000)
                shown_at = first_paint(t0, lambda result, row: True, screen="HelpScreen")
                helps.append(shown_at if shown_at is not None else helps_settled[-1])
                await pilot.press("escape")
                while isinstance(app.screen, HelpScreen):
                    await asyncio.sleep(0.002)
                table.focus()
            out["help_key_during_sweep"] = {"first_paint": stats(helps), "settled": stats(helps_settled),
                                            "sweep_running_after": bench.running}
            while bench.running:
                await asyncio.sleep(0.1)
            out["keys_during_sweep"].update(sweeps=sweeps, sweep_s=round((time.perf_counter() - t_sweep) / sweeps, 1),
                                            runs_stored=len(bench.results))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--home", default=str(ROOT / "benchmarks" / "out" / "tui-home"))
    ap.add_argument("--queries", type=int, default=20)
    ap.add_argument("--launches", type=int, default=5)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "out"))
    ap.add_argument("--parts", default="launch,search,scroll,sweep",
                    help="what to measure (comma list): launch, search, scroll, preselected, sweep")
    args = ap.parse_args()
    parts = frozenset(x.strip() for x in args.parts.split(",") if x.strip())
    home = Path(args.home)
    home.mkdir(parents=True, exist_ok=True)
    result: dict[str, Any] = {
        "machine": f"{platform.machine()} · {os.cpu_count()} cores · load {os.getloadavg()[0]:.1f}",
        "python": platform.python_version(),
    }
    result["library"] = prepare(home)
    if "launch" in parts:
        result["launch_to_search_screen"] = launch(home, args.launches)
    data = ROOT.parent / "shared" / "datasets" / "evidencebench" / "evidencebench_dev_set.json"
    record_paints()
    result.update(asyncio.run(in_app(home, QUERIES[: args.queries], data if data.exists() else None, parts)))
    result["load_after"] = round(os.getloadavg()[0], 1)
    text = json.dumps(result, indent=2)
    print(text)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "bench_tui.json").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
