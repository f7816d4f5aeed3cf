"""Stored benchmark runs as CSV, for a spreadsheet or a notebook: one row per run, and optionally one row per item
of chosen runs. Written through evtui.export's `write_text_file` (atomic; folders and devices refused)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from evtui.bench.estimate import in_sample
from evtui.bench.evidencebench import load_items
from evtui.bench.report import primary_metric
from evtui.errors import EvtuiError
from evtui.export import write_text_file
from evtui.outpaths import check_output

RUN_COLUMNS = ("run_id", "created_at", "dataset", "task", "method", "status", "metric", "value", "in_sample",
               "n_items", "n_skipped", "seconds", "code_version", "parameters", "metrics")
ITEM_COLUMNS = ("run_id", "dataset", "task", "method", "item_id", "score", "hypothesis")


def run_row(run: Mapping[str, Any]) -> list[str]:
    """A `list_runs` entry as a CSV row (RUN_COLUMNS): the headline metric in two columns and whether it is
    in-sample (the method's model was trained on this dataset), the parameters and all metrics as JSON so nothing
    stored is lost."""
    name, value = primary_metric(dict(run))
    return [str(run["id"]), str(run.get("created_at", "")), str(run["dataset"]), str(run.get("task", "")),
            str(run["method"]), str(run.get("status", "done")), name, "" if value is None else repr(value),
            "yes" if in_sample(run) else "no", str(run.get("n_items", "")), str(run.get("n_skipped", "")), repr(float(run.get("seconds") or 0.0)),
            str(run.get("code_version") or ""), json.dumps(run.get("parameters") or {}, sort_keys=True),
            json.dumps(run.get("metrics") or {}, sort_keys=True)]


def _csv(header: Sequence[str], rows: Iterable[Sequence[str]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def runs_csv(runs: Sequence[Mapping[str, Any]]) -> str:
    return _csv(RUN_COLUMNS, (run_row(r) for r in runs))


def items_csv(runs: Sequence[Mapping[str, Any]], per_item: Mapping[str, Mapping[str, float | None]],
              hypotheses: Mapping[str, str] | None = None) -> str:
    """One row per (run, item) of `runs` (ITEM_COLUMNS), items in the run's order; an empty score is an item the
    run skipped. `hypotheses` (item id → text) fills the last column where known."""
    hyp = hypotheses or {}
    rows = ([str(r["id"]), str(r["dataset"]), str(r.get("task", "")), str(r["method"]), item_id,
             "" if score is None else repr(float(score)), hyp.get(item_id, "")]
            for r in runs for item_id, score in per_item.get(str(r["id"]), {}).items())
    return _csv(ITEM_COLUMNS, rows)


def hypotheses(runs: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """item id → hypothesis, from the EvidenceBench files the runs were made on (a file since moved or changed
    into something else adds nothing: the column is a convenience, the scores are what is exported)."""
    out: dict[str, str] = {}
    files = {str((r.get("parameters") or {}).get("data") or "") for r in runs
             if str(r.get("dataset", "")).startswith("evidencebench:")}
    for f in sorted(files - {""}):
        try:
            items = load_items(Path(f))
        except EvtuiError:
            continue
        out.update({i: str(it.get("hypothesis", "")) for i, it in items.items()})
    return out


def items_path(path: Path) -> Path:
    """Where the per-item CSV goes beside the runs CSV: `runs.csv` → `runs-items.csv`."""
    return path.with_name(f"{path.stem}-items{path.suffix or '.csv'}")


def check_paths(path: Path, home: Path, *, items: bool, force: bool = False) -> None:
    """Refuse (EvtuiError) a runs CSV, or the per-item CSV beside it, inside the data home; and that per-item CSV
    where a file exists, unless `force`: the user named only PATH, never the file beside it."""
    check_output(path, home, flag="--csv")
    if items:
        beside = items_path(path)
        check_output(beside, home, flag="--csv (its per-item CSV)")
        if not force and (beside.exists() or beside.is_symlink()):
            raise EvtuiError(f"--items writes {beside}, which exists already: --force replaces it (or give --csv "
                             "another name)")


def write_runs_csv(path: Path, runs: Sequence[Mapping[str, Any]]) -> int:
    """Write the runs CSV to exactly `path`; returns the number of runs written."""
    write_text_file(path, runs_csv(runs))
    return len(runs)


def write_items_csv(path: Path, runs: Sequence[Mapping[str, Any]],
                    per_item: Mapping[str, Mapping[str, float | None]],
                    hypotheses: Mapping[str, str] | None = None) -> int:
    """Write the per-item CSV of `runs` to exactly `path`; returns the number of rows written."""
    write_text_file(path, items_csv(runs, per_item, hypotheses))
    return sum(len(per_item.get(str(r["id"]), {})) for r in runs)
