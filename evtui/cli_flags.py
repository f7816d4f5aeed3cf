"""The search flags `search`, `select` and `judge` share (one definition, so they never drift apart), and the
checks that turn bad values into one precise sentence before anything runs."""

from __future__ import annotations

import argparse
from typing import Any

from evtui.errors import EvtuiError
from evtui.models import QUERY_MODES, SECTION_KINDS

METHOD_HELP = ("ranking method: best (default; learned reranker over BM25, embeddings, aspect coverage, section and"
               " results cues, then coverage-aware selection), evidential, bm25-coverage (BM25 re-ranked by aspects"
               " covered), bm25, dense (MiniLM embeddings, computed lazily), hybrid (reciprocal-rank fusion of both)"
               " or random (seeded)")


def add_search_flags(parser: argparse.ArgumentParser, *, k: int, k_help: str) -> None:
    parser.add_argument("--k", type=int, default=k, help=f"{k_help} (default {k})")
    parser.add_argument("--paper", help="only this paper id (see `evtui papers`)")
    parser.add_argument("--section", choices=SECTION_KINDS, help="only this section kind")
    parser.add_argument("--mode", choices=("auto", *QUERY_MODES), default=None, help="query kind (default: detect)")
    parser.add_argument("--method", default=None, help=METHOD_HELP)
    parser.add_argument("--results", action="store_true",
                        help="prefer results evidence (numbers, effects, comparisons) with the best method")
    parser.add_argument("--year-from", type=int, default=None, metavar="YEAR", help="only papers from this year on")
    parser.add_argument("--year-to", type=int, default=None, metavar="YEAR", help="only papers up to this year")


def search_kwargs(args: argparse.Namespace, library: Any) -> dict[str, Any]:
    """Searcher.search keywords from the flags, checked: --k, the year range and the paper id."""
    from evtui.search import DEFAULT_METHOD

    if args.k < 1:
        raise EvtuiError(f"--k must be at least 1, not {args.k}")
    if args.year_from is not None and args.year_to is not None and args.year_from > args.year_to:
        raise EvtuiError(f"--year-from {args.year_from} is after --year-to {args.year_to}: no paper can match")
    if args.paper and library.store.paper(args.paper) is None:
        raise EvtuiError(f"unknown paper {args.paper!r} (`evtui papers` lists the ids)")
    return {"k": args.k, "paper": args.paper, "section": args.section, "mode": args.mode,
            "method": args.method or DEFAULT_METHOD, "year_from": args.year_from, "year_to": args.year_to,
            "results": args.results}
