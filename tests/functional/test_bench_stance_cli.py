"""`evtui bench stance --pairs FILE [--json]`: the JSON contract, malformed files, and real sentences through the
shipped verifier, decided as the judge decides a sentence without its context."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.judge.local import sentence_stance
from evtui.verify.model import default_verifier

FIXTURES = Path(__file__).parents[1] / "fixtures" / "stance"
KEYS = {"pairs", "model", "accuracy", "macro_f1", "side_taken", "labels", "confusion"}


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict, str]:
    rc = main(["bench", "stance", *argv, "--json"])
    out = capsys.readouterr()
    return rc, json.loads(out.out), out.err


def test_json_contract(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc, _err = _run(capsys, "--pairs", str(FIXTURES / "pairs.jsonl.gz"))
    assert rc == 0
    assert set(doc) == KEYS
    assert doc["pairs"] == 3 and doc["model"] == default_verifier().version
    assert set(doc["labels"]) == {"supports", "refutes", "neutral"}
    for m in doc["labels"].values():
        assert set(m) == {"precision", "recall", "f1", "predicted", "gold"}
    assert {g: sum(row.values()) for g, row in doc["confusion"].items()} == {"supports": 1, "refutes": 1, "neutral": 1}
    assert doc["macro_f1"] == round((doc["labels"]["supports"]["f1"] + doc["labels"]["refutes"]["f1"]) / 2, 4)


def test_real_sentences_through_the_shipped_model(capsys: pytest.CaptureFixture[str]) -> None:
    """A supporting, a refuting and a neutral sentence (real trial wording): no wrong side is ever given — the
    shipped model takes a side only above thresholds chosen for 85% precision, so on these two close readings it
    leans (never a verdict), and the methods sentence takes none at all."""
    rc, doc, _err = _run(capsys, "--pairs", str(FIXTURES / "pairs.jsonl"))
    assert rc == 0
    conf = doc["confusion"]
    assert conf["supports"]["refutes"] == 0 and conf["refutes"]["supports"] == 0  # never the wrong side
    assert conf["neutral"]["neutral"] == 1
    verifier = default_verifier()
    rows = [json.loads(x) for x in (FIXTURES / "pairs.jsonl").read_text().splitlines()]
    probs = [verifier.verify(r["hypothesis"], [r["premise"]], [""])[0] for r in rows]
    assert probs[2].lean is None and probs[2].p_neutral > 0.5  # a methods line bears on neither side
    for sp in probs[:2]:  # the findings bear on the claim either way, more than not
        assert sp.p_side > 0.5
    if not verifier.takes("refutes"):
        assert doc["labels"]["refutes"]["predicted"] == 0


def test_bench_decides_as_the_judge() -> None:
    """The pair's stance is the judge's decision: a non-significant result supports no claim of an effect."""
    claim = "Aspirin reduces the risk of colorectal cancer."
    text = "Aspirin was associated with a lower risk of colorectal cancer, but the difference was not significant (p = 0.21)."
    sp = default_verifier().verify(claim, [text], [""])[0]
    side, why = sentence_stance(claim, text, "", sp)
    assert side != "supports"
    if sp.stance == "supports":
        assert "non-significant" in why


def test_malformed_lines_named_rest_scored(capsys: pytest.CaptureFixture[str]) -> None:
    rc, doc, err = _run(capsys, "--pairs", str(FIXTURES / "malformed.jsonl"))
    assert rc == 0 and doc["pairs"] == 2
    for n in (2, 3, 4, 5):
        assert f"line {n}:" in err


def test_no_usable_pair_is_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    rc = main(["bench", "stance", "--pairs", str(bad), "--json"])
    out = capsys.readouterr()
    assert rc == 2 and "error" in json.loads(out.out) and "no usable pair" in json.loads(out.out)["error"]
    rc = main(["bench", "stance", "--pairs", str(tmp_path / "missing.jsonl")])
    assert rc == 2 and "cannot read the pairs file" in capsys.readouterr().err
