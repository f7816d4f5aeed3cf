"""The verbs that fill and look after the library: `ingest`, `fetch` (Europe PMC), `papers`, `show`, `stats`,
`embed` and `remove`."""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import MutableMapping, Sequence
from typing import Any

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from evtui.cli.core import PAPERS_ON_SCREEN, emit_json, open_library, progress_bar, say, stderr
from evtui.cli.flags import shown_paper_id, stored_paper_id
from evtui.cli.selection import selection_ids
from evtui.errors import EvtuiError
from evtui.render import plain, safe


def cmd_ingest(args: argparse.Namespace) -> int:
    if args.collection is not None and args.zotero is None:  # first: `ingest --collection X` lacks only --zotero
        raise EvtuiError("--collection needs --zotero")
    if not args.paths and args.zotero is None:
        raise EvtuiError("give files or folders to ingest, or --zotero [DIR]")
    with open_library(args, demo=False) as lib:
        with progress_bar("Ingesting", not args.json) as cb:
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
        emit_json({**report.to_json(), **({"error": why} if failed else {})})
        if failed:
            say(f"[red]error:[/] {safe(why)}")
    else:
        rate = f" ({report.sentences / report.seconds:,.0f} sentences/s)" if report.seconds and report.sentences else ""
        same = f", {report.same_paper} already stored under another id" if report.same_paper else ""
        say(f"[green]{report.added} added[/], {report.replaced} replaced, {report.unchanged} unchanged{same} · "
            f"{report.sentences:,} sentences from {report.files} file(s) in {report.seconds:.1f}s{rate}")
        for e in report.errors:
            say(f"[red]✗[/] {safe(e.path)}: {safe(e.reason)}")
        if report.paper_vectors:
            say(f"[dim]embedded {report.paper_vectors} new paper(s)' title + abstract for best's paper channel[/]")
        for note in report.notes:
            say(f"[dim]note: {safe(note)}[/]")
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
    with open_library(args, reading=True) as lib:
        papers = lib.store.papers(limit=limit)
        infos = lib.store.paper_infos([p.id for p in papers])
        row = lib.store.con.execute("SELECT count(*) FROM papers WHERE state = 'ready'").fetchone()
        total = int(row[0]) if row else len(papers)
    if args.json:
        emit_json([{
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
        with console.pager(styles=pager_shows_styles()):
            console.print(table)
    else:
        console.print(table)
    if len(papers) < total:
        say(f"[dim]{len(papers):,} of {total:,} papers · --limit N for more (0: all), or pipe for "
            "tab-separated lines of every paper[/]")
    return 0


def pager_shows_styles(env: MutableMapping[str, str] = os.environ) -> bool:
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

    with open_library(args, reading=True) as lib:
        doc = show_document(lib, stored_paper_id(lib.store, args.paper_id))  # "PMID:1 " pasted: PMID:1
    if args.json:
        emit_json(doc)
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
    with open_library(args, reading=True) as lib:
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
        emit_json({**stats, **({"error": why} if broken else {})})
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
    with open_library(args) as lib:
        if args.paper is not None:
            args.paper = stored_paper_id(lib.store, args.paper)
        if args.paper is not None and lib.store.paper(args.paper) is None:  # else "embedded 0 sentences", exit 0
            raise EvtuiError(f"unknown paper {args.paper!r} (`evtui papers` lists the ids)")
        t0 = time.perf_counter()
        # Each paper's title + abstract first (one vector per paper, for best's paper channel); not for one --paper:
        # the channel uses them only once every paper has one.
        papers = 0
        if args.paper is None and stderr().is_terminal and not args.json:
            with Progress(TextColumn("[bold]Papers"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TimeRemainingColumn(), console=stderr(), transient=True) as prog:
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
                say(f"[dim]{label} ({time.perf_counter() - t0:.1f}s)[/]")

            n = embed_with_ray(lib, address=args.ray_address, paper=args.paper,
                               parquet_dir=Path(args.parquet_dir) if args.parquet_dir else None,
                               progress=stderr().is_terminal and not args.json, on_stage=stage)
            if n:
                engine = engine_summary(args.ray_address)
        elif stderr().is_terminal and not args.json:
            with Progress(TextColumn("[bold]Embedding"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                          TimeRemainingColumn(), console=stderr(), transient=True) as prog:
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
        emit_json(out)
    else:
        if papers:
            say(f"embedded {papers:,} papers (title + abstract) in {t_papers - t0:.1f}s")
        say(f"embedded {n:,} sentences in {seconds:.1f}s · coverage {done:,}/{total:,}"
            f" · papers {p_done:,}/{p_total:,}")
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
    with open_library(args, demo=False) as lib:
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
                        emit_json({"fetched": [], "skipped": [], "hits": [h.row() for h in hits], "total": total})
                    return 0
            with progress_bar("Fetching", not args.json) as cb:
                files, out = fetch.download(lib, client, hits)
                out.skipped[:0] = not_found
                fetch.store(lib, files, out, on_progress=cb)
        except fetch.Unreachable as exc:  # nothing was stored: everything is fetched before anything is ingested
            if args.json:
                emit_json({"error": str(exc)})
            say(f"[red]error:[/] {safe(str(exc))}")
            return 1
        except fetch.Refused as exc:
            raise EvtuiError(str(exc)) from exc
    if args.json:
        emit_json(out.to_json())
    else:
        for f in out.fetched:
            text = "full text" if f["full_text"] else "abstract only"
            licence = f" · {f['licence']}" if f["licence"] else ""
            say(f"[green]✓[/] {safe(f['paper_id'])}  {safe(f['title'][:90], oneline=True)} [dim]({text}{safe(licence)})[/]")
        for k in out.skipped:
            say(f"[yellow]–[/] {safe(k['id'])}: {safe(k['reason'])}")
        say(f"{len(out.fetched)} fetched from Europe PMC, {len(out.skipped)} skipped "
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
        say(f"{len(hits)} of {total:,} hit(s) in Europe PMC for {safe(args.search)!r}")
    if not hits:
        return False
    if args.yes:
        return True
    if not (sys.stdin.isatty() and stderr().is_terminal):
        say("[dim]nothing fetched: add --yes to fetch these[/]")
        return False
    answer = stderr().input(f"Fetch these {len(hits)} paper(s) into the library? [y/N] ")
    return answer.strip().lower() in ("y", "yes")


def cmd_remove(args: argparse.Namespace) -> int:
    with open_library(args, demo=False) as lib:
        ids = list(dict.fromkeys(stored_paper_id(lib.store, pid) for pid in args.ids))  # " PMID:1" pasted
        missing = [pid for pid in ids if lib.store.paper(pid) is None]
        # each id as typed, quoted where bare it would hide a space ("no paper PMID:1 " read as PMID:1 missing)
        shown = ", ".join(shown_paper_id(pid) for pid in missing)
        if missing and len(missing) == len(ids):
            raise EvtuiError(f"no paper {shown} (`evtui papers` lists the ids)")
        gone = {pid for pid in ids if pid not in missing}
        selected = sum(sid.rsplit(":", 1)[0] in gone for sid in selection_ids(lib))
        n = lib.remove(ids)
    if args.json:
        # exit 1 as a failing verb does: a top-level "error" a script can test and the one line on stderr
        why = f"no paper {shown} (`evtui papers` lists the ids); the others were removed"
        emit_json({"removed": n, **({"missing": missing, "error": why} if missing else {})})
        if missing:
            say(f"[red]error:[/] {safe(why)}")
    else:
        say(f"removed {n} paper(s)")
        if selected:
            say(f"[yellow]{selected} selected sentence(s) came from them: they stay in the selection as "
                "\"no longer in the library\" (x on the Export screen removes them)[/]")
        if missing:
            say(f"[yellow]no paper {safe(shown)}[/]")
    return 1 if missing else 0
