"""Benchmarks as a researcher runs them from the CLI, with the files researchers really have: a claims file saved
with a byte-order mark, ids repeated (or written once as 2 and once as "2"), `--limit 0` / `--limit -3`, a claims
file edited between a killed run and `--resume`, an EvidenceBench file with an item missing a field or a JSON Lines
file given as EvidenceBench, and SciFact predictions naming evtui's `scifact:` paper ids or a negative sentence."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from evtui.bench import checkcovid, scifact
from evtui.bench import scifact_verify as sv
from evtui.bench.driver import RunBook
from evtui.bench.evidencebench import load_items
from evtui.bench.runs import ItemResult, list_runs
from evtui.cli import main
from evtui.config import load_config
from evtui.errors import EvtuiError
from evtui.library import Library

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
SF_CORPUS, SF_CLAIMS = FIX / "scifact_corpus30.jsonl", FIX / "scifact_claims6.jsonl"
CC_CORPUS, CC_CLAIMS = FIX / "checkcovid_corpus6.json", FIX / "checkcovid_claims.json"
EB3 = FIX / "eb3.json"
BOM = b"\xef\xbb\xbf"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def _write_lines(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# -- files saved by a Windows editor --------------------------------------------------------------------------
def test_files_with_a_byte_order_mark_and_crlf_are_read(tmp_path: Path) -> None:
    sf = tmp_path / "claims_bom.jsonl"
    sf.write_bytes(BOM + SF_CLAIMS.read_bytes().replace(b"\n", b"\r\n"))
    assert [c["id"] for c in scifact.load_claims(sf)] == [c["id"] for c in _lines(SF_CLAIMS)]
    cc = tmp_path / "cc_bom.json"
    cc.write_bytes(BOM + CC_CLAIMS.read_bytes())
    assert len(checkcovid.load_claims(cc)) == len(_lines(CC_CLAIMS))
    eb = tmp_path / "eb_bom.json"
    eb.write_bytes(BOM + EB3.read_bytes())
    assert load_items(eb) == load_items(EB3)


def test_a_bom_claims_file_scores_as_the_plain_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bom = tmp_path / "claims.jsonl"
    bom.write_bytes(BOM + SF_CLAIMS.read_bytes())
    args = ["bench", "scifact", "--corpus", str(SF_CORPUS), "--method", "bm25", "--no-save", "--json"]
    assert main([*args, "--claims", str(SF_CLAIMS)]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert main([*args, "--claims", str(bom)]) == 0
    read = json.loads(capsys.readouterr().out)
    assert read["per_item"] == plain["per_item"] and read["ndcg@10"] == plain["ndcg@10"]


# -- repeated ids ---------------------------------------------------------------------------------------------
def test_a_repeated_claim_id_is_refused_naming_both_lines(tmp_path: Path) -> None:
    rows = _lines(SF_CLAIMS)
    dup = _write_lines(tmp_path / "dup.jsonl", [*rows, {**rows[0], "claim": "another claim"}])
    with pytest.raises(EvtuiError, match=rf"line {len(rows) + 1}: id {rows[0]['id']} is already on line 1"):
        scifact.load_claims(dup)
    # 2 and "2" are one claim to the harness (items are keyed by text): one of them was silently dropped
    mixed = _write_lines(tmp_path / "mixed.jsonl", [*rows, {**rows[1], "id": str(rows[1]["id"])}])
    with pytest.raises(EvtuiError, match="is already on line 2"):
        scifact.load_claims(mixed)
    cc = _lines(CC_CLAIMS)
    cc_dup = _write_lines(tmp_path / "cc.json", [*cc, cc[2]])
    with pytest.raises(EvtuiError, match="is already on line 3"):
        checkcovid.load_claims(cc_dup)


def test_cli_refuses_a_repeated_id_before_recording_a_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cc = _lines(CC_CLAIMS)
    dup = _write_lines(tmp_path / "cc.json", [*cc, {**cc[0], "claim": "Bats do something else entirely."}])
    assert main(["bench", "checkcovid", "--corpus", str(CC_CORPUS), "--claims", str(dup), "--method", "bm25"]) == 2
    err = capsys.readouterr().err
    assert "is already on line 1" in err and "Traceback" not in err
    with Library(load_config()) as lib:
        assert list_runs(lib) == []


# -- --limit ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("limit", [0, -2])
def test_a_limit_below_one_is_refused(limit: int, capsys: pytest.CaptureFixture[str]) -> None:
    # --limit -2 ran all claims but the last two, --limit 0 all of them
    for verb, corpus, claims in (("scifact", SF_CORPUS, SF_CLAIMS), ("checkcovid", CC_CORPUS, CC_CLAIMS)):
        assert main(["bench", verb, "--corpus", str(corpus), "--claims", str(claims), "--method", "bm25",
                     "--limit", str(limit), "--no-save"]) == 2
        assert f"--limit must be at least 1, not {limit}" in capsys.readouterr().err
    with pytest.raises(EvtuiError, match="--limit must be at least 1"):
        sv.run_scifact_verify(SF_CORPUS, SF_CLAIMS, limit=limit, predict=lambda lib, claims, papers: iter(()))


# -- a claims file edited between a killed run and --resume ----------------------------------------------------
def _interrupted_checkcovid_run(claims: Path, wrong_id: str) -> str:
    """What a killed `bench checkcovid` leaves: a running row with one finished claim, no live owner."""
    key = {"corpus": str(CC_CORPUS), "claims": str(claims), "seed": 0, "limit": None}
    with Library(load_config()) as lib:
        book = RunBook(lib, f"check-covid:{claims.name}", ["sentence+doc-retrieval"], "bm25", key)
        record = book.recorder("sentence+doc-retrieval")
        assert record is not None
        record(ItemResult(wrong_id, None, {"sentences": {}, "docs": {}}, 0.1))  # found nothing: scores 0
        book.release()
        rid = book.run_id("sentence+doc-retrieval")
    assert rid is not None
    return rid


def test_resume_after_the_claims_file_was_edited_does_not_mix_two_files(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "claims.json"
    shutil.copy(CC_CLAIMS, claims)
    first = _lines(CC_CLAIMS)[0]["id"]
    args = ["bench", "checkcovid", "--corpus", str(CC_CORPUS), "--claims", str(claims), "--method", "bm25", "--json"]

    # the same file: the killed run's claim is taken as it was (its stored answer scores 0)
    rid = _interrupted_checkcovid_run(claims, first)
    assert main([*args, "--resume"]) == 0
    resumed = json.loads(capsys.readouterr().out)
    assert resumed["doc_recall@20"] < 100.0
    with Library(load_config()) as lib:
        assert [r["id"] for r in list_runs(lib)] == [rid]

    # edited after the kill (claims reworded): the stored answer belongs to the old file, so a new run
    rid = _interrupted_checkcovid_run(claims, first)
    _write_lines(claims, [{**c, "claim": c["claim"].rstrip(".") + " in humans."} for c in _lines(CC_CLAIMS)])
    assert main([*args, "--resume"]) == 0
    out = capsys.readouterr()
    edited = json.loads(out.out)
    assert f"unfinished run {rid}" in out.err and "edited since it started" in out.err
    assert main([*args, "--no-save", "--home", str(tmp_path / "clean")]) == 0
    clean = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in edited.items() if k != "seconds"} == {k: v for k, v in clean.items() if k != "seconds"}
    with Library(load_config()) as lib:
        status = {r["id"]: r["status"] for r in list_runs(lib)}
    assert status[rid] == "interrupted" and list(status.values()).count("done") == 2


# -- EvidenceBench files that are not EvidenceBench -----------------------------------------------------------
def test_an_item_missing_a_field_is_a_clear_error_and_leaves_no_run(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    items = json.loads(EB3.read_text(encoding="utf-8"))
    first = next(iter(items))
    for field in ("hypothesis", "sentence_index2aspects", "evidence_retrieval_at_optimal_evaluation"):
        bad = tmp_path / f"no_{field}.json"
        bad.write_text(json.dumps({**items, first: {k: v for k, v in items[first].items() if k != field}}))
        # it failed with a KeyError traceback mid-sweep and left four runs listed as interrupted
        assert main(["bench", "evidencebench", "--data", str(bad), "--task", "all", "--method", "bm25"]) == 2
        err = capsys.readouterr().err
        assert f"item {first} is not an EvidenceBench item: {field}" in err and "Traceback" not in err
    with Library(load_config()) as lib:
        assert list_runs(lib) == []


def test_a_json_lines_file_given_as_evidencebench_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "evidencebench", "--data", str(SF_CLAIMS), "--task", "er-10", "--method", "bm25"]) == 2
    err = capsys.readouterr().err
    assert "is JSON Lines (one object per line), not an EvidenceBench JSON file" in err


# -- scifact-eval ---------------------------------------------------------------------------------------------
def _gold(tmp_path: Path) -> tuple[Path, list[dict[str, Any]]]:
    gold = [c for c in _lines(FIX / "scifact_dev10.jsonl") if c.get("evidence")]
    oracle = [{"id": c["id"], "evidence": {doc: {"label": sets[0]["label"],
                                                 "sentences": [i for s in sets for i in s["sentences"]]}
                                           for doc, sets in c["evidence"].items()}} for c in gold]
    return _write_lines(tmp_path / "gold.jsonl", gold), oracle


def test_scifact_eval_refuses_evtui_paper_ids_it_would_score_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, oracle = _gold(tmp_path)
    ok = _write_lines(tmp_path / "oracle.jsonl", oracle)
    assert main(["bench", "scifact-eval", "--gold", str(gold), "--pred", str(ok), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["abstract_label_only"]["f1"] == 1.0
    prefixed = _write_lines(tmp_path / "prefixed.jsonl", [
        {"id": p["id"], "evidence": {f"scifact:{d}": v for d, v in p["evidence"].items()}} for p in oracle])
    # every abstract silently counted as wrong: all four F1s 0.0
    assert main(["bench", "scifact-eval", "--gold", str(gold), "--pred", str(prefixed)]) == 2
    doc = next(iter(oracle[0]["evidence"]))
    assert f"doc id 'scifact:{doc}' is evtui's paper id" in capsys.readouterr().err


def test_scifact_eval_refuses_a_negative_sentence_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold, oracle = _gold(tmp_path)
    doc = next(iter(oracle[0]["evidence"]))
    bad = [{**oracle[0], "evidence": {doc: {**oracle[0]["evidence"][doc], "sentences": [-1]}}}, *oracle[1:]]
    pred = _write_lines(tmp_path / "neg.jsonl", bad)
    assert main(["bench", "scifact-eval", "--gold", str(gold), "--pred", str(pred)]) == 2
    assert "sentence index -1 is negative" in capsys.readouterr().err
    # the official figures are unchanged for well-formed predictions, duplicates and out-of-range indices included
    far = [{**oracle[0], "evidence": {doc: {**oracle[0]["evidence"][doc],
                                            "sentences": [*oracle[0]["evidence"][doc]["sentences"], 999]}}},
           *oracle[1:]]
    res = sv.score(json.loads("[" + ",".join(gold.read_text().splitlines()) + "]"), far)
    assert res["counts"]["predicted_sentences"] == sum(len(v["sentences"]) for p in oracle
                                                       for v in p["evidence"].values()) + 1
