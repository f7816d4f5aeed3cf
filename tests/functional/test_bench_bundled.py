"""The benchmark sets bundled under data/bench: `evtui bench evidencebench` and `bench scifact` run on them without
a data flag, the Bench screen offers them first, their figures are marked in-sample where a model saw them, the
wheel installs them, and a sweep started again shows its stored runs instead of storing them twice."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
import tomllib
from textual.widgets import DataTable, Input, SelectionList, Static
from tui_pilot import messages, open_screen, run, started, until

from evtui.bench.provenance import in_sample
from evtui.bench.runs import list_runs
from evtui.cli import main
from evtui.config import load_config
from evtui.demo import BUNDLED_BENCH, bundled_bench
from evtui.library import Library
from evtui.tui.screens.bench import BenchScreen

ROOT = Path(__file__).parents[2]
FIX = Path(__file__).parents[1] / "fixtures" / "bench"
EB3 = FIX / "eb3.json"


@pytest.fixture
def small_bundle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A stand-in for data/bench with the bundled files' names (the real ones take minutes to load)."""
    folder = tmp_path / "bundle"
    folder.mkdir()
    shutil.copy(EB3, folder / BUNDLED_BENCH["evidencebench"])
    shutil.copy(FIX / "scifact_claims6.jsonl", folder / BUNDLED_BENCH["scifact-claims"])
    with gzip.open(folder / BUNDLED_BENCH["scifact-corpus"], "wb") as fh:
        fh.write((FIX / "scifact_corpus30.jsonl").read_bytes())
    monkeypatch.setenv("EVTUI_BENCH_DIR", str(folder))
    return folder


def test_the_bundled_sets_are_found_installed_and_marked_in_sample() -> None:
    """Without ../shared there was nothing to run a benchmark on. The sets ship in data/bench (the SciFact corpus is
    the demo's), the wheel installs them beside the demo, and the ranker (and verifier) saw them in training."""
    for what in BUNDLED_BENCH:
        path = bundled_bench(what)
        assert path is not None and path.is_file() and path.is_relative_to(ROOT / "data"), what
    data_files = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["data-files"]
    assert "data/bench/*" in data_files["share/evtui/bench"]
    eb, claims = bundled_bench("evidencebench"), bundled_bench("scifact-claims")
    assert eb is not None and claims is not None
    assert len(json.loads(eb.read_text())) == 37
    assert all(c.get("evidence") for c in map(json.loads, claims.read_text().splitlines()))
    # in-sample by content: the files' names are not those the models were trained on
    assert in_sample({"method": "best", "dataset": f"evidencebench:{eb.name}", "data": str(eb)})
    assert not in_sample({"method": "bm25", "dataset": f"evidencebench:{eb.name}", "data": str(eb)})
    assert in_sample({"method": "verifier", "dataset": f"scifact:{claims.name}", "parameters": {"claims": str(claims)}})
    readme = (ROOT / "data" / "README.md").read_text()
    assert "bench/evidencebench_dev.json" in readme and "CC BY-NC-SA 4.0" in readme


def test_bench_evidencebench_and_scifact_run_without_data_flags(
        small_bundle: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--data` (and SciFact's `--corpus` / `--claims`) were required: left out, the bundled sets are used."""
    assert main(["bench", "evidencebench", "--task", "er-optimal", "--method", "bm25", "--json"]) == 0
    eb = json.loads(capsys.readouterr().out)
    assert eb["dataset"] == "evidencebench:evidencebench_dev.json" and eb["n_items"] == 3
    assert main(["bench", "scifact", "--method", "bm25", "--json"]) == 0
    sf = json.loads(capsys.readouterr().out)
    assert sf["dataset"] == "scifact:scifact_claims_train.jsonl" and sf["n_queries"] == 6
    with Library(load_config()) as lib:
        params = {r["dataset"]: r["parameters"] for r in list_runs(lib)}
    assert params["evidencebench:evidencebench_dev.json"]["data"] == str(small_bundle / "evidencebench_dev.json")
    assert params["scifact:scifact_claims_train.jsonl"]["corpus"] == str(small_bundle / "scifact_corpus.jsonl.gz")
    # a table run says which file it took
    assert main(["bench", "evidencebench", "--task", "er-optimal", "--method", "random", "--no-save"]) == 0
    assert "--data left out: the bundled evidencebench_dev.json" in capsys.readouterr().err
    # Check-COVID has nothing bundled: a clear usage error
    assert main(["bench", "checkcovid", "--method", "bm25"]) == 2
    assert "--corpus and --claims are required for checkcovid" in capsys.readouterr().err


def test_the_bench_screen_offers_the_bundled_set_showing_its_name(small_bundle: Path) -> None:
    """At 80 columns the field showed the path's end from the cursor's cell: "ncebench_dev_set.json"."""
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            field = screen.query_one("#dataset", Input)
            assert field.value == str(small_bundle / "evidencebench_dev.json")
            await until(pilot, lambda: "evidencebench_dev.json" in field.render_line(0).text, "the whole name")

    run(flow)


def test_a_sweep_started_again_does_not_store_its_runs_twice(small_bundle: Path) -> None:
    """The same sweep started again ran and stored every run a second time (the Runs tab listed bm25 twice): runs
    stored with the same data, arguments and code are now shown, not run again."""
    async def flow() -> None:
        async with started() as (app, pilot):
            screen = await open_screen(app, pilot, "b", BenchScreen)
            sl = screen.query_one("#methods", SelectionList)
            sl.deselect_all()
            sl.select("bm25")
            sl.select("random")
            screen.query_one("#sweep-results").focus()
            await pilot.press("r")
            await until(pilot, lambda: any("sweep done: 2 run(s)" in m for m in messages(app)), "the sweep", 60)
            first = {r["id"] for r in list_runs(app.library)}  # type: ignore[arg-type]
            assert len(first) == 2
            sl.select("bm25-coverage")  # one new run, two stored
            await pilot.press("r")
            await until(pilot, lambda: any("sweep done: 1 run(s)" in m for m in messages(app)), "the 2nd sweep", 60)
            assert any("2 run(s) of this sweep are stored already" in m for m in messages(app))
            runs = list_runs(app.library)  # type: ignore[arg-type]
            assert sorted(r["method"] for r in runs) == ["bm25", "bm25-coverage", "random"]
            table = screen.query_one("#sweep-results", DataTable)
            await until(pilot, lambda: table.row_count == 3, "the stored runs listed with the new one")
            await pilot.press("r")  # all stored: nothing runs
            await until(pilot, lambda: any("(Runs (2) lists every run)" in m for m in messages(app)), "the note")
            assert len(list_runs(app.library)) == 3 and not screen.running  # type: ignore[arg-type]
            await until(pilot, lambda: bool(str(screen.query_one("#sweep-cost", Static).render())),
                        "the cost line said again")

    run(flow)
