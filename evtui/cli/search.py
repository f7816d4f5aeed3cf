"""The verbs that read the library for a query: `search` (rank evidence sentences), `judge` (score each on the
0-100 rubric) and `verify` (claim-level verdicts per paper). Rich is imported only to draw a table: `--json` never
loads it."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from evtui.cli.core import (
    WIDE_JUDGE,
    WIDE_TABLE,
    emit_json,
    judge_opts,
    one_line,
    open_library,
    say,
    say_dim,
    shortened,
    stage_progress,
    stderr,
)
from evtui.cli.flags import search_request
from evtui.errors import EvtuiError
from evtui.render import plain, safe


def cmd_search(args: argparse.Namespace) -> int:
    from evtui.render import aspect_chips, coverage_marker, highlight
    from evtui.search import Searcher

    with open_library(args, reading=True) as lib:
        result = Searcher(lib).run(search_request(args, lib))
    from evtui.honest import honest

    aspects = result.query.aspects
    checked = honest(result.evidence, aspects, result.method)  # rows that mention the query's concepts
    if args.json:  # every row, as before; the notes say which concepts none of them mentions
        data = result.to_json()
        data["notes"] = [*data["notes"], *checked.mention_notes]
        emit_json(data)
        return 0
    from rich.console import Console, Group
    from rich.table import Table

    out = Console(emoji=False)
    out.print(f"[bold]{result.query.mode}[/] · {result.method}  ", aspect_chips(aspects))
    for note in result.notes:
        out.print(f"[dim]note: {safe(note)}[/]")
    for note in checked.notes:
        out.print(f"[yellow]{safe(note)}[/]")
    if not checked.evidence:
        if not checked.notes:
            out.print("[yellow]no matching sentences[/]")
        return 0
    # Narrow terminals (80 columns) get the paper and section under the sentence: a column of its own left the
    # sentence ~20 characters wide.
    wide = out.width >= WIDE_TABLE
    table = Table(show_lines=not wide, expand=True, pad_edge=False)
    table.add_column("#", justify="right", style="dim", width=3)
    table.add_column("score", justify="right", width=6)
    table.add_column("aspects" if len(aspects) >= 7 else "asp", width=max(3, len(aspects)))  # a dot per aspect
    table.add_column("sentence", ratio=1)
    if wide:
        table.add_column("paper · section", style="cyan", max_width=34)
    for e in checked.evidence:
        section = e.sentence.section_title or e.sentence.section_kind
        cells = [str(e.rank), f"{e.score:.2f}", coverage_marker(e.highlights, aspects, checked.partly.get(e.sentence.id, ()))]
        text = highlight(e.sentence.text, e.highlights, aspects)
        if wide:
            table.add_row(*cells, text, f"{safe(e.sentence.paper_id, oneline=True)}\n"
                          f"{safe(shortened(e.title or '', 60), oneline=True)}\n[dim]{safe(section, oneline=True)}[/]")
        else:
            table.add_row(*cells, Group(text, one_line(f"{e.sentence.paper_id} · {section} · {e.title or ''}")))
    out.print(table)
    scores = [e.score for e in checked.evidence]
    if any(b > a for a, b in zip(scores, scores[1:], strict=False)):
        out.print("[dim]rows in the method's selection order: each adds what the rows above it lack (another aspect, "
                  "another paper), so a lower row may score higher[/]")
    return 0


def cmd_judge(args: argparse.Namespace) -> int:
    """Search (same filters and default method as `evtui search`), then judge the top k on the 0–100 rubric."""
    from evtui.judge import LEVELS, estimate, failure_line, judge_evidence, make_judge, summarize
    from evtui.judge.llm import SERVER_SILENT
    from evtui.judge.service import failure_root
    from evtui.query.parse import NO_CLAIM
    from evtui.render import highlight
    from evtui.search import Searcher

    if args.k < 1:
        raise EvtuiError(f"--k must be at least 1, not {args.k}")  # as search and select say it
    with open_library(args, reading=True) as lib:
        searcher = Searcher(lib)
        result = searcher.run(search_request(args, lib))
        opts = judge_opts(args)
        # The local judge shares the search's ranker: its model and the pools the search built.
        judge = make_judge(lib, opts.get("judge"), opts.get("model"), opts.get("api_base"), searcher=searcher)
        if judge.name == "llm" and result.evidence:
            est = estimate(result.query, result.evidence, judge, library=lib)
            if not args.json:
                limit = f" · limit ${args.max_cost:.4f}" if args.max_cost is not None else ""
                say(f"[bold]estimate[/] {safe(judge.model)}: {est.calls} call(s), {est.cached} cached · "
                    f"~{est.tokens_in:,} tokens in, ~{est.tokens_out:,} out · ~${est.cost:.4f}{limit}")
                for note in est.notes:
                    say(f"[dim]note: {safe(note)}[/]")
        # Read-only beside the app: cached verdicts are served, new ones are shown but not stored.
        sink = (lambda _table, _rows: None) if lib.read_only else None
        kept = {"cached": 0, "new": 0}  # the verdicts so far, for what a Ctrl-C says it kept

        def arrived(j: Any) -> None:
            if j.status == "ok":
                kept["cached" if j.cached else "new"] += 1

        try:
            judgments = judge_evidence(lib, result.query, result.evidence, judge=judge, max_cost=args.max_cost,
                                       sink=sink, on_result=arrived)
        except KeyboardInterrupt:
            total = len({e.sentence.id for e in result.evidence})
            args.interrupted_note = _judge_interrupted(kept["cached"], kept["new"], total, stored=not lib.read_only)
            raise
    pairs = sorted(zip(result.evidence, judgments, strict=True),
                   key=lambda ej: (ej[1].status != "ok", -ej[1].score, -ej[1].confidence, ej[0].rank))
    totals = summarize(judgments)
    all_skipped = bool(judgments) and totals["skipped"] == len(judgments)
    why_skipped = (judgments[0].error or "not judged") if all_skipped else ""
    if all_skipped and not why_skipped.startswith(SERVER_SILENT):  # --max-cost too small: an input error (exit 2)
        raise EvtuiError(f"nothing was judged: {why_skipped}")
    stopped = next((j.error for j in judgments if j.status == "skipped"), None)
    # A reason every failed row shares (a server that cannot be reached) is said once, not on each row; and a
    # run in which no row got a verdict fails (exit 1), with its results (the local verdicts) under --json.
    failure = failure_line(judge.name, judgments)
    if all_skipped:  # a server that stopped answering: a judge that got nothing done, not a usage error
        failure = f"the LLM judge skipped every sentence: {why_skipped}; the local judge's verdicts are unchanged"
    verdicts = sum(1 for j in judgments if j.status == "ok")
    rc = 1 if judgments and not verdicts else 0
    if args.json:
        results = []
        for e, j in pairs:
            row = e.to_json()
            row["retrieval_score"] = row.pop("score")
            row.update(score=j.score, level=j.level, level_label=j.label, confidence=j.confidence, stance=j.stance,
                       lean=j.lean or None, aspects=j.aspects, rationale=j.rationale, cost=round(j.cost, 8), status=j.status,
                       error=j.error, cached=j.cached)
            results.append(row)
        emit_json({"query": result.query.text, "mode": result.query.mode,
                    "aspects": [a.to_json() for a in result.query.aspects], "judge": judge.name,
                    "model": judge.model, "results": results,
                    # as `verify --json`: the notes only where the query asserts nothing (why no side is taken)
                    **({"notes": list(result.notes)} if any(n.startswith(NO_CLAIM) for n in result.notes) else {}),
                    **({"error": failure or "no sentence got a verdict"} if rc else {})})
        if failure:
            say(f"[red]error:[/] {safe(failure)}" if rc else f"[yellow]note:[/] {safe(failure)}")
        return rc
    from rich.console import Console, Group
    from rich.table import Table
    from rich.text import Text

    out = Console(emoji=False)
    kind = "local judge (offline, not an LLM)" if judge.name == "local" else "LLM judge"
    out.print(f"[bold]{result.query.mode}[/] · {kind} [cyan]{safe(judge.model)}[/] · prompt {judge.prompt_version}")
    for note in result.notes:  # what the search made of the query, as `search` says it
        out.print(f"[dim]note: {safe(note)}[/]")
    if not pairs:
        out.print("[yellow]no matching sentences[/]")
        return 0
    labels = {a.id: a.label for a in result.query.aspects}
    # Below WIDE_JUDGE columns the rationale and the paper go under the sentence: six columns at 80 left the
    # sentence 9 characters wide and the rationale 5.
    wide = out.width >= WIDE_JUDGE
    table = Table(expand=True, pad_edge=False, show_lines=not wide)
    table.add_column("score", justify="right", width=5)
    # 14: "correspondence", the longest word of a level's name, whole (at 12 it read "direct corresponde…")
    table.add_column("level", width=14)
    table.add_column("stance", width=8)
    table.add_column("sentence" if wide else "sentence · why · paper", ratio=3)
    if wide:
        table.add_column("rationale", ratio=2)
        table.add_column("paper · #", style="cyan", max_width=24)
    stance_style = {"supports": "green", "refutes": "red", "neutral": "dim"}
    for e, j in pairs:
        section = e.sentence.section_title or e.sentence.section_kind
        where = safe(e.sentence.paper_id, oneline=True) + f"\n[dim]#{e.rank} {safe(section, oneline=True)}[/]"
        sentence = highlight(e.sentence.text, e.highlights, result.query.aspects)
        if j.status != "ok":
            cells = ["–", f"[red]{safe(j.status)}[/]", ""]
            shared = failure is not None and j.status == "failed" and failure_root(j) in failure
            why = "[red]no verdict (why: under the table)[/]" if shared else f"[red]{safe(j.error or '')}[/]"
        else:
            covered = safe(", ".join(labels.get(a, a) for a in j.aspects))
            why = safe(j.rationale) + (f"\n[dim]covers: {covered}[/]" if covered else "") + \
                ("\n[dim]cached[/]" if j.cached else "")
            # a side below its precision threshold is a lean, dim, never a verdict
            stance = plain(j.stance, stance_style.get(j.stance, "")) if not j.lean else \
                plain(f"leans {'▲' if j.lean == 'supports' else '▼'}", "dim")
            cells = [f"[bold]{j.score}[/]", f"{LEVELS.get(j.level, '')}\n[dim]conf {j.confidence}/10[/]", stance]
        if wide:
            table.add_row(*cells, sentence, why, where)
        else:
            at = one_line(f"{e.sentence.paper_id} · #{e.rank} · {section} · {e.title or ''}")
            table.add_row(*cells, Group(sentence, Text.from_markup(f"[dim]{why}[/]"), at))
    out.print(table)
    out.print(f"[dim]{totals['judged']} judged, {totals['cached']} cached, {totals['failed']} failed, "
              f"{totals['skipped']} skipped · cost ${totals['cost']:.4f} · {totals['tokens_in']:,} tokens in, "
              f"{totals['tokens_out']:,} out[/]")
    for note in totals["notes"]:
        out.print(f"[dim]note: {safe(note)}[/]")
    if stopped:
        say(f"[yellow]stopped early:[/] {safe(stopped)}")
    if failure:
        say(f"[red]error:[/] {safe(failure)}" if rc else f"[yellow]note:[/] {safe(failure)}")
    return rc


def _judge_interrupted(cached: int, new: int, total: int, *, stored: bool) -> str:
    """What a Ctrl-C during `evtui judge` kept: the verdicts cached before and those stored as they arrived (the
    next run serves both without a call), and how many sentences were not judged (it only said "interrupted")."""
    if not stored:  # read beside the app: new verdicts are shown, never stored
        left = total - cached
        return (f": {cached} of {total} verdict(s) were already cached and stay; {new} new one(s) were not kept "
                f"(the library is open in the app) and {left} sentence(s) were not judged")
    left = total - cached - new
    return (f": {cached + new} of {total} verdict(s) are kept ({cached} cached before, {new} new); the other {left} "
            "sentence(s) were not judged (the same `evtui judge` again judges only those)")


def _ensure_paper_channel(lib: Any, args: argparse.Namespace) -> None:
    """`best` and `verify` find a claim's papers better with one dense vector per paper (the paper channel; BENCHMARKS.md
    "Dense paper vectors"), used only once every paper has one. A library that lacks some (the demo ships them, a
    user's own ingest adds them once a library has them) gets them here, on first use, with progress; a library this
    process cannot write (the app holds it, a read-only home) verifies without them, and says so."""
    from evtui import paper_vectors
    from evtui.embed import model_available

    done, total = paper_vectors.coverage(lib)
    if done >= total or not model_available():
        return
    if lib.read_only:
        say(f"[dim]note: {total - done:,} of {total:,} papers have no dense vector, so claims are matched to papers "
            "by their words alone; `evtui embed` adds them (about 0.1 s a paper)[/]")
        return
    say(f"[dim]one-time: embedding {total - done:,} papers' title + abstract, which `verify` and `best` use to find "
        f"a claim's papers (about {max(1, round(0.12 * (total - done) / 60))} min; Ctrl-C keeps what is done)[/]")
    last = [time.monotonic()]

    def progress(n: int, of: int) -> None:
        if of and time.monotonic() - last[0] >= 10:
            last[0] = time.monotonic()
            say_dim(f"embedded {n:,}/{of:,} papers")

    paper_vectors.ensure_paper_vectors(lib, on_progress=progress, share=True)


def cmd_verify(args: argparse.Namespace) -> int:
    """Claim-level verdicts: which papers support the claim, which refute it, which only mention it."""
    from evtui.judge.claims import verify_claim
    from evtui.verify.model import default_verifier

    if args.papers is None:
        from evtui.bench.scifact_predict import DEFAULT_PAPERS
        from evtui.judge.claims import CLAIM_PAPERS

        args.papers = DEFAULT_PAPERS if args.claims else CLAIM_PAPERS
    if args.papers < 1:
        raise EvtuiError("--papers must be at least 1")
    if args.claims:
        if args.claim:  # one or the other: the claim would be dropped without a word
            raise EvtuiError("give a CLAIM or --claims CLAIMS.jsonl, not both")
        return _verify_claims_file(args)
    if args.out:  # the verdict goes to stdout; nothing would be written to --out
        raise EvtuiError("--out goes with --claims CLAIMS.jsonl (one claim's verdict is printed; --json for JSON)")
    if not args.claim:
        raise EvtuiError("give a CLAIM, or --claims CLAIMS.jsonl --out PRED.jsonl")
    with open_library(args, reading=True) as lib:
        _ensure_paper_channel(lib, args)
        verdict = verify_claim(lib, args.claim, papers=args.papers)
    if args.json:
        emit_json(verdict.to_json())
        return 0
    from rich.console import Console
    from rich.table import Table

    out = Console(emoji=False)
    out.print(f"[bold]{safe(verdict.query)}[/] · verifier [cyan]{safe(verdict.model)}[/] (offline, trained; "
              f"a side only above its precision threshold)")
    if reliability := default_verifier().reliability():  # what a side is worth, measured on claims it never saw
        out.print(f"[dim]{safe(reliability)}[/]")
    out.print(f"[bold]{verdict.summary_line()}[/]")
    if not verdict.papers:
        for note in verdict.notes:  # why nothing matched ("only common words: …") comes first
            out.print(f"[dim]note: {safe(note)}[/]")
        out.print("[yellow]no paper in the library matches this claim[/]")
        return 0
    wide = out.width >= WIDE_TABLE  # narrower: the paper heads its rationales instead of a column of its own
    table = Table(expand=True, pad_edge=False, show_lines=not wide)
    table.add_column("verdict", width=13)  # "● no evidence" on one line
    table.add_column("conf", justify="right", width=5)
    if wide:
        table.add_column("paper", ratio=2)
    table.add_column("rationale" if wide else "paper · rationale", ratio=3)
    style = {"SUPPORT": "[green]▲ supports[/]", "CONTRADICT": "[red]▼ refutes[/]", "NEI": "[dim]● no evidence[/]"}
    for pv in verdict.papers:
        why = "\n".join(f"#{r.position} {safe(r.text, oneline=True)} [dim](P support {r.p_support:.2f}, "
                        f"refute {r.p_refute:.2f})[/]" for r in pv.rationales) or "[dim]mentions it, takes no side[/]"
        paper = f"{safe(pv.title, oneline=True)}\n[cyan]{safe(pv.paper_id, oneline=True)}[/]"
        if wide:
            table.add_row(style[pv.label], f"{pv.confidence:.2f}", paper, why)
        else:
            table.add_row(style[pv.label], f"{pv.confidence:.2f}", f"[bold]{paper}[/bold]\n{why}")
    out.print(table)
    for note in verdict.notes:
        out.print(f"[dim]note: {safe(note)}[/]")
    return 0


def _verify_claims_file(args: argparse.Namespace) -> int:
    """SciFact claims in, official SciFact predictions out (one line per claim, written as exports are)."""
    from pathlib import Path

    from evtui.bench.scifact import load_claims
    from evtui.bench.scifact_predict import predict

    if not args.out:
        raise EvtuiError("--claims needs --out PRED.jsonl")
    if args.out == "-" and args.json:  # stdout holds the predictions: a JSON report after them would corrupt both
        raise EvtuiError("--out - writes the predictions to standard output; --json cannot share it (drop one)")
    from evtui.export import write_text_file
    from evtui.outpaths import check_output

    claims = load_claims(Path(args.claims))
    out_path = Path(args.out)
    with open_library(args, reading=True) as lib:
        if args.out != "-":  # checked before the claims are verified (minutes), not after
            check_output(out_path, lib.config.home, flag="--out", inputs=[("--claims", Path(args.claims))])
        _ensure_paper_channel(lib, args)
        lines: list[str] = []
        with _claims_progress(len(claims), bar=not args.json) as progress:
            for pred in predict(lib, [{"id": c["id"], "claim": c["claim"]} for c in claims], args.papers):
                lines.append(json.dumps(pred, ensure_ascii=False) + "\n")
                progress(len(lines))
    if args.out == "-":  # standard output, as `export --out -` (it wrote a file named "-")
        sys.stdout.write("".join(lines))
    else:
        write_text_file(out_path, "".join(lines))
    n = len(lines)
    if args.json:
        emit_json({"claims": n, "out": str(out_path)})
    else:
        say(f"wrote {n} SciFact predictions to {'standard output' if args.out == '-' else safe(str(out_path))}")
    return 0


@contextmanager
def _claims_progress(total: int, *, bar: bool) -> Iterator[Callable[[int], None]]:
    """How far `verify --claims` got: a bar on a terminal (`bar`: not under --json), plain lines in a log."""
    if stderr().is_terminal:
        with stage_progress(bar) as update:
            yield (lambda done: update("verifying claims", done, total)) if update else (lambda done: None)
        return
    from evtui.bench.loglines import LogLines

    log = LogLines("verify", "claims", total, lambda line: print(line, file=sys.stderr, flush=True))
    yield log.update
