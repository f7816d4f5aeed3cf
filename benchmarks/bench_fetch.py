"""What `evtui fetch` adds per paper beyond the network: a search for N papers fetched and stored from recorded
Europe PMC answers served on 127.0.0.1 (tests/europepmc_server.py), so the network costs ~0 and what is left is
the client's own work (building requests, reading and unpacking answers, parsing JSON, writing its files) and the
ingest of what arrived (the JATS loader, DuckDB, Tantivy), each timed apart. The server's own answering time is
subtracted from the client's. `--latency S` adds S seconds to every answer, as a slow network would, to show what
the polite concurrency makes of N papers.

    python benchmarks/bench_fetch.py [--papers 20] [--latency 0] [--concurrency 1] [--full-text]

Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--papers", type=int, default=20)
    ap.add_argument("--latency", type=float, default=0.0, help="seconds added to every answer (a slow network)")
    ap.add_argument("--concurrency", type=int, default=1,
                    help="requests at a time (evtui's default is 3; at 1 the server's time is subtracted exactly)")
    ap.add_argument("--full-text", action="store_true",
                    help="every hit open access with the recorded 800 KB JATS full text (else abstracts only)")
    args = ap.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-fetch-"))
    os.environ.update({"EVTUI_HOME": str(home), "EVTUI_DEMO": "false", "EVTUI_CONFIG": str(home / "none.toml")})
    from europepmc_server import europepmc_server

    from evtui import fetch
    from evtui.config import load_config
    from evtui.library import Library

    with europepmc_server() as srv, Library(load_config()) as lib:
        srv.delay = args.latency
        srv.any_full_text = args.full_text
        lib.config.europepmc_url = srv.url
        client = fetch.client_for(lib.config, concurrency=args.concurrency)
        query = "cancer AND OPEN_ACCESS:y" if args.full_text else "cancer"
        t0 = time.perf_counter()
        hits, _total = fetch.search(client, query, limit=args.papers)
        if args.full_text:  # the recorded open-access page has 10 hits: the rest of N from the "cancer" page, as OA
            more, _ = fetch.search(client, "cancer", limit=args.papers)
            for h in more:
                pmcid = h.record.get("pmcid") or f"PMC9{h.record['id']}"
                h.record = {**h.record, "isOpenAccess": "Y", "pmcid": pmcid, "doi": f"10.9999/bench.{pmcid[3:]}"}
            hits = (hits + more)[:args.papers]
        t1 = time.perf_counter()
        files, out = fetch.download(lib, client, hits)
        t2 = time.perf_counter()
        fetch.store(lib, files, out)
        t3 = time.perf_counter()
    n = len(hits)
    network = srv.served_s + args.latency * client.requests
    client_s = (t2 - t0) - network if args.latency == 0 and args.concurrency == 1 else None
    print(json.dumps({
        "papers": n, "fetched": len(out.fetched), "full_text": sum(f["full_text"] for f in out.fetched),
        "requests": client.requests, "latency_s": args.latency, "concurrency": client.concurrency,
        "search_s": round(t1 - t0, 3), "download_s": round(t2 - t1, 3), "ingest_s": round(t3 - t2, 3),
        "total_s": round(t3 - t0, 3),
        "server_answering_s": round(srv.served_s, 3),
        "client_ms_per_paper": round(1000 * client_s / n, 2) if client_s is not None else None,
        "ingest_ms_per_paper": round(1000 * (t3 - t2) / n, 1),
    }, indent=2))


if __name__ == "__main__":
    main()
