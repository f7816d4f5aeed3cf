"""The trained verifier through the shipped model: stance on real sentences, claim-level verdicts, the CLI contracts,
SciFact predictions, the local judge's use of it, and `evidential`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.judge.claims import verify_claim
from evtui.judge.local import LocalJudge
from evtui.library import Library
from evtui.search import Searcher
from evtui.verify.cues import explain, non_significant
from evtui.verify.model import MODEL_DIR, default_verifier

BENCH = Path(__file__).parents[1] / "fixtures" / "bench"


def test_shipped_model_matches_its_manifest() -> None:
    manifest = json.loads((MODEL_DIR / "model.json").read_text())
    assert manifest["labels"] == ["supports", "refutes", "neutral"]
    assert {"scifact", "checkcovid"} <= set(manifest["training_data"])
    v = default_verifier()
    assert 0 < v.thresholds["supports"] < 1 and 0 < v.thresholds["refutes"] < 1 and v.temperature > 0


# Real sentences: SciFact train claims 76 and 69 with gold rationale sentences of their cited abstracts (CC BY 4.0 /
# ODC-By, tests/fixtures/bench), and a sentence of the same abstract that takes no side on the claim.
SUPPORT = ("Active Ly49Q induces neutrophil polarization.",
           "Here, we show that an inhibitory MHC I receptor, Ly49Q, was crucial for the swift polarization of and "
           "tissue infiltration by neutrophils.")
REFUTE = ("Activation of PPM1D enhances p53 function.",
          "PPM1D mutations were mutually exclusive with TP53 mutations in BSG and attenuated p53 activation in vitro.")
NEUTRAL = ("Active Ly49Q induces neutrophil polarization.",
           "Neutrophils rapidly undergo polarization and directional movement to infiltrate the sites of infection "
           "and inflammation.")


def test_stance_on_real_sentences() -> None:
    v = default_verifier()
    assert v.verify(*SUPPORT[:1], [SUPPORT[1]])[0].stance == "supports"
    refute = v.verify(REFUTE[0], [REFUTE[1]])[0]  # read as refuting; a side only past the precision threshold
    assert refute.p_refute > max(refute.p_support, refute.p_neutral) and refute.stance != "supports"
    assert v.verify(NEUTRAL[0], [NEUTRAL[1]])[0].stance == "neutral"
    p = v.probabilities(SUPPORT[0], [SUPPORT[1], NEUTRAL[1]])
    assert p.shape == (2, 3) and abs(float(p.sum()) - 2.0) < 1e-4


def test_cues_name_the_direction_and_catch_non_significance() -> None:
    why = explain("Aspirin reduces colorectal cancer risk", "Aspirin lowered the incidence of colorectal cancer.",
                  "supports", 0.91)
    assert "“lowered”" in why and "“reduces”" in why and "supports" in why
    # words that point the other way are not given as the reason for the side (the demo's curcumin paper)
    odd = explain("Curcumin improves memory deficits", "it did not significantly improve memory retention",
                  "supports", 0.70)
    assert "→ supports" not in odd and "although it reports “did not”" in odd and "read it" in odd
    assert "→ refutes" in explain("Curcumin improves memory deficits", "it did not improve memory", "refutes", 0.8)
    assert non_significant("The HR was 0.63 (95% CI 0.35-1.13; p = 0.12).")
    assert non_significant("The difference was not statistically significant.")
    assert not non_significant("The HR was 0.63 (p = 0.12 for trend; p < 0.001 overall).")
    assert not non_significant("Risk fell by 30% (p < 0.01).")
    # the Lancet's raised decimal dot (the CAPP2 trial in the demo library, issue 13's own example)
    assert non_significant("showed a hazard ratio (HR) of 0·63 (95% CI 0·35-1·13, p=0·12).")
    assert not non_significant("Risk fell by 30% (p<0·001).")


def test_an_unsure_neutral_names_the_side_it_leans_to() -> None:
    from evtui.verify.model import StanceProbs

    unsure = StanceProbs(p_support=0.15, p_refute=0.60, p_neutral=0.25, stance="neutral")
    assert unsure.lean == ("refutes", 0.60)
    assert StanceProbs(0.2, 0.1, 0.7, "neutral").lean is None  # neutral is the most probable reading
    assert StanceProbs(0.8, 0.1, 0.1, "supports").lean is None
    why = explain("Activation of PPM1D enhances p53 function.", "PPM1D attenuated p53 activation.", "neutral",
                  0.25, unsure.lean)
    assert "leans to refuting (P 0.60)" in why and "takes no side" not in why
    assert "takes no side" in explain("a claim", "a sentence", "neutral", 0.7)


@pytest.fixture()
def scifact_library() -> Library:
    lib = Library(load_config())
    lib.ingest([BENCH / "scifact_corpus30.jsonl"])
    yield lib
    lib.close()


def test_claim_level_verdicts(scifact_library: Library) -> None:
    supported = verify_claim(scifact_library, "Active Ly49Q induces neutrophil polarization.", papers=3)
    assert {p.paper_id: p.label for p in supported.papers}["scifact:5531479"] == "SUPPORT"  # SciFact: SUPPORT
    # SciFact labels this paper CONTRADICT: a side is taken only past the precision thresholds, never the wrong one
    refuted = verify_claim(scifact_library, "Activation of PPM1D enhances p53 function.", papers=3)
    assert {p.paper_id: p.label for p in refuted.papers}["scifact:5956380"] in ("CONTRADICT", "NEI")
    for verdict in (supported, refuted):
        assert verdict.papers and verdict.papers[0].paper_id.startswith("scifact:")
        for p in verdict.papers:
            assert p.label in ("SUPPORT", "CONTRADICT", "NEI") and 0.0 <= p.confidence <= 1.0
            assert (p.label == "NEI") == (not p.rationales)
            for r in p.rationales:
                assert r.stance == ("supports" if p.label == "SUPPORT" else "refutes")
        s = verdict.summary
        assert s["supports"] + s["refutes"] + s["no_evidence"] == len(verdict.papers)


def _jats(sections: dict[str, list[str]]) -> str:
    body = "".join(f"<sec><title>{t}</title><p>{' '.join(ss)}</p></sec>" for t, ss in sections.items())
    return ("<article><front><article-meta><article-id pub-id-type=\"pmc\">9990001</article-id><title-group>"
            "<article-title>Curcuminoid particles and memory in APP mice</article-title></title-group>"
            f"</article-meta></front><body>{body}</body></article>")


def test_a_full_text_papers_verdict_ignores_its_introduction(tmp_path: Path) -> None:
    """Its introduction recounts other studies: in a long paper it never decides the verdict (an abstract-sized
    paper is verified whole). Sentences adapted from PMC5828200 (CC BY), where the cited trial's failure was read as
    the paper refuting the claim."""
    claim = "Curcumin improves memory deficits in Alzheimer's disease mouse models."
    intro = ["However, curcumin intake failed to reduce the amyloid levels in AD patients in the clinical trial [18].",
             "Alzheimer's disease is the most prevalent neurodegenerative disorder."]
    methods = [f"Mice of cohort {i} were housed in groups of four with food and water ad libitum." for i in range(40)]
    results = ["In the probe trial for memory retention, APP mice given curcumin particles spent significantly longer "
               "time in the platform region than untreated APP mice."]
    paper = tmp_path / "PMC9990001.xml"
    paper.write_text(_jats({"Introduction": intro, "Methods": methods, "Results": results}))
    with Library(load_config()) as library:
        library.ingest([paper])
        (pid,) = [p.id for p in library.store.papers()]
        kinds = {s.position: s.section_kind for s in library.store.sentences(pid)}
        verdict = verify_claim(library, claim, paper_ids=[pid], keep_probs=True)
        (p,) = verdict.papers
        assert p.scored and not [r for r in p.scored if kinds[r.position] == "introduction"]
        assert p.label != "CONTRADICT"
        # the local judge still shows the introduction's sentence as evidence, saying whose finding it may be
        s = Searcher(library)
        parsed = s.parse(claim)
        res = s.search(parsed, k=5, paper=pid, method="bm25")
        judged = dict(zip([e.sentence.text for e in res.evidence], LocalJudge(library).judge(parsed, res.evidence),
                          strict=True))
        assert "may recount earlier work" in judged[intro[0]].rationale
        assert "may recount earlier work" not in judged[results[0]].rationale
        # rationales: the paper's own findings before a discussion sentence that cites another study's
        r_cited = "In another mouse model, curcumin reversed memory deficits in the water maze [38, 40]."
        paper.write_text(_jats({"Introduction": intro, "Methods": methods, "Results": results,
                                "Discussion": [r_cited]}))
        library.ingest([paper])
        # at paper thresholds low enough for both findings to be rationales (the shipped sentence thresholds are
        # chosen for precision and may leave these as leans): the order is what is checked here
        (p,) = verify_claim(library, claim, paper_ids=[pid], keep_probs=True, thresholds=(0.5, 0.5)).papers
        texts = [r.text for r in p.rationales]
        assert p.label == "SUPPORT" and texts[0] == results[0] and r_cited in texts
        # the same introduction in a short paper is read whole
        paper.write_text(_jats({"Introduction": intro, "Results": results}))
        library.ingest([paper])
        (p,) = verify_claim(library, claim, paper_ids=[pid], keep_probs=True).papers
        assert any("clinical trial [18]" in r.text for r in p.scored)


def test_verify_cli_json_contract(scifact_library: Library, capsys: pytest.CaptureFixture[str]) -> None:
    scifact_library.close()
    assert main(["verify", "Activation of PPM1D enhances p53 function.", "--papers", "2", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out) == {"query", "verdict", "papers"}
    assert set(out["verdict"]) == {"supports", "refutes", "no_evidence"}
    assert len(out["papers"]) == 2
    for p in out["papers"]:
        assert set(p) == {"paper_id", "title", "label", "confidence", "rationales"}
        for r in p["rationales"]:
            assert set(r) == {"sentence_id", "position", "text", "stance", "p_support", "p_refute"}


@pytest.mark.parametrize("columns", [80, 140])
def test_verify_table_on_an_80_column_terminal(scifact_library: Library, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    scifact_library.close()
    monkeypatch.setenv("COLUMNS", str(columns))
    assert main(["verify", "Active Ly49Q induces neutrophil polarization.", "--papers", "2"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(len(x) for x in lines) <= columns
    header = next(x for x in lines if "verdict" in x and "conf" in x)
    cells = header.split("┃")[1:-1]
    assert len(cells) == (4 if columns >= 110 else 3) and len(cells[-1]) >= 40
    assert any("scifact:5531479" in x for x in lines) and any("#" in x and "P support" not in x for x in lines)


def test_verify_claims_file_writes_official_predictions(scifact_library: Library, tmp_path: Path) -> None:
    scifact_library.close()
    out = tmp_path / "pred.jsonl"
    assert main(["verify", "--claims", str(BENCH / "scifact_claims6.jsonl"), "--out", str(out)]) == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    claims = [json.loads(x) for x in (BENCH / "scifact_claims6.jsonl").read_text().splitlines()]
    assert [p["id"] for p in lines] == [c["id"] for c in claims]
    corpus = {str(json.loads(x)["doc_id"]): json.loads(x) for x in
              (BENCH / "scifact_corpus30.jsonl").read_text().splitlines()}
    for p in lines:
        assert set(p) == {"id", "evidence"}
        for doc, ev in p["evidence"].items():
            assert doc in corpus and not doc.startswith("scifact:")
            assert ev["label"] in ("SUPPORT", "CONTRADICT")
            assert ev["sentences"] and all(0 <= i < len(corpus[doc]["abstract"]) for i in ev["sentences"])


def test_local_judge_takes_the_verifiers_stance(papers_library: Library) -> None:
    s = Searcher(papers_library)
    parsed = s.parse("Aspirin reduces colorectal cancer")
    res = s.search(parsed, k=8, method="bm25")
    out = LocalJudge(papers_library).judge(parsed, res.evidence)
    by_text = {e.sentence.text: j for e, j in zip(res.evidence, out, strict=True)}
    j = by_text["Regular aspirin use reduced the incidence of colorectal cancer in a large cohort."]
    # a side where the verifier clears its precision threshold, else a lean the same way: never the other side
    assert (j.stance == "supports" and "support" in j.rationale) or \
        (j.stance == "neutral" and j.lean == "supports" and "leans to supporting" in j.rationale)
    assert "+evtui-verifier-" in j.model


def test_non_significant_result_is_never_primary(tmp_path: Path) -> None:
    d = tmp_path / "p"
    d.mkdir()
    (d / "hr.md").write_text(
        "# Aspirin and colorectal cancer survival\n\n## Results\n\n"
        "Aspirin use after diagnosis was associated with lower colorectal cancer mortality, but the association "
        "was not statistically significant (HR 0.63, 95% CI 0.35-1.13, p = 0.12).\n"
        "Aspirin use reduced colorectal cancer mortality (HR 0.71, 95% CI 0.53-0.95, p = 0.02).\n", encoding="utf-8")
    with Library(load_config()) as lib:
        lib.ingest([d])
        s = Searcher(lib)
        parsed = s.parse("(aspirin, reduce, colorectal cancer)")
        res = s.search(parsed, k=5, method="bm25")
        out = LocalJudge(lib).judge(parsed, res.evidence)
        for e, j in zip(res.evidence, out, strict=True):
            if "not statistically significant" in e.sentence.text:
                assert j.level <= 3 and "non-significant" in j.rationale


def test_evidential_is_a_search_method(papers_library: Library) -> None:
    s = Searcher(papers_library)
    best = s.search("Aspirin reduces colorectal cancer", k=5, method="best")
    ev = s.search("Aspirin reduces colorectal cancer", k=5, method="evidential")
    assert ev.method == "evidential" and ev.evidence
    assert {e.sentence.id for e in ev.evidence} <= {e.sentence.id for e in
                                                   s.search("Aspirin reduces colorectal cancer", k=30).evidence}
    assert [e.rank for e in ev.evidence] == list(range(1, len(ev.evidence) + 1))
    assert best.evidence


def test_a_funding_line_never_decides_a_verdict(tmp_path: Path) -> None:
    """The demo's CAPP2 abstract ends "FUNDING European Union; Cancer Research UK; Bayer Corporation; …", which the
    verifier read as supporting "Aspirin reduces the risk of colorectal cancer" (P 0.70), its first rationale."""
    claim = "Aspirin reduces the risk of colorectal cancer."
    funding = "FUNDING European Union; Cancer Research UK; Bayer Corporation; UK Medical Research Council."
    registration = "TRIAL REGISTRATION ClinicalTrials.gov NCT00497731."
    finding = "Aspirin use was associated with a lower incidence of colorectal cancer (HR 0.63; p = 0.02)."
    paper = tmp_path / "PMC9990001.xml"
    paper.write_text(_jats({"Results": [finding, funding, registration]}))
    with Library(load_config()) as library:
        library.ingest([paper])
        (pid,) = [p.id for p in library.store.papers()]
        (p,) = verify_claim(library, claim, paper_ids=[pid], keep_probs=True).papers
        assert [r.text for r in p.scored] == [finding]
