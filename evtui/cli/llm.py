"""`evtui llm serve`: the local LLM for the `llm` judge."""

from __future__ import annotations

import argparse
import sys


def cmd_llm_serve(args: argparse.Namespace) -> int:
    """Serve the SmolLM2 GGUF with llama.cpp on 127.0.0.1 for the `llm` judge (the local-llm extra)."""
    from evtui.judge import serve

    serve.check_runtime()
    serve.gguf_path()
    print(serve.usage_hint(args.port) + "\nCtrl-C stops it.", file=sys.stderr, flush=True)  # unwrapped: copyable
    return serve.serve(args.port, n_ctx=args.n_ctx, threads=args.threads, verbose=args.verbose)
