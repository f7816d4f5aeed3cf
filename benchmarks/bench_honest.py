"""What the honest result filter (evtui/honest.py) hides, and what it lets through.

Every SciFact train claim with evidence is searched with `best` (top 20, as the CLI and the app show by default)
twice: over the SciFact corpus, where its gold rationale sentences are, and over the 17 PMC JATS papers of
shared/datasets/pmc-jats, which are about other things (a library with nothing on the claim). Each rule is then
applied to the same rows:

- gold hidden: gold rationale sentences in the top 20 that the filter hides (of all gold in the top 20), and the
  claims that lose every one of theirs;
- off-topic: the rows still shown over the unrelated papers, and the claims shown nothing there (the filter's job).

    python benchmarks/bench_honest.py [--shared ../shared] [--home DIR] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))

from evtui.bench.driver import bench_library  # noqa: E402
from evtui.bench.scifact import paper_id  # noqa: E402
from evtui.config import Config, load_config  # noqa: E402
from evtui.honest import generic_words, honest  # noqa: E402
from evtui.library import Library  # noqa: E402
from evtui.models import Evidence, ParsedQuery, sentence_id  # noqa: E402
from evtui.request import SearchRequest  # noqa: E402
from evtui.search import Searcher  # noqa: E402

K = 20


def searched(lib: Library, claims: list[dict[str, Any]]) -> list[tuple[ParsedQuery, str, list[Evidence]]]:
    s = Searcher(lib)
    out = []
    for c in claims:
        res = s.run(SearchRequest(str(c["claim"]), k=K, method="best"))
        out.append((res.query, res.method, res.evidence))
    return out


def gold_ids(claim: dict[str, Any]) -> set[str]:
    # The corpus loader stores the title at position 0 and abstract sentence i at i + 1 (evtui/bench/scifact_ids.py).
    return {sentence_id(paper_id(d), i + 1) for d, evs in claim["evidence"].items() for ev in evs
            for i in ev["sentences"]}


def score(rule: dict[str, Any], claims: list[dict[str, Any]], on_topic: list, off_topic: list) -> dict[str, Any]:
    gold_top = gold_hidden = lost = with_gold = 0
    for c, (q, method, rows) in zip(claims, on_topic, strict=True):
        shown = {e.sentence.id for e in honest(rows, q.aspects, method, **rule).evidence}
        g = {e.sentence.id for e in rows} & gold_ids(c)
        gold_top += len(g)
        gold_hidden += len(g - shown)
        with_gold += bool(g)
        lost += bool(g) and not g & shown
    shown_off = empty_off = 0
    for q, method, rows in off_topic:
        kept = honest(rows, q.aspects, method, **rule).evidence
        shown_off += len(kept)
        empty_off += not kept
    return {"gold_in_top20": gold_top, "gold_hidden": gold_hidden, "claims_with_gold": with_gold,
            "claims_losing_all_gold": lost, "offtopic_rows_shown": shown_off,
            "offtopic_rows": sum(len(r) for _q, _m, r in off_topic), "offtopic_claims_empty": empty_off,
            "claims": len(claims)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--shared", type=Path, default=Path(__file__).resolve().parents[2] / "shared")
    ap.add_argument("--home", type=Path, default=None, help="where the benchmark libraries live (default: evtui's)")
    ap.add_argument("--limit", type=int, default=None)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args()
    from build_generic_words import document_frequencies

    data = args.shared / "datasets"
    home = args.home or load_config().home
    claims = [json.loads(x) for x in (data / "scifact" / "claims_train.jsonl").read_text().splitlines() if x.strip()]
    claims = [c for c in claims if c.get("evidence")][:args.limit]
    t0 = time.perf_counter()
    with bench_library("scifact", data / "scifact" / "corpus.jsonl", home) as lib:
        on_topic = searched(lib, claims)
    with Library(Config(home=home / "bench" / "honest-offtopic", demo=False)) as lib:
        lib.ingest([data / "pmc-jats"])
        off_topic = searched(lib, claims)
    df, n = document_frequencies(data / "scifact" / "corpus.jsonl")

    def generic(share: float) -> frozenset[str]:
        return frozenset(w for w, c in df.items() if c >= share * n)

    rules: dict[str, dict[str, Any]] = {
        "whole phrase only (before)": {"partial": False},
        "half of a concept's words": {"generic": frozenset()},
        "half, one of them specific (generic: in >= 1% of abstracts)": {"generic": generic(0.01)},
        "half, one of them specific (generic: >= 2%, shipped)": {},
        "half, one of them specific (generic: >= 5%)": {"generic": generic(0.05)},
    }
    assert generic(0.02) == generic_words(), "evtui/resources/generic_words.txt is stale: rebuild it"
    out = {name: score(rule, claims, on_topic, off_topic) for name, rule in rules.items()}
    if args.json:
        print(json.dumps(out, indent=1))
        return
    print(f"{len(claims)} SciFact train claims with evidence, `best` top {K}; {time.perf_counter() - t0:.0f} s\n")
    print("| rule | gold hidden | claims losing all their gold | off-topic rows shown | off-topic claims shown nothing |")
    print("|---|---|---|---|---|")
    for name, r in out.items():
        print(f"| {name} | {r['gold_hidden']} of {r['gold_in_top20']} | {r['claims_losing_all_gold']} of "
              f"{r['claims_with_gold']} | {r['offtopic_rows_shown']} of {r['offtopic_rows']} | "
              f"{r['offtopic_claims_empty']} of {r['claims']} |")


if __name__ == "__main__":
    main()
