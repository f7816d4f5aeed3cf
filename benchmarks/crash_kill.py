"""SIGKILL real `evtui ingest`, `evtui embed` and `evtui bench evidencebench` processes and check nothing is lost.

Each kill runs a subprocess on its own data home (in a temp dir) and kills it with SIGKILL, either at a random
moment (a timer) or at a named phase through the opt-in hook in evtui.faults (EVTUI_CRASH_AT=<phase>:<n>, a
real SIGKILL too): parse, db_write (inside the DuckDB transaction), index_commit (before the Tantivy commit),
mark_ready (after it), recover (during the repair that the next open runs), embed_batch (inside an embedding
chunk's transaction). Ingest kills hit an empty library, or one that already holds an older version of the
corpus (so the kill lands while papers are being replaced). EVTUI_BATCH_SENTENCES makes many small batches.

After each kill: open the library (recover() runs), audit it (DuckDB ids == Tantivy ids, nothing unfinished,
no orphan rows, sentence counts right, no duplicates on either side), `evtui stats --check` exits 0, then the
same command is re-run to completion and the library must equal a clean reference run exactly.
Sweeps: `evtui bench evidencebench --task all --method bm25` is killed, then `--resume` must finish it with the
metrics of an uninterrupted run.

    python benchmarks/crash_kill.py                 # 50 kills + 10 sweep kills (../shared corpus when present)
    python benchmarks/crash_kill.py --quick         # 10 + 3 on the bundled demo JATS articles

Prints one JSON summary; exits 1 on any failure.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

for _var in ("EVTUI_CRASH_AT", "EVTUI_FAULT_TRACE"):  # this process must never kill itself
    os.environ.pop(_var, None)

from evtui.config import Config  # noqa: E402
from evtui.library import Library, audit  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "datasets"
FIXTURES = ROOT / "tests" / "fixtures" / "core"
HOOKED = ("parse", "db_write", "index_commit", "mark_ready")
# One round of kinds; --kills N walks it round-robin (50 kills = 5 rounds).
ROUND = ("timed", "parse", "db_write", "timed", "index_commit", "mark_ready", "embed_timed", "recover",
         "embed_batch", "timed")
# `evtui embed` with smaller chunks, so a small library makes many committed chunks (the code path is the CLI's).
EMBED_CHUNK = 8
EMBED = ("import functools, sys, evtui.embed as e; from evtui.cli import main;"
         f" e.ensure_embeddings = functools.partial(e.ensure_embeddings, chunk={EMBED_CHUNK});"
         " sys.exit(main(['embed', '--json']))")


def evtui_cmd(*args: str) -> list[str]:
    return [sys.executable, "-m", "evtui.cli", *args]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("EVTUI_")}
    env.update(EVTUI_HOME=str(home), EVTUI_DEMO="false", EVTUI_CONFIG=str(home.parent / "config.toml"), **extra)
    return env


def run(cmd: list[str], env: dict[str, str], *, kill_after: float | None = None) -> tuple[int, str, float]:
    """(return code, stdout, seconds); with `kill_after`, SIGKILL it then unless it has exited."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        out, _ = proc.communicate(timeout=kill_after)
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate()
    return proc.returncode, out or "", time.perf_counter() - t0


def scalar(lib: Library, sql: str) -> Any:
    row = lib.store.con.execute(sql).fetchone()
    return row[0] if row else None


def open_lib(home: Path) -> Library:
    return Library(Config(home=home, demo=False))


def fingerprint(home: Path) -> dict[str, Any]:
    """The library's whole content, as digests: equal fingerprints mean equal libraries."""
    with open_lib(home) as lib:
        con = lib.store.con
        a = audit(lib)
        papers = con.execute("SELECT md5(string_agg(id || ':' || content_hash || ':' || n_sentences || ':' || state,"
                             " ',' ORDER BY id)), count(*) FROM papers").fetchone()
        sents = con.execute("SELECT md5(string_agg(id || ':' || md5(text), ',' ORDER BY id)), count(*)"
                            " FROM sentences").fetchone()
        ix = hashlib.md5("\n".join(sorted(lib.index.sentence_ids())).encode(), usedforsecurity=False).hexdigest()
        has_emb = scalar(lib, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'embeddings'")
        emb = con.execute("SELECT count(*), count(DISTINCT sentence_id) FROM embeddings").fetchone() if has_emb \
            else (0, 0)
    assert papers and sents and emb
    return {"papers": papers[1], "papers_md5": papers[0], "sentences": sents[1], "sentences_md5": sents[0],
            "index_md5": ix, "embeddings": emb[0], "embedded_sentences": emb[1], "audit_ok": a["ok"]}


def phase_of(trace: Path) -> str:
    """Where a timed kill landed: the last phase the process reported (startup: none yet)."""
    lines = trace.read_text().split() if trace.exists() else []
    return lines[-1] if lines else "startup"


def variant(src: list[Path], dest: Path) -> list[Path]:
    """A changed copy of the corpus (same paper ids, edited text: ' the ' -> ' THE ', same length so PubTator
    offsets stay valid) for the replace scenario. Only text-like files are edited; the rest are linked."""
    dest.mkdir(parents=True)
    out = []
    for i, path in enumerate(src):
        files = sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]
        target = dest / f"{i}-{path.name}"
        if path.is_dir():
            target.mkdir()
        for f in files:
            t = target / f.name if path.is_dir() else target
            raw = gzip.decompress(f.read_bytes()) if f.suffix == ".gz" else f.read_bytes()
            raw = raw.replace(b" the ", b" THE ") if i % 2 == 0 else raw
            t.write_bytes(gzip.compress(raw) if f.suffix == ".gz" else raw)
        out.append(target)
    return out


class Harness:
    def __init__(self, work: Path, corpus: list[Path], batch: int, rng: random.Random) -> None:
        self.work, self.corpus, self.batch, self.rng = work, corpus, batch, rng
        self.n = 0
        self.failures: list[str] = []
        self.b_corpus = variant(corpus, work / "corpus-b")
        self.ingest_args = ["ingest", *map(str, corpus), "--json"]
        self.ingest_b_args = ["ingest", *map(str, self.b_corpus), "--json"]
        # References: clean runs, traced so hooked kills can pick an n that the run reaches.
        self.ref_a, self.trace_a, self.seconds_a = self.reference("ref-a", [self.ingest_args])
        self.template_a = work / "ref-a" / "home"
        self.ref_b, self.trace_b, self.seconds_b = self.reference("ref-b", [self.ingest_args, self.ingest_b_args],
                                                                  trace_last=True)
        # Embedding is slow on 2 cores: a small library (the core fixtures, ~30 chunks), not the corpus.
        self.embed_ingest = ["ingest", str(FIXTURES), "--json"]
        self.ref_e, self.trace_e, self.seconds_e = self.reference("ref-e", [self.embed_ingest, ["EMBED"]],
                                                                  trace_last=True)
        self.template_e_ingested = work / "ref-e-ingested" / "home"
        self.reference("ref-e-ingested", [self.embed_ingest])

    def cmd(self, args: list[str]) -> list[str]:
        return [sys.executable, "-c", EMBED] if args == ["EMBED"] else evtui_cmd(*args)

    def reference(self, name: str, steps: list[list[str]], *, trace_last: bool = False
                  ) -> tuple[dict[str, Any], Counter[str], float]:
        home = self.work / name / "home"
        trace = self.work / name / "trace"
        seconds = 0.0
        for i, args in enumerate(steps):
            traced = trace_last and i == len(steps) - 1 or not trace_last
            env = env_for(home, EVTUI_BATCH_SENTENCES=str(self.batch),
                          **({"EVTUI_FAULT_TRACE": str(trace)} if traced else {}))
            rc, _out, seconds = run(self.cmd(args), env)
            if rc != 0:
                raise SystemExit(f"reference run {name} failed: {' '.join(args)} exited {rc}")
        return fingerprint(home), Counter(phase_of_lines(trace)), seconds

    # -- one kill ----------------------------------------------------------------------------------
    def kill(self, kind: str, replace: bool) -> dict[str, Any]:
        self.n += 1
        case = self.work / f"kill-{self.n:03d}"
        home = case / "home"
        embed = kind.startswith("embed")
        if embed:
            shutil.copytree(self.template_e_ingested, home)
            args, ref, counts, seconds = ["EMBED"], self.ref_e, self.trace_e, self.seconds_e
        elif replace:
            shutil.copytree(self.template_a, home)
            args, ref, counts, seconds = self.ingest_b_args, self.ref_b, self.trace_b, self.seconds_b
        else:
            args, ref, counts, seconds = self.ingest_args, self.ref_a, self.trace_a, self.seconds_a
        trace = case / "trace"
        env = env_for(home, EVTUI_BATCH_SENTENCES=str(self.batch), EVTUI_FAULT_TRACE=str(trace))
        phase = kind
        for _attempt in range(5):
            if kind in ("timed", "embed_timed"):
                # `evtui embed` spends its first second or two loading the model: aim past that.
                low = 0.4 if embed else 0.05
                rc, _, took = run(self.cmd(args), env, kill_after=self.rng.uniform(low * seconds, 0.95 * seconds))
                phase = "embed:" + phase_of(trace) if embed else phase_of(trace)
                seconds = min(seconds, took)  # finished first (a less loaded machine): aim earlier next time
            elif kind == "recover":
                # Leave pending papers behind, then kill the repair that the next open runs.
                n = self.rng.randint(1, max(1, counts["db_write"]))
                run(self.cmd(args), env_for(home, EVTUI_BATCH_SENTENCES=str(self.batch),
                                            EVTUI_CRASH_AT=f"index_commit:{n}"))
                rc, _, _ = run(evtui_cmd("stats", "--json"), env_for(home, EVTUI_CRASH_AT="recover:1"))
            else:
                hits = max(1, int(0.9 * ref_hits(kind, counts, ref)))
                env["EVTUI_CRASH_AT"] = f"{kind}:{self.rng.randint(1, hits)}"
                rc, _, _ = run(self.cmd(args), env)
            if rc == -signal.SIGKILL:
                break
            # It finished before the kill (or never reached the phase): start over on a fresh home.
            shutil.rmtree(home)
            if embed:
                shutil.copytree(self.template_e_ingested, home)
            elif replace:
                shutil.copytree(self.template_a, home)
            trace.unlink(missing_ok=True)
        result: dict[str, Any] = {"kind": kind, "phase": phase, "replace": replace, "killed": rc == -signal.SIGKILL}
        # 1. open (recover runs) and audit
        with open_lib(home) as lib:
            result["repaired_papers"] = len(lib.recovered)
            a = audit(lib)
        result["consistent_after_kill"] = a["ok"]
        result["problems"] = a["problems"]
        # 2. `evtui stats --check` works
        rc_stats, out, _ = run(evtui_cmd("stats", "--check", "--json"), env_for(home))
        result["stats_ok"] = rc_stats == 0 and json.loads(out or "{}").get("consistency", {}).get("consistent", False)
        # 3. re-run to completion: equal to the clean reference
        rc_again, _, _ = run(self.cmd(args), env_for(home, EVTUI_BATCH_SENTENCES=str(self.batch)))
        fp = fingerprint(home)
        result["rerun_ok"] = rc_again == 0 and fp == ref
        result["duplicates"] = fp["sentences"] - ref["sentences"] if fp["sentences"] > ref["sentences"] else 0
        if not result["rerun_ok"]:
            result["fingerprint"], result["reference"] = fp, ref
        ok = result["killed"] and result["consistent_after_kill"] and result["stats_ok"] and result["rerun_ok"]
        if not ok:
            self.failures.append(f"kill {self.n} ({kind}): {json.dumps(result, default=str)}")
        else:
            shutil.rmtree(case)
        return result


def phase_of_lines(trace: Path) -> list[str]:
    return trace.read_text().split() if trace.exists() else []


def ref_hits(kind: str, counts: Counter[str], ref: dict[str, Any]) -> int:
    """How often a clean run reaches the phase: papers for parse, batches (or chunks) otherwise."""
    if kind == "parse":
        return int(ref["papers"])
    if kind == "embed_batch":
        return max(1, int(ref["embeddings"]) // EMBED_CHUNK)
    return max(1, counts["db_write"])


# -- sweeps ----------------------------------------------------------------------------------------
def sweep_kills(work: Path, data: Path, kills: int, rng: random.Random) -> dict[str, Any]:
    args = ["bench", "evidencebench", "--data", str(data), "--task", "all", "--method", "bm25", "--json"]
    ref_home = work / "sweep-ref" / "home"
    rc, out, seconds = run(evtui_cmd(*args), env_for(ref_home))
    if rc != 0:
        raise SystemExit(f"reference sweep failed ({rc})")
    ref = [{k: r[k] for k in ("task", "n_items", "n_skipped", "aspect_recall", "per_item")} for r in json.loads(out)]
    n_items = sum(r["n_items"] for r in ref)
    rows: list[dict[str, Any]] = []
    failures: list[str] = []
    for i in range(kills):
        home = work / f"sweep-{i:02d}" / "home"
        timed = i % 2 == 0
        for _attempt in range(5):
            if timed:
                rc, _, _ = run(evtui_cmd(*args), env_for(home), kill_after=rng.uniform(0.1, 0.95 * seconds))
            else:
                rc, _, _ = run(evtui_cmd(*args), env_for(home, EVTUI_CRASH_AT=f"bench_item:{rng.randint(1, n_items)}"))
            if rc == -signal.SIGKILL:
                break
            shutil.rmtree(home.parent)
        with open_lib(home) as lib:
            a = audit(lib)
            kept = scalar(lib, "SELECT count(*) FROM run_items WHERE run_id IN"
                               " (SELECT id FROM runs WHERE status = 'running')") if scalar(
                lib, "SELECT count(*) FROM information_schema.tables WHERE table_name = 'run_items'") else 0
        bench_ok = True
        for bench_home in (home / "bench").glob("*") if (home / "bench").exists() else []:
            with open_lib(bench_home) as blib:
                bench_ok = bench_ok and audit(blib)["ok"]
        rc2, out2, _ = run(evtui_cmd(*args, "--resume"), env_for(home))
        got = [{k: r[k] for k in ("task", "n_items", "n_skipped", "aspect_recall", "per_item")}
               for r in json.loads(out2)] if rc2 == 0 else None
        rc3, out3, _ = run(evtui_cmd("bench", "runs", "--json"), env_for(home))
        statuses = Counter(r["status"] for r in json.loads(out3)) if rc3 == 0 else Counter()
        row = {"kill": "timed" if timed else "bench_item", "killed": rc == -signal.SIGKILL, "items_kept": kept,
               "library_ok": a["ok"] and bench_ok, "resume_ok": got == ref, "runs_status": dict(statuses)}
        # every run of the resumed sweep is done (a kill before the sweep started leaves nothing to resume)
        row["runs_done"] = statuses.get("running", 0) == 0
        if not (row["killed"] and row["library_ok"] and row["resume_ok"] and row["runs_done"]):
            failures.append(f"sweep kill {i}: {json.dumps(row)}")
        else:
            shutil.rmtree(home.parent)
        rows.append(row)
    return {"data": shown(data), "kills": len(rows), "killed_by_sigkill": sum(r["killed"] for r in rows),
            "items_per_sweep": n_items,
            "items_kept_over_all_kills": sum(r["items_kept"] for r in rows),
            "all_consistent": all(r["library_ok"] for r in rows),
            "resume_ok": sum(r["resume_ok"] for r in rows), "failures": failures,
            "by_kind": dict(Counter(r["kill"] for r in rows))}


def shown(path: Path) -> str:
    """A path as the commands in BENCHMARKS.md write it: relative to the checkout."""
    if path.is_relative_to(ROOT):
        return str(path.relative_to(ROOT))
    return f"../{path.relative_to(ROOT.parent)}" if path.is_relative_to(ROOT.parent) else str(path)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kills", type=int, default=None, help="kills of ingest/embed (default 50; --quick 10)")
    ap.add_argument("--sweep-kills", type=int, default=None, help="kills of a bench sweep (default 10; --quick 3)")
    ap.add_argument("--quick", action="store_true", help="few kills on the bundled demo JATS articles")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--batch-sentences", type=int, default=None, help="ingest batch size (default 2000; quick 300)")
    ap.add_argument("--keep", action="store_true", help="keep the temp dir (failed cases are always kept)")
    args = ap.parse_args()
    kills = args.kills if args.kills is not None else (10 if args.quick else 50)
    sweeps = args.sweep_kills if args.sweep_kills is not None else (3 if args.quick else 10)
    if args.quick:
        corpus = [ROOT / "data" / "demo" / "jats"]
    elif SHARED.exists():
        corpus = [SHARED / "scifact" / "corpus.jsonl", SHARED / "bc5cdr" / "CDR_TrainingSet.PubTator.txt",
                  SHARED / "pmc-jats"]  # its SOURCE.md is reported and skipped, in every run alike
    else:
        corpus = sorted((ROOT / "data" / "demo").glob("*.gz")) + [ROOT / "data" / "demo" / "jats"]
    eb_dev = SHARED / "evidencebench" / "evidencebench_dev_set.json"
    eb_data = eb_dev if eb_dev.exists() and not args.quick else FIXTURES / "evidencebench2.json"
    batch = args.batch_sentences or (300 if args.quick else 2000)
    rng = random.Random(args.seed)
    t0 = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="evtui-crash-"))
    h = Harness(work, corpus, batch, rng)
    # Every other round (and every fourth kill) kills an ingest that replaces an older version of the corpus.
    rows = [h.kill(ROUND[i % len(ROUND)], replace=(i // len(ROUND)) % 2 == 1 or i % 4 == 3) for i in range(kills)]
    sweep = sweep_kills(work, eb_data, sweeps, rng) if sweeps else None
    failures = h.failures + (sweep["failures"] if sweep else [])
    summary = {
        "command": " ".join(["python", "benchmarks/crash_kill.py", *sys.argv[1:]]),
        "corpus": [shown(p) for p in corpus],
        "corpus_papers": h.ref_a["papers"], "corpus_sentences": h.ref_a["sentences"],
        "batch_sentences": batch, "batches_per_ingest": h.trace_a["db_write"],
        "clean_ingest_seconds": round(h.seconds_a, 2),
        "kills": len(rows),
        "killed_by_sigkill": sum(r["killed"] for r in rows),
        "kills_by_kind": dict(Counter(r["kind"] for r in rows)),
        # hooked kills die at their phase; a timed kill is placed by the last phase the process reached
        "timed_kills_landed_in": dict(Counter(r["phase"] for r in rows if r["kind"].endswith("timed"))),
        "kills_during_replace": sum(r["replace"] for r in rows),
        "consistent_after_kill": sum(r["consistent_after_kill"] for r in rows),
        "stats_ok": sum(r["stats_ok"] for r in rows),
        "repaired_papers": sum(r["repaired_papers"] for r in rows),
        "kills_that_needed_repair": sum(r["repaired_papers"] > 0 for r in rows),
        "reingest_ok": sum(r["rerun_ok"] for r in rows),
        "duplicates_found": sum(r["duplicates"] for r in rows),
        "sweep": {k: v for k, v in sweep.items() if k != "failures"} if sweep else None,
        "failures": failures,
        "ok": not failures,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    print(json.dumps(summary, indent=2))
    if failures or args.keep:
        print(f"cases kept in {work}", file=sys.stderr)
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
