"""Asking and judging through the real library, verifier and CLI: a non-significant result supports no effect, a
triplet gets one verdict however it is written, a drug class finds its members, and a query of common words
finds nothing and says why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.judge.claims import verify_claim
from evtui.judge.local import LocalJudge
from evtui.library import Library
from evtui.search import Searcher

NONSIG = ("Aspirin use reduced the incidence of colorectal cancer, although the reduction was not statistically "
          "significant (HR 0.80, p = 0.12).")


@pytest.fixture
def ingested(papers_dir: Path) -> Path:
    """The three conftest papers and a trial with a non-significant result and a statin, ingested and closed."""
    (papers_dir / "trial.md").write_text(
        "# A randomised trial of aspirin\n\n## Results\n\n" + NONSIG + " "
        "Atorvastatin lowered LDL cholesterol by 40% in the same participants.\n", encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([papers_dir])
    return papers_dir


@pytest.fixture
def lib(ingested: Path) -> Iterator[Library]:
    with Library(load_config()) as library:
        yield library


def _judged(lib: Library, query: str, text: str):  # noqa: ANN202 - (Evidence, Judgment)
    s = Searcher(lib)
    parsed = s.parse(query)
    res = s.search(parsed, k=20, method="bm25")
    e = next(e for e in res.evidence if e.sentence.text == text)
    return e, LocalJudge(lib).judge(parsed, [e])[0]


def test_a_non_significant_result_supports_no_claim_of_an_effect(lib: Library) -> None:
    _e, j = _judged(lib, "Aspirin reduces colorectal cancer", NONSIG)
    # the verifier reads "reduced" as supporting (P ~0.7): before, "▲ supports" beside "reports a non-significant
    # result" in one rationale
    assert j.stance == "neutral" and j.level <= 3
    assert "non-significant result does not show the effect" in j.rationale
    assert "→ supports" not in j.rationale


def test_a_triplet_gets_one_verdict_however_it_is_written(lib: Library) -> None:
    text = "Regular aspirin use reduced the incidence of colorectal cancer in a large cohort."
    _e1, paren = _judged(lib, "(aspirin, reduce, colorectal cancer)", text)
    _e2, bars = _judged(lib, "aspirin | reduce | colorectal cancer", text)
    # before: the verifier read the brackets and bars too, and printed another P for each form
    assert (paren.stance, paren.score, paren.rationale) == (bars.stance, bars.score, bars.rationale)
    a = verify_claim(lib, "(aspirin, reduce, colorectal cancer)", papers=2).to_json()
    b = verify_claim(lib, "aspirin | reduce | colorectal cancer", papers=2).to_json()
    assert a["papers"] == b["papers"] and a["papers"]


def test_a_drug_class_finds_and_lights_its_members(lib: Library) -> None:
    res = Searcher(lib).search("statins lower LDL cholesterol", k=5, method="bm25")
    hit = next(e for e in res.evidence if e.sentence.text.startswith("Atorvastatin"))  # before: not found at all
    assert ("a1", "Atorvastatin") in [(h.aspect, hit.sentence.text[h.start:h.end]) for h in hit.highlights]


def test_common_words_only_find_nothing_and_say_why(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "the of and", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # before: any sentence at all, each a full match of the aspect "the of and"
    assert doc["results"] == [] and doc["aspects"] == []
    assert any("only common words" in n for n in doc["notes"])
    assert main(["verify", "the of and", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["papers"] == []  # before: a paper "refuted" it


def test_verify_takes_no_side_on_a_non_significant_result_either(lib: Library) -> None:
    """One sentence, one verdict: the judge's rule holds in claim-level verdicts too."""
    verdict = verify_claim(lib, "Aspirin reduces colorectal cancer", papers=4, keep_probs=True)
    trial = next(p for p in verdict.papers if any(r.text == NONSIG for r in p.scored))
    nonsig = next(r for r in trial.scored if r.text == NONSIG)
    assert nonsig.p_support <= nonsig.p_refute and nonsig.stance != "supports"
    assert all(r.text != NONSIG for p in verdict.papers for r in p.rationales)
    # a claim of no effect may still rest on it
    null = verify_claim(lib, "Aspirin does not reduce colorectal cancer", papers=4, keep_probs=True)
    assert any(r.text == NONSIG and r.p_support > r.p_refute for p in null.papers for r in p.scored)
