"""The verifier's figures: stance as `evtui judge CLAIM --paper ID --json` reports it, speed, and `evidential`'s α.

    python benchmarks/bench_verifier.py stance --shared ../shared/datasets        # SciFact calibration fold + Check-COVID dev
    python benchmarks/bench_verifier.py speed --fp32 --old /tmp/vtrain/c           # 20 sentences, 2 threads; + float form, 23 MB file
    python benchmarks/bench_verifier.py alpha --shared ../shared/datasets          # evidential: α by grouped CV
    python benchmarks/bench_verifier.py thresholds --shared ../shared/datasets     # a lever: thresholds for the target alone
    python benchmarks/bench_verifier.py cpu                                        # this CPU's int8 products vs model.json
    python benchmarks/bench_verifier.py gate --model DIR --demo-home /tmp/demohome # may a candidate replace the shipped?
    python benchmarks/bench_verifier.py paper-side [--model DIR]                   # a lever: a sentence takes its paper's side

stance: for every claim with evidence, each evidence paper is judged as the CLI does (`Searcher.search(claim,
k=10, paper=ID)` then the local judge); each gold rationale sentence is scored by the stance the judge gave it — a
rationale outside the judged top 10 or judged neutral is a miss. SciFact: the paper-grouped fold the verifier never
trained on (scripts/train_verifier.py `split == "cal"`; its thresholds were chosen on it, so these are in-sample
for the thresholds only — the cross-fitted figures are in model.json); Check-COVID dev: fully held out.
alpha: within-paper sentence retrieval for the same claims (gold = rationale sentences): `best`'s top 30 per
(claim, paper), re-ordered by rank relevance + α·(P(support) + P(refute)); α chosen on 4 claim-grouped folds and
measured on the fifth, against `best` itself (α = 0). Metrics: nDCG@10 and R@3 of the rationale sentences.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))


def _home() -> Path:
    from evtui.config import load_config

    return load_config().home


def scifact_cal_claims(shared: Path, nei: bool = False) -> list[dict]:
    """The claims of the verifier's held-out calibration fold (as train_verifier.py splits them); with `nei`, the
    claims without evidence too."""
    import train_verifier as tv

    claims = [json.loads(x) for x in (shared / "scifact" / "claims_train.jsonl").open()]
    uf = tv.UnionFind()
    for c in claims:
        for d in list(c["evidence"]) or [str(d) for d in c["cited_doc_ids"]]:
            uf.union(f"c{c['id']}", f"scifact:{d}")
    return [c for c in claims if (nei or c["evidence"]) and tv._fold(uf.find(f"c{c['id']}")) == 0]


def scifact_items(shared: Path) -> list[tuple[str, str, str, dict[int, str]]]:
    """(claim id, claim, paper id, {stored position: gold stance}) per evidence paper."""
    out = []
    for c in scifact_cal_claims(shared):
        for doc, sets in c["evidence"].items():
            gold = {}
            for s in sets:
                for i in s["sentences"]:
                    gold[i + 1] = "supports" if s["label"] == "SUPPORT" else "refutes"  # title is position 0
            out.append((str(c["id"]), c["claim"], f"scifact:{doc}", gold))
    return out


def checkcovid_items(shared: Path) -> list[tuple[str, str, str, dict[int, str]]]:
    out = []
    lab = {"SUPPORT": "supports", "REFUTE": "refutes"}
    for line in (shared / "check-covid" / "dev" / "covidCheck_dev_composed+extracted.json").open():
        r = json.loads(line)
        if r["label"] not in lab:
            continue
        gold = {e["sent_index"]: lab[r["label"]] for e in r["evidence_set"]}  # abstract indices: mapped later
        out.append((str(r["id"]), r["claim"], f"cord:{r['cord_id']}", gold))
    return out


def map_checkcovid(items: list, corpus: Path, library) -> list:  # type: ignore[no-untyped-def]
    """Abstract sentence indices -> stored positions, with the harness's own text-checked mapping."""
    from evtui.bench.checkcovid import gold_sentence_ids

    ids = gold_sentence_ids(corpus, library, {pid.removeprefix("cord:") for _c, _q, pid, _g in items})
    out = []
    for cid, claim, pid, gold in items:
        row = ids[pid.removeprefix("cord:")]
        mapped = {int(row[i].rsplit(":", 1)[1]): lab for i, lab in gold.items() if i < len(row) and row[i]}
        out.append((cid, claim, pid, mapped))
    return out


def stance_scores(pairs: list[tuple[str, str]]) -> dict:
    """(gold, predicted) over gold rationale sentences; a neutral or a missing prediction is a miss."""
    res: dict = {"n": len(pairs)}
    f1s = []
    for c in ("supports", "refutes"):
        tp = sum(1 for g, p in pairs if g == c and p == c)
        fp = sum(1 for g, p in pairs if g != c and p == c)
        fn = sum(1 for g, p in pairs if g == c and p != c)
        prec = tp / (tp + fp) if tp + fp else 0.0
        rec = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        res[c] = {"precision": round(prec, 3), "recall": round(rec, 3), "f1": round(f1, 3),
                  "gold": sum(1 for g, _ in pairs if g == c)}
        f1s.append(f1)
    res["macro_f1"] = round(float(np.mean(f1s)), 3)
    res["judged_top10"] = round(sum(1 for _, p in pairs if p != "missing") / max(1, len(pairs)), 3)
    res["side_taken"] = round(sum(1 for _, p in pairs if p in ("supports", "refutes")) / max(1, len(pairs)), 3)
    return res


def run_stance(library, items: list, k: int = 10, verifier=None) -> dict:  # type: ignore[no-untyped-def]
    """`verifier`: judge with this model (a candidate) instead of the shipped one, uncached — a candidate's version
    string may be another candidate's, so its verdicts must neither come from nor go to the judge cache."""
    from evtui.judge.local import LocalJudge
    from evtui.judge.service import judge_evidence, make_judge
    from evtui.search import Searcher

    searcher = Searcher(library)
    judge = make_judge(library, "local") if verifier is None else LocalJudge(library, verifier=verifier)
    pairs: list[tuple[str, str]] = []
    levels: list[tuple[int, bool]] = []
    t0 = time.perf_counter()
    for _cid, claim, pid, gold in items:
        if library.store.paper(pid) is None:
            continue
        res = searcher.search(claim, k=k, paper=pid)
        if verifier is None:
            js = judge_evidence(library, res.query, res.evidence, judge=judge, sink=lambda _t, _r: None)
        else:
            js = judge.judge(res.query, list(res.evidence))
        got = {e.sentence.position: j.stance for e, j in zip(res.evidence, js, strict=True)}
        for e, j in zip(res.evidence, js, strict=True):
            levels.append((j.level, e.sentence.position in gold))
        for pos, g in gold.items():
            pairs.append((g, got.get(pos, "missing")))
    out = stance_scores(pairs)
    by_level = {}
    for lv in range(6):
        xs = [g for level, g in levels if level == lv]
        if xs:
            by_level[lv * 20] = {"n": len(xs), "gold_rate": round(float(np.mean(xs)), 3)}
    out["gold_rate_by_score"] = by_level
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def cmd_stance(args: argparse.Namespace) -> None:
    from evtui.bench.driver import bench_library

    home = args.home or _home()
    report = {}
    lib = bench_library("scifact", args.shared / "scifact" / "corpus.jsonl", home)
    try:
        report["scifact_cal"] = run_stance(lib, scifact_items(args.shared))
    finally:
        lib.close()
    corpus = args.shared / "check-covid" / "corpus.json"
    lib = bench_library("checkcovid", corpus, home)
    try:
        report["checkcovid_dev"] = run_stance(lib, map_checkcovid(checkcovid_items(args.shared), corpus, lib))
    finally:
        lib.close()
    print(json.dumps(report, indent=1))


def collect_stance(library, items: list, k: int = 10, verifier=None) -> list[dict]:  # type: ignore[no-untyped-def]
    """As run_stance, but each judged sentence's probabilities: rows of (claim, gold label or None, P(support),
    P(refute), relevance level > 0); a gold rationale outside the top k is a row with no probabilities (a miss)."""
    from evtui.judge.local import LocalJudge
    from evtui.search import Searcher

    searcher = Searcher(library)
    judge = LocalJudge(library, verifier=verifier)  # called directly: a cached verdict would carry no probabilities
    seen: list = []
    inner = judge._stances  # type: ignore[attr-defined]

    def stances(query, evidence):  # type: ignore[no-untyped-def]
        out = inner(query, evidence)
        seen[:] = out
        return out

    judge._stances = stances  # type: ignore[attr-defined]
    rows: list[dict] = []
    for cid, claim, pid, gold in items:
        if library.store.paper(pid) is None:
            continue
        res = searcher.search(claim, k=k, paper=pid)
        js = judge.judge(res.query, list(res.evidence))
        judged = set()
        for e, j, sp in zip(res.evidence, js, seen, strict=True):
            judged.add(e.sentence.position)
            rows.append({"claim": cid, "paper": pid, "gold": gold.get(e.sentence.position), "ps": sp.p_support,
                         "pr": sp.p_refute, "relevant": j.level > 0})
        rows += [{"claim": cid, "paper": pid, "gold": g, "ps": None, "pr": None, "relevant": False}
                 for pos, g in gold.items() if pos not in judged]
    return rows


def decide(row: dict, th_s: float, th_r: float) -> str:
    """Verifier.decide, and the judge's rule that a sentence of no relevance takes no side; "missing" for a gold
    rationale outside the judged top k (a miss, as in `run_stance`)."""
    ps, pr = row["ps"], row["pr"]
    if ps is None:
        return "missing"
    if not row["relevant"]:
        return "neutral"
    if pr >= th_r and pr > ps:
        return "refutes"
    if ps >= th_s and ps >= pr:
        return "supports"
    return "neutral"


def at(rows: list[dict], th_s: float, th_r: float) -> dict:
    """The target's measure on gold rationales, and how often a judged non-rationale sentence is given a side."""
    return scored(rows, lend_paper_side(rows, th_s, th_r))


def scored(rows: list[dict], dec: list[str]) -> dict:
    """`stance_scores` of the decisions on gold rationales, and the share of judged non-rationale sentences given a
    side."""
    out = stance_scores([(r["gold"], d) for r, d in zip(rows, dec, strict=True) if r["gold"]])
    other = [d for r, d in zip(rows, dec, strict=True) if not r["gold"] and r["ps"] is not None]
    out["side_on_non_rationale"] = round(sum(x != "neutral" for x in other) / max(1, len(other)), 3)
    return out


GRID = [round(x, 2) for x in np.arange(0.30, 0.96, 0.01)]


def best_setting(rows: list[dict], settings: list[tuple], min_refutes: float = 0.85,
                 min_supports: float = 0.90) -> tuple:
    """Of `settings` (`lend_paper_side`'s arguments after the rows), the one with the best macro-F1 on gold rationales
    whose refutes and supports precision clear the floors (the issue's precision target; no cap on sides given to
    other sentences); (0.95, 0.95) when none does."""
    gold = [r for r in rows if r["gold"]]
    best: tuple[float, tuple] | None = None
    for st in settings:
        # thresholds alone decide each sentence by itself: the gold rows suffice (~10x fewer)
        use = gold if len(st) < 3 or st[2] is None else rows
        m = stance_scores([(r["gold"], d) for r, d in zip(use, lend_paper_side(use, *st), strict=True) if r["gold"]])
        if m["refutes"]["precision"] < min_refutes or m["supports"]["precision"] < min_supports:
            continue
        if best is None or m["macro_f1"] > best[0]:
            best = (m["macro_f1"], st)
    return best[1] if best else (0.95, 0.95)


def choose(rows: list[dict], min_refutes: float = 0.85, min_supports: float = 0.90) -> tuple[float, float]:
    """The thresholds alone, chosen by `best_setting` over GRID."""
    return best_setting(rows, [(a, b) for a in GRID for b in GRID], min_refutes, min_supports)  # type: ignore[return-value]


def cv_settings(sf: list[dict], cc: list[dict], settings: list[tuple], min_refutes: float = 0.85) -> dict:
    """A setting chosen on four claim-grouped folds of the SciFact fold and scored on the fifth; chosen on the whole
    fold, applied unchanged to Check-COVID dev."""
    folds = {c: int(hashlib.md5(c.encode()).hexdigest(), 16) % 5 for c in sorted({r["claim"] for r in sf})}
    held: list[dict] = []
    dec: list[str] = []
    chosen = []
    for f in range(5):
        st = best_setting([r for r in sf if folds[r["claim"]] != f], settings, min_refutes)
        chosen.append(st)
        te = [r for r in sf if folds[r["claim"]] == f]
        held += te
        dec += lend_paper_side(te, *st)
    st_all = best_setting(sf, settings, min_refutes)
    return {"per_fold": chosen, "scifact_fold0_cv": scored(held, dec), "on_all_of_fold0": st_all,
            "checkcovid_dev": scored(cc, lend_paper_side(cc, *st_all))}


def collect_both(shared: Path, home: Path, verifier=None) -> tuple[list[dict], list[dict]]:  # type: ignore[no-untyped-def]
    """`collect_stance` rows of the SciFact fold and of Check-COVID dev."""
    from evtui.bench.driver import bench_library

    lib = bench_library("scifact", shared / "scifact" / "corpus.jsonl", home)
    try:
        sf = collect_stance(lib, scifact_items(shared), verifier=verifier)
    finally:
        lib.close()
    corpus = shared / "check-covid" / "corpus.json"
    lib = bench_library("checkcovid", corpus, home)
    try:
        cc = collect_stance(lib, map_checkcovid(checkcovid_items(shared), corpus, lib), verifier=verifier)
    finally:
        lib.close()
    return sf, cc


def cmd_thresholds(args: argparse.Namespace) -> None:
    """A lever: thresholds chosen for the target's measure alone (precision floors on gold rationales, no cap on
    sides given to other sentences), by claim-grouped 5-fold CV on the SciFact fold, then applied unchanged to
    Check-COVID dev; against the shipped thresholds."""
    from evtui.verify.model import default_verifier

    sf, cc = collect_both(args.shared, args.home or _home())
    shipped = default_verifier().thresholds
    report: dict = {"shipped": {"thresholds": shipped, "scifact_fold0": at(sf, shipped["supports"], shipped["refutes"]),
                                "checkcovid_dev": at(cc, shipped["supports"], shipped["refutes"])}}
    plain = [(a, b) for a in GRID for b in GRID]
    for floor in args.refutes_floors:  # the refutes precision asked of the fitting folds
        report[f"precision_floors_only@refutes>={floor}"] = cv_settings(sf, cc, plain, floor)
    print(json.dumps(report, indent=1))


def lend_paper_side(rows: list[dict], th_s: float, th_r: float, tau: float | None = None,
                    mode: str = "lean") -> list[str]:
    """`decide` per row, then a lever: within one (claim, paper), a judged neutral sentence that bears on the claim
    (relevant, P(support) + P(refute) >= tau) takes the side of the paper's most probable sided sentence; "lean":
    only when its own more probable side is that one; "unanimous": only when the paper's sided sentences agree; any
    other mode: every such sentence."""
    dec = [decide(r, th_s, th_r) for r in rows]
    if tau is None:
        return dec
    groups: dict[tuple, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["claim"], r["paper"]), []).append(i)
    for idx in groups.values():
        sided = [(max(rows[i]["ps"], rows[i]["pr"]), dec[i]) for i in idx if dec[i] in ("supports", "refutes")]
        if not sided or (mode == "unanimous" and len({d for _, d in sided}) > 1):
            continue
        side = max(sided)[1]
        for i in idx:
            r = rows[i]
            if dec[i] != "neutral" or not r["relevant"] or r["ps"] + r["pr"] < tau:
                continue
            if mode == "lean" and ("supports" if r["ps"] >= r["pr"] else "refutes") != side:
                continue
            dec[i] = side
    return dec


def cmd_paper_side(args: argparse.Namespace) -> None:
    """A lever on the judge: a sentence takes its paper's side (`lend_paper_side`). Thresholds alone, and thresholds
    with (tau, mode), each chosen by `cv_settings` under the issue's precision floors (refutes >= 0.85, supports >=
    0.90)."""
    from evtui.verify.model import Verifier

    verifier = Verifier(args.model) if args.model else Verifier()
    sf, cc = collect_both(args.shared, args.home or _home(), verifier)
    grid = [round(x, 2) for x in np.arange(0.40, 0.96, 0.05)]
    plain = [(a, b) for a in grid for b in grid]
    lent = plain + [(a, b, t, m) for a in grid for b in grid for t in (0.3, 0.5, 0.7) for m in ("lean", "unanimous")]
    report: dict = {"model": verifier.version}
    for name, settings in (("thresholds_only", plain), ("paper_side", lent)):
        report[name] = cv_settings(sf, cc, settings)
        print(name, json.dumps(report[name]), flush=True)
    print(json.dumps(report, indent=1))


def cmd_speed(args: argparse.Namespace) -> None:
    """20 sentences against one claim through `Verifier.verify` (tokenising included), 2 threads. Forms are timed in
    interleaved rounds so that other jobs' load falls on all of them alike; the load average is printed with them."""
    import os

    from evtui.verify.adapter import AdapterModel
    from evtui.verify.model import MODEL_DIR, Verifier

    forms = {"shipped": Verifier(threads=2)}
    if args.fp32:  # the same adapter with float32 matrix products (the form before int8_matmuls)
        v = Verifier(threads=2)
        v._logits = AdapterModel(MODEL_DIR, v.manifest, 2, int8_activations=False).logits
        forms["adapter_fp32"] = v
    if args.old:  # a self-contained ONNX verifier folder (model.json with "file"), e.g. the 23 MB evtui-verifier-1
        forms["old"] = Verifier(args.old, threads=2)
    claim = "Vitamin D supplementation reduces the risk of hip fractures in older adults."
    sents = [f"In {n} randomized trials, vitamin D at 700-800 IU/d reduced the risk of hip fracture by {n}% "
             f"(relative risk 0.7{n % 10}; 95% CI 0.6 to 0.9) compared with calcium or placebo." for n in range(20)]
    times: dict[str, list[float]] = {name: [] for name in forms}
    load = os.getloadavg()[0]
    for v in forms.values():
        v.verify(claim, sents)
    for _ in range(args.repeat):
        for name, v in forms.items():
            t = time.perf_counter()
            v.verify(claim, sents)
            times[name].append(time.perf_counter() - t)
    for name, ts in times.items():
        print(json.dumps({"form": name, "sentences": 20, "p50_ms": round(1000 * float(np.median(ts)), 1),
                          "min_ms": round(1000 * min(ts), 1), "max_ms": round(1000 * max(ts), 1),
                          "repeat": args.repeat, "load_1min": [round(load, 2), round(os.getloadavg()[0], 2)]}))


def _fold(key: str, k: int = 5) -> int:
    return int(hashlib.sha1(key.encode()).hexdigest(), 16) % k


def _ndcg(rels: list[int], ngold: int, k: int = 10) -> float:
    """Binary nDCG@k; the ideal ranking has every gold sentence, also those the pool missed."""
    dcg = sum(r / np.log2(i + 2) for i, r in enumerate(rels[:k]))
    idcg = sum(1 / np.log2(i + 2) for i in range(min(ngold, k)))
    return dcg / idcg if idcg else 0.0


def cmd_alpha(args: argparse.Namespace) -> None:
    from evtui.bench.driver import bench_library
    from evtui.search import Searcher
    from evtui.verify.evidential import POOL
    from evtui.verify.model import default_verifier

    home = args.home or _home()
    v = default_verifier()
    report = {}
    grid = [round(a, 2) for a in np.arange(0, 2.01, 0.1)]
    for name, corpus, items in (
            ("scifact_cal", args.shared / "scifact" / "corpus.jsonl", scifact_items(args.shared)),
            ("checkcovid_dev", args.shared / "check-covid" / "corpus.json", checkcovid_items(args.shared))):
        lib = bench_library(name.split("_")[0], corpus, home)
        if name == "checkcovid_dev":
            items = map_checkcovid(items, corpus, lib)
        rows = []
        try:
            s = Searcher(lib)
            for cid, claim, pid, gold in items:
                if lib.store.paper(pid) is None:
                    continue
                res = s.search(claim, k=POOL, paper=pid)
                if not res.evidence:
                    continue
                p = v.probabilities(res.query.text, [e.sentence.text for e in res.evidence],
                                    lib.store.previous_texts([e.sentence.id for e in res.evidence]))
                rel = [1 if e.sentence.position in gold else 0 for e in res.evidence]
                rows.append((cid.split("_")[0], np.array(rel), p[:, 0] + p[:, 1], len(gold)))
        finally:
            lib.close()

        def score(alpha: float, sel: list) -> tuple[float, float]:
            nd, r3 = [], []
            for _g, rel, side, ngold in sel:
                n = len(rel)
                sc = (1.0 - np.arange(n) / max(1, n)) + alpha * side
                order = np.argsort(-sc, kind="stable")
                ranked = list(rel[order])
                nd.append(_ndcg(ranked, ngold))
                r3.append(sum(ranked[:3]) / max(1, ngold))
            return float(np.mean(nd)), float(np.mean(r3))

        folds = [_fold(r[0]) for r in rows]
        chosen, cv_nd, cv_r3, base_nd, base_r3 = [], [], [], [], []
        for f in range(5):
            tr = [r for r, g in zip(rows, folds, strict=True) if g != f]
            te = [r for r, g in zip(rows, folds, strict=True) if g == f]
            if not te:
                continue
            a = max(grid, key=lambda x: score(x, tr)[0])
            chosen.append(a)
            nd, r3 = score(a, te)
            b_nd, b_r3 = score(0.0, te)
            cv_nd += [nd] * len(te)
            cv_r3 += [r3] * len(te)
            base_nd += [b_nd] * len(te)
            base_r3 += [b_r3] * len(te)
        report[name] = {"queries": len(rows), "alpha_per_fold": chosen,
                        "best": {"ndcg@10": round(float(np.mean(base_nd)), 4), "r@3": round(float(np.mean(base_r3)), 4)},
                        "evidential_cv": {"ndcg@10": round(float(np.mean(cv_nd)), 4),
                                          "r@3": round(float(np.mean(cv_r3)), 4)},
                        "by_alpha_all": {str(a): [round(x, 4) for x in score(a, rows)] for a in (0.0, 0.5, 1.0, 2.0)}}
    print(json.dumps(report, indent=1))


def cmd_pipeline(args: argparse.Namespace) -> None:
    """The official SciFact pipeline on the calibration-fold claims (NEI claims included): papers per claim and the
    paper-level thresholds chosen by claim-grouped 5-fold CV on label-only F1, against the shipped defaults."""
    from evtui.bench.driver import bench_library
    from evtui.bench.scifact_predict import DEFAULT_PAPERS, PAPER_THRESHOLDS, to_prediction
    from evtui.bench.scifact_verify import score
    from evtui.judge import claims as vc
    from evtui.verify.model import default_verifier

    home = args.home or _home()
    claims = scifact_cal_claims(args.shared, nei=True)
    v = default_verifier()
    t0 = time.perf_counter()
    if args.cache and args.cache.exists():  # the verdicts of an earlier run (same library, model and claims)
        cached = [_verdict_from_json(d) for d in json.loads(args.cache.read_text())]
        if {c.model for c in cached} != {v.version}:  # the verdicts of another model would measure that model
            raise SystemExit(f"{args.cache} holds verdicts of {sorted({c.model for c in cached})}, not {v.version}")
    else:
        lib = bench_library("scifact", args.shared / "scifact" / "corpus.jsonl", home)
        try:
            cached = pipeline_verdicts(lib, claims, v, args.max_papers)
        finally:
            lib.close()
        if args.cache:
            args.cache.write_text(json.dumps([_verdict_to_json(x) for x in cached]))
    per_claim = (time.perf_counter() - t0) / max(1, len(claims))
    if len(cached) != len(claims):
        raise SystemExit(f"{args.cache} holds {len(cached)} verdicts for {len(claims)} claims")

    def predict_with(papers_of: object) -> list[dict]:
        out = []
        for c, verdict in zip(claims, cached, strict=True):
            papers = papers_of(verdict.papers)  # type: ignore[operator]
            out.append(to_prediction(c["id"], vc.ClaimVerdict(verdict.query, papers)))
        return out

    def predict(n: int, th_s: float, th_r: float) -> list[dict]:
        return predict_top_n(claims, cached, n, th_s, th_r)

    def predict_tiered(n: int, th_s: float, th_r: float, th2: float) -> list[dict]:
        """The first paper at (th_s, th_r), papers 2..n only where a side clears the stricter th2."""
        return predict_with(lambda ps: [vc.relabel(p, th_s, th_r) if i == 0 else vc.relabel(p, th2, th2)
                                        for i, p in enumerate(ps[:n])])

    def predict_strongest(n: int, th_s: float, th_r: float, gamma: float) -> list[dict]:
        """Of the top n papers, only the one whose side is most probable (less gamma per rank below the first)."""
        def pick(ps: list) -> list:
            labelled = [(i, vc.relabel(p, th_s, th_r)) for i, p in enumerate(ps[:n])]
            sided = [(q.confidence - gamma * i, q) for i, q in labelled if q.label != "NEI"]
            return [max(sided, key=lambda t: t[0])[1]] if sided else []
        return predict_with(pick)

    ths = tuple(args.grid)
    families = {
        "top_n": (predict, [(n, a, b) for n in range(1, args.max_papers + 1) for a in ths for b in ths]),
        "tiered": (predict_tiered, [(n, a, b, t) for n in range(2, args.max_papers + 1) for a in ths for b in ths
                                    for t in (0.8, 0.9, 0.95, 0.98)]),
        "strongest": (predict_strongest, [(n, a, b, g) for n in range(2, args.max_papers + 1) for a in ths
                                          for b in ths for g in (0.0, 0.05, 0.1, 0.2)]),
    }
    results: dict[str, dict] = {}
    for fam in args.families:
        fn, grid = families[fam]
        results[fam] = choose_by_cv(claims, {g: fn(*g) for g in grid})
        print(fam, json.dumps(results[fam]), flush=True)
    default = score(claims, predict(3, v.thresholds["supports"], v.thresholds["refutes"]))
    shipped = score(claims, predict(DEFAULT_PAPERS, *PAPER_THRESHOLDS))  # what `evtui verify --claims` uses now
    d4 = {k: round(x["f1"], 4) for k, x in default.items() if isinstance(x, dict) and "f1" in x}
    print(json.dumps({"claims": len(claims), "with_evidence": sum(1 for c in claims if c["evidence"]),
                      "seconds_per_claim": round(per_claim, 3), "families": results,
                      "default_3_papers_model_thresholds_f1": d4,
                      f"shipped_{DEFAULT_PAPERS}_paper_{PAPER_THRESHOLDS}_f1": {
                          k: round(x["f1"], 4) for k, x in shipped.items() if isinstance(x, dict) and "f1" in x}},
                     indent=1))


def pipeline_verdicts(lib, claims: list[dict], verifier, max_papers: int) -> list:  # type: ignore[no-untyped-def]
    """Per claim: the verdict of its top `max_papers` papers, with every verified sentence's probabilities."""
    from evtui.judge import claims as vc
    from evtui.search import Searcher

    searcher = Searcher(lib)
    out = []
    for c in claims:
        t = time.perf_counter()
        out.append(vc.verify_claim(lib, c["claim"], papers=max_papers, searcher=searcher, verifier=verifier,
                                   keep_probs=True))
        out[-1].notes.append(f"{time.perf_counter() - t:.3f}")
    return out


def predict_top_n(claims: list[dict], verdicts: list, n: int, th_s: float, th_r: float) -> list[dict]:
    """Official predictions from each claim's first n papers, re-labelled at the paper thresholds (th_s, th_r)."""
    from evtui.bench.scifact_predict import to_prediction
    from evtui.judge import claims as vc

    return [to_prediction(c["id"], vc.ClaimVerdict(v.query, [vc.relabel(p, th_s, th_r) for p in v.papers[:n]]))
            for c, v in zip(claims, verdicts, strict=True)]


def choose_by_cv(claims: list[dict], memo: dict) -> dict:
    """The setting (a key of `memo`: setting -> predictions for every claim) with the best abstract label-only F1 on
    four claim folds, scored on the fifth; the official metrics of those out-of-fold predictions."""
    from evtui.bench.scifact_verify import score

    folds = [_fold(str(c["id"])) for c in claims]
    cv_preds: dict[int, dict] = {}
    chosen = []
    for f in range(5):
        tr = [i for i, g in enumerate(folds) if g != f]

        def f1(setting: tuple, idx: list[int] = tr) -> float:
            preds = memo[setting]
            return score([claims[i] for i in idx], [preds[i] for i in idx])["abstract_label_only"]["f1"]

        best = max(memo, key=f1)
        chosen.append(best)
        for i, g in enumerate(folds):
            if g == f:
                cv_preds[i] = memo[best][i]
    cvf = score(claims, [cv_preds[i] for i in range(len(claims))])
    return {"cv_chosen": chosen,
            "cv_f1": {k: round(x["f1"], 4) for k, x in cvf.items() if isinstance(x, dict) and "f1" in x}}


def _verdict_to_json(v) -> dict:  # type: ignore[no-untyped-def]
    from dataclasses import asdict

    return {"query": v.query, "model": v.model, "notes": v.notes, "papers": [asdict(p) for p in v.papers]}


def _verdict_from_json(d: dict):  # type: ignore[no-untyped-def]
    from evtui.judge import claims as vc

    papers = [vc.PaperVerdict(**{**p, "rationales": [vc.Rationale(**r) for r in p["rationales"]],
                                 "scored": [vc.Rationale(**r) for r in p["scored"]]}) for p in d["papers"]]
    return vc.ClaimVerdict(d["query"], papers, model=d["model"], notes=d["notes"])


def cmd_cpu(args: argparse.Namespace) -> None:
    """The shipped verifier on this CPU: its int8 products (and float ones) on the held-out SciFact calibration pairs,
    scored with the shipped temperature and thresholds, to compare with model.json's `metrics` (int8 kernels differ
    between CPUs, e.g. with and without VNNI)."""
    import train_verifier as tv

    from evtui.verify.adapter import AdapterModel
    from evtui.verify.model import MODEL_DIR, Verifier

    cal = [e for e in tv.build_examples(args.shared, aug=True) if e["split"] == "cal"]
    manifest = json.loads((MODEL_DIR / "model.json").read_text())
    encoder = Verifier()
    report: dict = {"pairs": len(cal), "recorded": manifest["metrics"]["scifact_cal_insample_thresholds"]}
    logits = {}
    for name, int8 in (("int8", True), ("float32", False)):
        runtime = AdapterModel(MODEL_DIR, manifest, int8_activations=int8)
        logits[name] = tv.predict_with(runtime, encoder._encode, cal)
        report[name] = tv.evaluate(logits[name], cal, manifest["temperature"], manifest["thresholds"])
    report["argmax_agreement"] = round(float((logits["int8"].argmax(1) == logits["float32"].argmax(1)).mean()), 3)
    print(json.dumps(report, indent=1))


def cmd_offtopic(args: argparse.Namespace) -> None:
    """Findings about something else: each held-out claim (SciFact fold 0, Check-COVID dev) against two gold rationale
    sentences of other held-out claims' papers, drawn at random (seed 0) and, harder, the two that share most words
    with the claim (what a search shows beside the real evidence). A side taken on the random ones is wrong; on the
    nearest ones mostly (another paper's finding may bear on the claim, more often in Check-COVID, all on COVID-19).
    The held-out pairs of `stance` hold no such pair (their neutrals come from the claim's own abstract).
    `--model DIR`: another verifier folder (model.json + adapter.safetensors), e.g. an earlier version from git."""
    from evtui.verify.model import Verifier

    if args.write_pairs:  # the pairs alone, e.g. for train_verifier_teacher.py --extra
        import gzip

        with gzip.open(args.write_pairs, "wt") as fh:
            for e in offtopic_pairs(args.shared):
                fh.write(json.dumps(e) + "\n")
        return
    print(json.dumps(offtopic_report(args.shared, Verifier(args.model) if args.model else Verifier()), indent=1))


PROBES = ROOT / "benchmarks" / "data" / "direction_probes.jsonl"


def cmd_probes(args: argparse.Namespace) -> None:
    """The direction of a result in its plainest wording: 50 hand-written (claim, sentence) pairs whose side no reader
    would dispute ("associated with a lower risk of colorectal cancer" supports "Aspirin reduces the risk of
    colorectal cancer"; "no effect" refutes a claimed effect, as SciFact labels it). Written for stop 20, after a
    candidate that passed every other rule read that aspirin sentence as refuting. Not a benchmark: a floor."""
    from evtui.verify.model import Verifier

    print(json.dumps(probes_report(Verifier(args.model) if args.model else Verifier()), indent=1))


def probes_report(verifier) -> dict:  # type: ignore[no-untyped-def]
    """Sides taken on the direction probes, right and wrong, and how often the likelier side is the right one."""
    rows = [json.loads(x) for x in PROBES.open()]
    out = {"model": verifier.manifest["version"], "pairs": len(rows), "sides": 0, "wrong_sides": 0, "leans_right": 0,
           "wrong": []}
    for r in rows:
        (v,) = verifier.verify(r["claim"], [r["sentence"]])
        out["leans_right"] += ("supports" if v.p_support > v.p_refute else "refutes") == r["label"]
        if v.stance != "neutral":
            out["sides"] += 1
            if v.stance != r["label"]:
                out["wrong_sides"] += 1
                out["wrong"].append(f"{v.stance} {max(v.p_support, v.p_refute):.2f}: {r['sentence']}")
    return out


def offtopic_pairs(shared: Path) -> list[dict]:
    """`offtopic`'s pairs, in order: for each held-out split and draw, each claim with the two gold findings picked
    from other claims' papers (a finding's own record, with `claim` replaced and `kind` = "<split>-<draw>")."""
    import random

    import train_verifier as tv

    exs = tv.build_examples(shared, aug=True)
    rng = random.Random(0)
    out = []
    for split in ("cal", "ccdev"):
        gold = [e for e in exs if e["split"] == split and e["kind"] == "gold" and e["label"] != "neutral"]
        for kind in ("random", "nearest"):
            for claim, paper in sorted({(e["claim"], e["paper"]) for e in gold}):
                if kind == "random":
                    picked = rng.sample([g for g in gold if g["paper"] != paper and g["claim"] != claim], 2)
                else:  # the same nearest findings that train_verifier --near-negatives mines for training claims
                    picked = tv.nearest_findings(claim, paper, gold, 2)
                out += [{**e, "claim": claim, "label": "neutral", "kind": f"{split}-{kind}"} for e in picked]
    return out


def offtopic_report(shared: Path, verifier) -> dict:  # type: ignore[no-untyped-def]
    """`offtopic`'s figures for one verifier: per split and draw, the pairs and the sides given."""
    report: dict = {"model": verifier.manifest["version"]}
    names = {"cal": "scifact_cal", "ccdev": "checkcovid_dev"}
    for e in offtopic_pairs(shared):
        split, kind = e["kind"].split("-")
        row = report.setdefault(f"{names[split]}_{kind}", {"pairs": 0, "supports": 0, "refutes": 0})
        stance = verifier.decide(verifier.probabilities(e["claim"], [e["sentence"]], [e["prev"]])[0])
        row["pairs"] += 1
        if stance in ("supports", "refutes"):
            row[stance] += 1
    for key, row in report.items():
        if key != "model":
            row["given_a_side"] = round((row["supports"] + row["refutes"]) / row["pairs"], 3)
    return report


# What a new verifier must do to replace the shipped one, fixed before candidates are measured. Stop 18's candidates
# read sides better on gold evidence and gave more sides to other papers' findings; a confident wrong side is the
# error issue 13 ranks worst, so no single figure can carry a release.
GATE_TOLERANCE = 0.01  # a figure may move by this much the wrong way (a few pairs of ~200)
GATE_GAIN = 0.02  # and some figure of the target's must improve by this much
REFUTES_FLOOR = 0.85  # issue 13's refutes precision (or the shipped model's, if that is lower)
DEMO_CLAIMS = ("Vitamin D supplementation reduces fracture risk", "Aspirin reduces the risk of colorectal cancer",
               "Statins reduce cardiovascular mortality", "Vitamin E supplementation prevents prostate cancer",
               "Exercise improves depression symptoms")


def release_checks(shipped: dict, candidate: dict) -> dict:
    """Each rule of the release gate with both figures; `ship` only when every rule holds. Reports as `gate_report`
    writes them: {"stance": {split: stance_scores}, "offtopic": offtopic_report, "pipeline": {"cv_f1": ...}}."""
    checks: list[dict] = []

    def rule(name: str, ok: bool, was: float, now: float, why: str) -> None:
        checks.append({"check": name, "ok": bool(ok), "shipped": was, "candidate": now, "rule": why})

    gained = []
    for split in ("scifact_cal", "checkcovid_dev"):
        s, c = shipped["stance"][split], candidate["stance"][split]
        rule(f"stance macro-F1, {split}", c["macro_f1"] >= s["macro_f1"] - GATE_TOLERANCE, s["macro_f1"],
             c["macro_f1"], f"not below the shipped by more than {GATE_TOLERANCE}")
        floor = min(REFUTES_FLOOR, s["refutes"]["precision"])
        rule(f"refutes precision, {split}", c["refutes"]["precision"] >= floor, s["refutes"]["precision"],
             c["refutes"]["precision"], f">= {floor}")
        gained.append(c["macro_f1"] - s["macro_f1"])
    for key in sorted(k for k in shipped["offtopic"] if k != "model"):
        was, now = shipped["offtopic"][key]["given_a_side"], candidate["offtopic"][key]["given_a_side"]
        rule(f"sides given to other papers' findings, {key}", now <= was + GATE_TOLERANCE, was, now,
             f"not above the shipped by more than {GATE_TOLERANCE}")
    was, now = (r["pipeline"]["cv_f1"]["abstract_label_only"] for r in (shipped, candidate))
    rule("SciFact pipeline label-only F1 (claim-grouped CV)", now >= was - GATE_TOLERANCE, was, now,
         f"not below the shipped by more than {GATE_TOLERANCE}")
    gained.append(now - was)
    if "probes" in shipped and "probes" in candidate:  # gate reports from before stop 20 have none
        was, now = shipped["probes"]["wrong_sides"], candidate["probes"]["wrong_sides"]
        rule("wrong sides on the direction probes", now <= was, was, now, "not more than the shipped model's")
    rule("improves a target's figure", max(gained) >= GATE_GAIN, 0.0, round(max(gained), 4),
         f"stance macro-F1 or pipeline F1 up by >= {GATE_GAIN}")
    return {"ship": all(c["ok"] for c in checks), "checks": checks}


def gate_report(shared: Path, home: Path, verifier, max_papers: int = 1) -> dict:  # type: ignore[no-untyped-def]
    """The gate's figures for one verifier: stance (SciFact fold 0, Check-COVID dev), off-topic sides and the SciFact
    pipeline with its paper thresholds chosen by claim-grouped CV, as `stance`, `offtopic` and `pipeline` measure
    them."""
    from evtui.bench.driver import bench_library

    report: dict = {"model": verifier.version, "stance": {}}
    lib = bench_library("scifact", shared / "scifact" / "corpus.jsonl", home)
    try:
        report["stance"]["scifact_cal"] = run_stance(lib, scifact_items(shared), verifier=verifier)
        claims = scifact_cal_claims(shared, nei=True)
        verdicts = pipeline_verdicts(lib, claims, verifier, max_papers)
    finally:
        lib.close()
    grid = [0.5, 0.6, 0.7, 0.8, 0.9]
    report["pipeline"] = choose_by_cv(claims, {(n, a, b): predict_top_n(claims, verdicts, n, a, b)
                                               for n in range(1, max_papers + 1) for a in grid for b in grid})
    corpus = shared / "check-covid" / "corpus.json"
    lib = bench_library("checkcovid", corpus, home)
    try:
        report["stance"]["checkcovid_dev"] = run_stance(lib, map_checkcovid(checkcovid_items(shared), corpus, lib),
                                                        verifier=verifier)
    finally:
        lib.close()
    report["offtopic"] = offtopic_report(shared, verifier)
    report["probes"] = probes_report(verifier)
    return report


def demo_verdicts(home: Path, verifiers: dict) -> list[dict]:  # type: ignore[type-arg]
    """Each demo claim's paper verdicts under each verifier, for a person to read (the demo library has no gold):
    the papers whose label differs between the models."""
    from evtui.config import Config
    from evtui.judge.claims import verify_claim
    from evtui.library import Library
    from evtui.search import Searcher

    lib = Library(Config(home=home, demo=False))
    out = []
    try:
        searcher = Searcher(lib)
        for claim in DEMO_CLAIMS:
            labels: dict[str, dict[str, str]] = {}  # paper -> model -> label
            shown: dict[str, dict[str, str]] = {}  # paper -> model -> label, confidence and first rationale
            lines = {}
            for name, v in verifiers.items():
                verdict = verify_claim(lib, claim, papers=5, searcher=searcher, verifier=v)
                lines[name] = verdict.summary_line()
                for p in verdict.papers:
                    key = f"{p.paper_id} {p.title[:60]}"
                    labels.setdefault(key, {})[name] = p.label
                    shown.setdefault(key, {})[name] = f"{p.label} {p.confidence:.2f}" + (
                        f": {p.rationales[0].text[:120]}" if p.rationales else "")
            changed = {k: shown[k] for k, v in labels.items() if len(set(v.values())) > 1}
            out.append({"claim": claim, "summary": lines, "papers_that_changed": changed})
    finally:
        lib.close()
    return out


def cmd_gate(args: argparse.Namespace) -> None:
    """A candidate verifier (`--model DIR`) against the shipped one on every figure a release must not worsen, the
    rules in `release_checks`; `--demo-home`: also the demo library's claim verdicts side by side, to read."""
    from evtui.verify.model import Verifier

    home = args.home or _home()
    models = {"shipped": Verifier(), "candidate": Verifier(args.model)}
    reports = {name: gate_report(args.shared, home, v) for name, v in models.items()}
    out = {"models": {k: v.version for k, v in models.items()}, **release_checks(reports["shipped"],
                                                                               reports["candidate"])}
    out["reports"] = reports
    if args.demo_home:
        out["demo"] = demo_verdicts(args.demo_home, models)
    print(json.dumps(out, indent=1))


def cmd_adapter(args: argparse.Namespace) -> None:
    """How faithful the shipped adapter form is to a full fine-tune, per rank and storage: compress the run's
    model.safetensors, run it as evtui loads it, and compare with the run's own held-out logits."""
    import gzip
    import tempfile

    import train_verifier as tv
    from safetensors.numpy import load_file, save_file

    import evtui.verify.adapter as adapter
    from evtui.checksum import sha256_file

    run = args.run
    state = load_file(str(run / "model.safetensors"))
    base = load_file(str(tv.base_dir() / "model.safetensors"))
    cal = [e for e in (json.loads(x) for x in gzip.open(run / "examples.jsonl.gz", "rt")) if e["split"] == "cal"]
    ref = np.load(run / "cal_logits.npy")
    y = np.array([tv.LABELS.index(e["label"]) for e in cal])
    enc = tv.Encoder(tv.base_dir() / "tokenizer.json")
    layout = adapter.locate_matrices(adapter.base_model_path(), base,
                                     [f"encoder.layer.{li}.{p}" for li in range(6) for p in tv.ADAPTED])
    rows = adapter.quantize_rows
    out = []
    for spec in args.forms:
        rank, storage, *matmul = spec.split(":")  # RANK:int8|fp16[:fp32], fp32: float matrix products at run time
        if storage == "fp16":  # the same tensors, stored as float16 instead of int8 rows
            adapter.quantize_rows = lambda w: {"": w.astype(np.float16)}  # type: ignore[assignment]
        try:
            tensors = tv.adapter_tensors(state, base, int(rank), 2)
        finally:
            adapter.quantize_rows = rows
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            save_file(tensors, str(folder / "adapter.safetensors"))
            (folder / "base.json").write_text(json.dumps({
                "sha256": sha256_file(adapter.base_model_path()), "prefix": "inner.", "matrices": layout}))
            logits = tv.predict_with(tv.adapter_runtime(folder, int8_activations=matmul != ["fp32"]), enc, cal)
            size = (folder / "adapter.safetensors").stat().st_size
        d = np.abs(logits - ref)
        out.append({"form": spec, "mb": round(size / 1e6, 2), "accuracy": round(float((logits.argmax(1) == y).mean()), 3),
                    "argmax_agreement": round(float((logits.argmax(1) == ref.argmax(1)).mean()), 3),
                    "mean_abs_logit_change": round(float(d.mean()), 3)})
        print(json.dumps(out[-1]), flush=True)
    print(json.dumps({"reference_accuracy": round(float((ref.argmax(1) == y).mean()), 3), "forms": out}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    data: dict[str, argparse.ArgumentParser] = {}
    for name in ("stance", "alpha", "pipeline", "thresholds", "cpu", "offtopic", "gate", "paper-side", "probes"):
        data[name] = sp = sub.add_parser(name)
        sp.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "datasets")
        sp.add_argument("--home", type=Path, default=None)
    data["pipeline"].add_argument("--max-papers", type=int, default=5)
    data["pipeline"].add_argument("--cache", type=Path, default=None,
                                  help="JSON of the verdicts: written on the first run, read on later ones")
    data["pipeline"].add_argument("--families", nargs="+", default=["top_n"],
                                  choices=["top_n", "tiered", "strongest"],
                                  help="paper-selection rules, each with its grid chosen by claim-grouped CV")
    data["pipeline"].add_argument("--grid", type=float, nargs="+", default=[0.5, 0.6, 0.7, 0.8, 0.9],
                                  help="the paper-level supports / refutes thresholds tried")
    data["offtopic"].add_argument("--model", type=Path, default=None, help="a verifier folder (default: shipped)")
    data["probes"].add_argument("--model", type=Path, default=None, help="a verifier folder (default: shipped)")
    data["offtopic"].add_argument("--write-pairs", type=Path, default=None,
                                  help="write the pairs (jsonl.gz) instead of judging them: a teacher's --extra set")
    data["gate"].add_argument("--model", type=Path, required=True, help="the candidate verifier folder")
    data["paper-side"].add_argument("--model", type=Path, default=None, help="a verifier folder (default: shipped)")
    data["gate"].add_argument("--demo-home", type=Path, default=None,
                              help="a library home with the demo papers: its claim verdicts under both models")
    data["thresholds"].add_argument("--refutes-floors", type=float, nargs="+", default=[0.85, 0.90, 0.95],
                                    help="the refutes precision the fitting folds must reach")
    sp = sub.add_parser("adapter", help="fidelity of the compressed adapter to a training run's full model")
    sp.add_argument("--run", type=Path, required=True, help="a train_verifier.py --out folder (model.safetensors)")
    sp.add_argument("--forms", nargs="+", default=["16:int8", "16:int8:fp32", "16:fp16", "64:int8"],
                    help="RANK:int8|fp16 (storage of the factors), :fp32 to run with float32 matrix products")
    sp = sub.add_parser("speed")
    sp.add_argument("--repeat", type=int, default=20)
    sp.add_argument("--fp32", action="store_true", help="also time the adapter with float32 matrix products")
    sp.add_argument("--old", type=Path, default=None, help="also time a self-contained ONNX verifier folder")
    args = ap.parse_args()
    from evtui.errors import EvtuiError

    try:
        run = {"stance": cmd_stance, "thresholds": cmd_thresholds, "speed": cmd_speed, "adapter": cmd_adapter,
               "alpha": cmd_alpha, "pipeline": cmd_pipeline, "cpu": cmd_cpu, "offtopic": cmd_offtopic,
               "gate": cmd_gate, "paper-side": cmd_paper_side, "probes": cmd_probes}[args.cmd]
        run(args)
    except EvtuiError as exc:  # a missing model folder, an unreadable corpus: one line, not a traceback
        raise SystemExit(f"bench_verifier {args.cmd}: {exc}") from None


if __name__ == "__main__":
    main()
