"""Benchmark reports shared by the faces: a stored run's headline figure, an item's score explained, what an
LLM sweep would cost, the methods-by-tasks chart and a side-by-side comparison of runs (Rich renderables)."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from rich.table import Table
from rich.text import Text

from evtui.bench.estimate import IN_SAMPLE_NOTE, IN_SAMPLE_STYLE, in_sample
from evtui.render import aspect_color, bar, short

if TYPE_CHECKING:
    from evtui.library import Library


def primary_metric(run: dict[str, Any]) -> tuple[str, float | None]:
    metrics = run.get("metrics") or {}
    if "aspect_recall" in run:
        return "aspect_recall", float(run["aspect_recall"])
    if "aspect_recall" in metrics:
        return "aspect_recall", float(metrics["aspect_recall"])
    for k, v in metrics.items():
        if isinstance(v, int | float):
            return k, float(v)
    return "", None


def metric_scale(name: str) -> float:
    """The top of a metric's scale: nDCG and the SciFact verification scores (precision, recall, F1) run 0–1,
    the recalls and aspect recall are stored as percentages."""
    verification = name.startswith(("abstract_", "sentence_selection"))
    return 1.0 if name.startswith("ndcg") or name.endswith("_f1") or verification else 100.0


def _short_aspect(aspect: str, item_id: str) -> str:
    return aspect[len(item_id) + 1:] if aspect.startswith(item_id + "_") else aspect


def item_report(library: Library, item_id: str, item: dict[str, Any], task: str, method: str, seed: int,
                stored: float | None, ranker: Any | None = None, *, light: bool = False) -> Text:
    """Rank one item as the harness does (label-blind), then read its labels to explain the score. `light`: the
    aspect dots in the palette that reads on a light theme."""
    from evtui.bench import evidencebench as eb

    out = Text()
    out.append(f"{item_id}", style="bold")
    out.append(f" · {task} · {method}\n\n", style="dim")
    out.append("hypothesis ", style="bold")
    out.append(item["hypothesis"] + "\n\n")
    k = eb.task_k(item, task)
    if k is None:
        out.append("skipped: this item has no results labels, so results tasks leave it out\n", style="yellow")
        return out
    task_obj = eb.visible_task(item_id, item, task)
    assert task_obj is not None  # k is set
    paper_id = task_obj.paper_id
    rank = ranker or eb.make_ranker(library, method, seed)
    picked = list(rank(task_obj))
    score = eb.score_item(item, task, picked)
    sentence_aspects = {int(i): a for i, a in item["sentence_index2aspects"].items()}
    wanted = item["results_aspect_list_ids"] if task.startswith("results") else item["aspect_list_ids"]
    coverable = {a for v in sentence_aspects.values() for a in v} & set(wanted)
    covered = {a for i in picked for a in sentence_aspects.get(i, ())} & coverable
    missed = sorted(coverable - covered)
    texts = {s.position: s.text for s in library.store.sentences(paper_id)}
    out.append(f"K = {k} · aspect recall ", style="bold")
    out.append("n/a" if score is None else f"{100 * score:.1f}", style="bold green")
    if stored is not None:
        out.append(f" (stored run: {stored:.1f})", style="dim")
    out.append(f" · {len(covered)}/{len(coverable)} aspects covered\n\n")
    out.append(f"picked ({len(picked)})\n", style="bold")
    colour = {a: aspect_color(n, light=light) for n, a in enumerate(sorted(coverable, key=_aspect_order))}
    for i in picked:
        tags = [a for a in sentence_aspects.get(i, ()) if a in coverable]
        out.append(f"[{i:>3}] ", style="dim")
        for a in tags:
            out.append("● ", style=colour[a])
        out.append(short(texts.get(i, "(sentence not in the benchmark library)"), 220))
        if tags:
            out.append("  " + ", ".join(aspect_label(a, item_id) for a in tags), style="dim")
        out.append("\n")
    out.append("\naspects", style="bold")
    out.append(f" · {len(covered)} covered, {len(missed)} missed (each named by a gold sentence: the dataset "
               "has no aspect text)\n", style="dim")
    named = aspect_sentences(item, texts)
    for a in sorted(coverable, key=lambda a: (a in covered, _aspect_order(a))):
        out.append("● ", style=colour[a])
        out.append(f"{aspect_label(a, item_id):<4}", style="bold")
        out.append("covered " if a in covered else "missed  ", style="green" if a in covered else "red")
        i = named.get(a)
        if i is None:
            out.append("(no gold sentence in the paper)\n", style="dim")
        else:
            out.append(f"[{i:>3}] ", style="dim")
            out.append(short(texts[i], 140) + "\n")
    return out


def aspect_label(aspect: str, item_id: str) -> str:
    """`evidencebench_dev_id_28_aspect_2` → `a2` (the item's own prefix and the word are noise in a list)."""
    rest = _short_aspect(aspect, item_id)
    return "a" + rest.removeprefix("aspect_") if rest.startswith("aspect_") else rest


def _aspect_order(aspect: str) -> tuple[int, str]:
    tail = aspect.rsplit("_", 1)[-1]
    return (int(tail), aspect) if tail.isdigit() else (1 << 30, aspect)


def aspect_sentences(item: dict[str, Any], texts: Mapping[int, str]) -> dict[str, int]:
    """aspect id → the gold sentence that names it. EvidenceBench stores aspect ids and which sentences carry
    each, never an aspect's text; the sentence carrying the fewest other aspects (then the shortest) stands for
    it, one not already naming another aspect where there is a choice. Aspects without a sentence in `texts`
    are left out."""
    sentence_aspects = {int(i): a for i, a in item.get("sentence_index2aspects", {}).items()}
    gold = item.get("aspect2sentence_indices") or {}
    used: set[int] = set()
    out: dict[str, int] = {}
    for a in sorted(gold, key=lambda a: (len(gold[a]), _aspect_order(a))):  # the most constrained choose first
        cands = [int(i) for i in gold[a] if int(i) in texts]
        if not cands:
            continue
        best = min(cands, key=lambda i: (i in used, len(sentence_aspects.get(i, ())), len(texts[i]), i))
        used.add(best)
        out[a] = best
    return out


SBS_TOKENS_OUT = 300  # a section's reply: the reasoning the prompt asks for, then DECISION: [indices]


def estimate_sweep(library: Library, items: dict[str, dict[str, Any]], tasks: list[str], methods: list[str],
                   opts: dict[str, Any]) -> dict[str, Any]:
    """What the judge strategies of a sweep would cost with an LLM, from the prompts they would send.

    llm-rerank / evidential judge the top pool of the default search in each item's paper (the judge service's
    own estimate, which leaves out cached verdicts); llm-sbs sends one prompt per section (cached completions
    are not checked here, so a re-run is over-estimated)."""
    from evtui.bench import evidencebench as eb
    from evtui.judge import estimate, make_judge
    from evtui.judge import strategies as st
    from evtui.judge.llm import estimate_tokens
    from evtui.search import DEFAULT_METHOD, Searcher

    judge = make_judge(library, "llm", opts.get("model"), opts.get("api_base"))
    client = judge.client  # type: ignore[attr-defined]
    searcher = Searcher(library)
    out: dict[str, Any] = {"model": judge.model, "calls": 0, "cached": 0, "tokens_in": 0, "tokens_out": 0,
                           "cost": 0.0, "methods": methods}
    notes: set[str] = set()
    judged: set[tuple[str, str]] = set()  # (hypothesis, sentence id): one verdict serves every task and method
    for method in methods:
        for task in tasks:
            for item_id, item in items.items():
                k = eb.task_k(item, task)
                if k is None:
                    continue
                paper = str(item.get("paper_id") or item_id)
                if method == "llm-sbs":
                    for part in st.sections(library.store.sentences(paper)):
                        prompt = st.fill(st.SECTION_PROMPT, limit=k, hypothesis=item["hypothesis"],
                                         pool=st.indexed_pool(part))
                        tin = estimate_tokens([{"role": "user", "content": prompt}])
                        out["calls"] += 1
                        out["tokens_in"] += tin
                        out["tokens_out"] += SBS_TOKENS_OUT
                        out["cost"] += client.call_cost(tin, SBS_TOKENS_OUT)
                    notes.add(f"llm-sbs: ~{SBS_TOKENS_OUT} output tokens a section; cached replies not subtracted")
                    continue
                res = searcher.search(item["hypothesis"], k=max(st.RERANK_POOL, k), paper=paper, mode="hypothesis",
                                      method=DEFAULT_METHOD, results=task.startswith("results"))
                fresh = [e for e in res.evidence if (item["hypothesis"], e.sentence.id) not in judged]
                judged.update((item["hypothesis"], e.sentence.id) for e in res.evidence)
                if not fresh:
                    continue
                est = estimate(res.query, fresh, judge, library=library)
                for key in ("calls", "cached", "tokens_in", "tokens_out", "cost"):
                    out[key] += getattr(est, key)
                notes.update(est.notes)
    if client.price() is None:
        notes.add(client.price_note())
    out["notes"] = sorted(notes)
    return out


def chart(runs: list[dict[str, Any]], width: int = 40, *, light: bool = False) -> Text:
    """Methods × tasks as rich bars: the latest stored run of each (dataset, task, method). `light`: bars in the
    palette that reads on a light theme (the dark one's bright yellows and greens fade on white)."""
    latest: dict[tuple[str, str, str], dict[str, Any]] = {}
    for r in runs:  # newest first; an interrupted run (status running, no metrics yet) is not a bar
        if r.get("status", "done") == "done":
            latest.setdefault((r["dataset"], r["task"], r["method"]), r)
    if not latest:
        return Text("no stored runs yet: run a sweep (r) and each finished run lands here", style="dim")
    methods = sorted({m for _d, _t, m in latest})
    if any(in_sample(r) for r in latest.values()):
        width = max(10, width - len(" in-sample"))  # the label ends the bar's line, never wraps under it
    colours = {m: aspect_color(i, light=light) for i, m in enumerate(methods)}
    out = Text()
    marked = False  # some figure is in-sample: the chart ends with what that means
    for dataset in sorted({d for d, _t, _m in latest}):
        tasks = sorted({t for d, t, _m in latest if d == dataset})
        name, _v = primary_metric(next(r for (d, _t, _m), r in latest.items() if d == dataset))
        scale = metric_scale(name)
        out.append(f"{dataset}", style="bold")
        out.append(f" · {name.replace('_', ' ') or 'metric'} (latest run per task and method)\n", style="dim")
        for t in tasks:
            out.append(f"  {t}\n", style="bold cyan")
            for m in methods:
                run = latest.get((dataset, t, m))
                if run is None:
                    continue
                _n, v = primary_metric(run)
                out.append(f"    {m:>14} ")
                out.append_text(bar(v or 0.0, scale, width, colours[m]))
                out.append(f" {v:.1f}" if v is not None and scale == 100 else f" {v or 0:.4f}")
                if in_sample(run):
                    out.append(" in-sample", style=IN_SAMPLE_STYLE)
                    marked = True
                out.append("\n")
        out.append("\n")
    if marked:
        out.append(IN_SAMPLE_NOTE + "\n", style=IN_SAMPLE_STYLE)
    return out


def runs_table(runs: list[dict[str, Any]], width: int = 80) -> tuple[Table, list[str]]:
    """`evtui bench runs` as a table that fits `width` columns, and its footnotes. The id, task, method, the figure
    with its in-sample mark and the status are never cut (CSV and compare need the id; the mark is what tells a
    figure to trust); when, dataset and seconds, metric names spelled out and the interrupted hint come in only
    where they fit. A run nobody runs any more says it is interrupted. `--json`/`--csv` keep every field."""
    from rich import box
    from rich.cells import cell_len

    from evtui.bench.runs import INTERRUPTED, INTERRUPTED_HINT

    names = {primary_metric(r)[0] for r in runs if r.get("status", "done") == "done"}
    common = _SHORT_METRIC.get(next(iter(names)), next(iter(names))) if len(names) == 1 else ""
    sampled = any(in_sample(r) for r in runs if r.get("status", "done") == "done")

    def metric(r: dict[str, Any], full: bool, own_status: bool) -> Text:
        name, value = primary_metric(r)
        if r.get("status", "done") != "done":  # no status column: the figure's place says why there is none
            return Text("—", style="dim") if own_status else status(r, False)
        if value is None:
            return Text("—", style="dim")
        label = "" if common else name if full else _SHORT_METRIC.get(name, name)
        out = Text(f"{label} {value:.4g}" if label else f"{value:.4g}")
        if in_sample(r):
            out.append(" in-sample", style=IN_SAMPLE_STYLE)
        return out

    def status(r: dict[str, Any], hint: bool) -> Text:
        st = str(r.get("status", "done"))
        if st == INTERRUPTED:
            return Text(INTERRUPTED_HINT if hint else INTERRUPTED, style="yellow")
        return Text(st, style="" if st == "done" else "yellow")

    def col(header: str, cells: list[Text]) -> tuple[str, list[Text], int]:
        return header, cells, max([cell_len(header), *(c.cell_len for c in cells)])

    def columns(full: bool, hint: bool, extras: tuple[str, ...]) -> list[tuple[str, list[Text], int]]:
        cols = [col("id", [Text(str(r["id"])) for r in runs])]
        if "when" in extras:
            cols.append(col("when", [Text(str(r.get("created_at", "")).replace("T", " ")[:16]) for r in runs]))
        if "dataset" in extras:
            cols.append(col("dataset", [Text(str(r["dataset"]).split(":", 1)[-1]) for r in runs]))
        cols += [col("task", [Text(str(r["task"])) for r in runs]),
                 col("method", [Text(str(r["method"])) for r in runs]),
                 col(common or "metric", [metric(r, full, "status" in extras) for r in runs]),
                 col("items" if "seconds" in extras else "n", [Text(str(r["n_items"])) for r in runs])]
        if "seconds" in extras:
            cols.append(col("s", [Text(f"{float(r.get('seconds') or 0):.1f}") for r in runs]))
        return [*cols, col("status", [status(r, hint) for r in runs])] if "status" in extras else cols

    def total(cols: list[tuple[str, list[Text], int]], gap: int = 2) -> int:
        return sum(w for _h, _c, w in cols) + gap * (len(cols) - 1) + 2  # padding between columns, the box's edges

    # the most that fits: full metric names and the hint first, then when, dataset, seconds and a status column
    # (without it an unfinished run's status stands in its figure's place), in that order
    every = ("when", "dataset", "seconds", "status")
    cols = columns(False, False, ())
    for full, hint, extras in ((True, True, every), (False, True, every), (False, False, every),
                               (False, False, ("when", "seconds", "status")), (False, False, ("seconds", "status")),
                               (False, False, ("status",))):
        if total(attempt := columns(full, hint, extras)) <= width:
            cols = attempt
            break
    shown = {h for h, _c, _w in cols}
    gap = 2 if total(cols) <= width else 1  # one space between columns before a task or method is cut
    over = total(cols, gap) - width  # still too wide: task, then method, are cut
    table = Table(title="benchmark runs", box=box.SIMPLE_HEAD, pad_edge=False, collapse_padding=True,
                  padding=(0, 1) if gap == 2 else (0, 0))  # the box draws a space between columns
    for header, _cells, w in cols:
        cut = header in ("task", "method") and over > 0
        if cut:
            keep = max(6, w - over)
            over -= w - keep
            w = keep
        right = header in ("n", "items", "s")
        table.add_column(header, no_wrap=True, overflow="ellipsis", justify="right" if right else "left",
                         width=w if cut else None, min_width=w)
    for i in range(len(runs)):
        table.add_row(*(cells[i] for _h, cells, _w in cols))
    notes: list[str] = []
    if any(str(r.get("status")) == INTERRUPTED for r in runs) and \
            not any(c.plain == INTERRUPTED_HINT for _h, cells, _w in cols for c in cells):
        notes.append("interrupted: no process runs it any more; finish it with --resume (the same arguments)")
    if sampled:
        notes.append(IN_SAMPLE_NOTE)
    if runs and not {"when", "dataset"} <= shown:
        notes.append("COLUMNS=120+ adds when, dataset and seconds; --json and --csv keep every field")
    return table, notes


# a narrow table's metric names
_SHORT_METRIC = {"aspect_recall": "recall", "abstract_label_only_f1": "abstract F1"}


def compare(runs: list[dict[str, Any]], per_item: dict[str, dict[str, float]]) -> Table | Text:
    """The marked runs side by side; for two runs on the same items, who wins where."""
    if not runs:
        return Text("mark runs with space to compare them side by side", style="dim")
    table = Table(box=None, expand=False, header_style="bold")
    table.add_column("")
    for r in runs:
        table.add_column(f"{r['method']}\n{r['task']}", justify="right")
    rows = [
        ("dataset", lambda r: r["dataset"].split(":")[-1]),
        ("metric", lambda r: Text(f"{primary_metric(r)[1]:.2f}") + Text(" in-sample", style=IN_SAMPLE_STYLE)
         if primary_metric(r)[1] is not None and in_sample(r) else
         f"{primary_metric(r)[1]:.2f}" if primary_metric(r)[1] is not None else r.get("status", "—")),
        ("items", lambda r: str(r["n_items"])),
        ("skipped", lambda r: str(r["n_skipped"])),
        ("seconds", lambda r: f"{r['seconds']:.1f}"),
        ("code", lambda r: str(r.get("code_version", ""))),
        ("run", lambda r: r["id"]),
    ]
    for name, fn in rows:
        table.add_row(name, *(fn(r) for r in runs))
    if len(runs) == 2:
        a, b = (per_item.get(r["id"], {}) for r in runs)
        common = set(a) & set(b)
        if common:
            wins = sum(1 for i in common if a[i] > b[i])
            losses = sum(1 for i in common if a[i] < b[i])
            table.add_row("head to head", f"better on {wins}", f"better on {losses}")
            table.add_row("", f"{len(common) - wins - losses} tie(s)", "")
    return table


def short_item_id(item_id: str) -> str:
    """`evidencebench_dev_id_15` → `dev_id_15`: the dataset's prefix, the same on every item, hides the rest in a
    narrow column."""
    return item_id.removeprefix("evidencebench_")


_LEVELS = " ▁▂▃▄▅▆▇█"
# the score plot's blocks on their band: a dark band on a dark theme, a pale one (deep green blocks) on a light one
PLOT_STYLE = "green on grey15"
PLOT_STYLE_LIGHT = f"{aspect_color(2, light=True)} on grey85"


def sparkline(values: Sequence[float], width: int, top: float = 100.0) -> str:
    """The values sorted ascending, one block character each (height = value / top); with more values than
    `width`, evenly spaced quantiles of them, so the line keeps the distribution's shape."""
    vals = sorted(values)
    if not vals or width < 1:
        return ""
    if len(vals) > width:
        vals = [vals[round(j * (len(vals) - 1) / max(1, width - 1))] for j in range(width)]
    step = len(_LEVELS) - 1
    return "".join(_LEVELS[max(0, min(step, round(v / top * step)))] if top > 0 else _LEVELS[0] for v in vals)


def score_plot(series: Sequence[tuple[str, Mapping[str, float | None]]], width: int = 60, *,
               light: bool = False) -> Text:
    """Per-item scores of one or more runs (0-100), a line each: the sorted scores as a sparkline framed by its
    0 and 100 ends, then mean and median, and the items at 0 and at 100 where the width allows. None is an item
    the run skipped. `light`: the plot's colours for a light theme."""
    out = Text(no_wrap=True, overflow="ellipsis")
    label_w = min(16, max((len(label) for label, _s in series), default=0))
    for n, (label, per_item) in enumerate(series):
        scores = [float(v) for v in per_item.values() if v is not None]
        skipped = len(per_item) - len(scores)
        if n:
            out.append("\n")
        out.append(f"{short(label, label_w):<{label_w}} ", style="bold")
        if not scores:
            out.append("no scored items", style="dim")
            continue
        stats = f" mean {statistics.fmean(scores):.1f} · median {statistics.median(scores):.1f}"
        extra = f" · {sum(s == 0 for s in scores)} at 0 · {sum(s >= 100 for s in scores)} at 100" + (
            f" · {skipped} skipped" if skipped else "")
        room = width - label_w - 1 - len("0▕▏100") - len(stats)
        if room - len(extra) >= min(len(scores), 24):  # the plot first: the extras only where it keeps its room
            room -= len(extra)
        else:
            extra = ""
        line = sparkline(scores, max(8, room))
        each = max(1, min(4, max(8, room) // len(line)))  # a few items: a few cells each, to be seen at all
        out.append("0▕", style="dim")
        out.append("".join(c * each for c in line), style=PLOT_STYLE_LIGHT if light else PLOT_STYLE)
        out.append("▏100", style="dim")
        out.append(stats)
        out.append(extra, style="dim")
    return out


@dataclass(frozen=True)
class ItemDelta:
    """One item two runs both scored: run A's score, run B's, and A − B."""

    item_id: str
    a: float
    b: float

    @property
    def delta(self) -> float:
        return self.a - self.b


def item_diff(a: Mapping[str, float | None], b: Mapping[str, float | None]) -> list[ItemDelta]:
    """The items both runs scored, where they differ most first (|A − B| descending, then item id); an item
    one run skipped or lacks has nothing to compare."""
    common = [i for i in a if i in b and a[i] is not None and b[i] is not None]
    rows = [ItemDelta(i, float(a[i]), float(b[i])) for i in common]  # type: ignore[arg-type]
    return sorted(rows, key=lambda r: (-abs(r.delta), r.item_id))
