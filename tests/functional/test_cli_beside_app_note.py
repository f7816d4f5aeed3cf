"""A CLI command beside the open app printed "read-only: the library is in use…" every time, for reads that need
no write: the note now comes only with a write the read-only library refused."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from test_shared_access import HOLDER, _cli

__all__ = ["HOLDER"]

def test_reads_beside_the_app_print_no_read_only_note(papers_dir: Path) -> None:
    holder = subprocess.Popen([sys.executable, "-c", HOLDER, str(papers_dir)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        for args in (("stats",), ("papers",), ("search", "ACE inhibitors cause cough", "--method", "bm25")):
            proc = _cli(*args)
            assert proc.returncode == 0, proc.stderr
            assert "read-only" not in proc.stderr, (args, proc.stderr)
    finally:
        assert holder.stdin is not None
        holder.stdin.write("quit\n")
        holder.stdin.flush()
        holder.wait(timeout=30)
