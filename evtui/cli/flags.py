"""The search flags `search`, `select` and `judge` share (one definition, so they never drift apart), and the
checks that turn bad values into one precise sentence before anything runs."""

from __future__ import annotations

import argparse
import os
from typing import Any

from evtui import methods
from evtui.errors import EvtuiError
from evtui.models import QUERY_MODES, SECTION_KINDS
from evtui.request import Filters, SearchRequest


def method_help() -> str:
    """`--method` help: the Searcher's methods in the registry's order, each with its note (evtui.methods)."""
    parts = []
    for m in methods.all_methods():
        if m.search:
            note = "; ".join(x for x in ("default" if m.name == methods.DEFAULT_METHOD else "", m.help) if x)
            parts.append(f"{m.name} ({note})" if note else m.name)
    return "ranking method: " + (", ".join(parts[:-1]) + " or " + parts[-1] if len(parts) > 1 else "".join(parts))


def add_search_flags(parser: argparse.ArgumentParser, *, k: int | None, k_help: str) -> None:
    """`k` None: the count defaults to config.toml's `k` (20 unless set), as the app's does."""
    shown = "k in config.toml, 20 unless set" if k is None else str(k)
    parser.add_argument("-k", "--k", type=int, default=k, help=f"{k_help} (default {shown})")
    parser.add_argument("--paper", help="only this paper id (see `evtui papers`)")
    parser.add_argument("--section", choices=SECTION_KINDS, help="only this section kind")
    parser.add_argument("--mode", choices=("auto", *QUERY_MODES), default=None, help="query kind (default: detect)")
    parser.add_argument("--method", default=None, help=method_help())
    parser.add_argument("--results", action="store_true",
                        help="prefer results evidence (numbers, effects, comparisons) with the best method")
    parser.add_argument("--year-from", type=int, default=None, metavar="YEAR", help="only papers from this year on")
    parser.add_argument("--year-to", type=int, default=None, metavar="YEAR", help="only papers up to this year")


def stored_paper_id(store: Any, paper_id: str) -> str:
    """The paper id as the library stores it: a pasted id's stray spaces or newline at either end dropped when
    the id as typed is not there (only the ends: an id may hold inner spaces, e.g. `file:my paper -9b5273c3`).
    An id found neither way comes back as typed, for the message that quotes it. An id that is not valid UTF-8 (a
    shell's bytes, as undecodable arguments arrive) names no paper: "invalid id", before any query."""
    try:
        paper_id.encode("utf-8")
    except UnicodeEncodeError:
        shown = os.fsencode(paper_id).decode("utf-8", "backslashreplace")
        raise EvtuiError(f"invalid paper id '{shown}': it is not valid UTF-8 text, so no paper has it "
                         "(`evtui papers` lists the ids)") from None
    bare = paper_id.strip()
    if bare != paper_id and store.paper(paper_id) is None and store.paper(bare) is not None:
        return bare
    return paper_id


def shown_paper_id(paper_id: str) -> str:
    """An id for a message: bare as `evtui papers` lists it, quoted where bare it would be invisible or ambiguous
    (empty, spaces at an end or inside, a comma that a list of ids is joined with, quotes)."""
    if paper_id and not any(c.isspace() or c in ",'\"" for c in paper_id):
        return paper_id
    return repr(paper_id)


def search_request(args: argparse.Namespace, library: Any) -> SearchRequest:
    """The SearchRequest the search flags ask for, checked: --k, the year range and the paper id."""
    if args.k is None:
        args.k = library.config.k
    if args.k < 1:
        raise EvtuiError(f"--k must be at least 1, not {args.k}")
    if args.year_from is not None and args.year_to is not None and args.year_from > args.year_to:
        raise EvtuiError(f"--year-from {args.year_from} is after --year-to {args.year_to}: no paper can match")
    if args.paper is not None:
        args.paper = stored_paper_id(library.store, args.paper)
    if args.paper is not None and library.store.paper(args.paper) is None:  # `--paper ""` (an unset $VAR) too
        raise EvtuiError(f"unknown paper {args.paper!r} (`evtui papers` lists the ids)")
    return SearchRequest(args.query, k=args.k, method=args.method or methods.DEFAULT_METHOD, mode=args.mode,
                         filters=Filters(args.paper, args.section, args.year_from, args.year_to),
                         results=args.results)
