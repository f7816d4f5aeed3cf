"""The selection basket from the command line: `select` (a search's top hits in, judged by the offline judge;
handed to the open app when it holds the library) and `export` (the selection, cited)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from evtui.cli.core import config_for, emit_json, open_library, say
from evtui.cli.flags import search_request
from evtui.errors import EvtuiError
from evtui.render import safe

if TYPE_CHECKING:
    from evtui.library import Library


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
        say(f"[yellow]warning:[/] {safe(mismatch)}")
    with open_library(args, demo=False, reading=True) as lib:
        n, unchanged = export_selection(lib, Path(args.out), fmt, plain=args.plain, keep_same=True)
    if args.json:
        emit_json({"out": str(Path(args.out).expanduser()), "format": fmt, "sentences": n})
    elif unchanged:
        say(f"{safe(args.out)} already holds these {n} sentence(s) (the selection has not changed): left as it was")
    else:
        say(f"wrote {n} sentence(s) to {'standard output' if args.out == '-' else safe(args.out)}")
    return 0


APP_TAKES = 15.0  # seconds `evtui select` waits for the open app to take its rows (it looks every second)


def cmd_select(args: argparse.Namespace) -> int:
    """Add the top hits of a search to the selection basket (the headless twin of space in the app)."""
    from evtui.errors import LibraryLockedError
    from evtui.export import Basket
    from evtui.lockinfo import shares_reads

    try:
        lib = open_library(args)
    except LibraryLockedError:
        if not shares_reads(config_for(args).home):
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

    home = config_for(args).home
    rows: list[dict[str, Any]] = []
    verdict_rows: list[list[Any]] = []
    judged, why_not = 0, ""
    skipped = 0
    with open_library(args, reading=True) as lib:
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
        say("[dim]added through the open app (it holds the library)[/]")
    # the app skips a row selected for its question meanwhile (space in the app): skipped too
    skipped += len(rows) - len(reply.get("added") or [])
    return _selected(args, list(reply.get("added") or []), list(reply.get("selection") or []), judged, why_not,
                     skipped)


def selection_ids(lib: Library) -> list[str]:
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
        emit_json({"added": added, "selection": ids, "judged": judged, "skipped": skipped,
                    **({"judge_error": why_not} if why_not else {})})
    else:
        verdicts = f" ({judged} judged by the local judge)" if judged else ""
        already = f", skipped {skipped} already selected for this question" if skipped else ""
        say(f"added {len(added)}{verdicts}{already}; the selection holds {len(ids)} sentence(s)")
        if why_not:
            say(f"[yellow]not judged: {safe(why_not)}[/]")
    return 0
