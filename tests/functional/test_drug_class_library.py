"""A drug class across the library: "statins" is answered by trials of pravastatin and lovastatin, as the highlighter
already marks them. The paper channel scores a class by its best-matching member (not once per member named), and
the paper-level features count the class as found in a paper that names a member."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from evtui.config import load_config
from evtui.library import Library
from evtui.query import compile_matcher, parse_query
from evtui.rank.features import FEATURES, Candidate, featurize
from evtui.search import Searcher

QUERY = "statins reduce LDL cholesterol"
REVIEW = ("# A century of cholesterol and coronaries: from plaques to genes to statins\n\n## Abstract\n\n"
          "LDL is controlled by specific receptors in the liver that remove it from blood. "
          "If we are to eliminate coronary disease, lowering LDL should be the primary goal. "
          "Mutations that eliminate LDL receptors raise LDL and cause heart attacks in childhood. "
          "A century of research has revealed the causative agent: cholesterol-carrying lipoprotein.\n")
TRIAL = ("# Efficacy and tolerability of lovastatin in 3390 women with moderate hypercholesterolemia\n\n"
         "## Abstract\n\nWe randomised women with moderate hypercholesterolemia to lovastatin or placebo. "
         "Lovastatin (20 to 80 mg/d) produced sustained decreases in LDL cholesterol of 24% to 40% (p < 0.001). "
         "Lovastatin was well tolerated.\n")
SEVERAL = ("# Simvastatin, atorvastatin and rosuvastatin in rats\n\n## Abstract\n\n"
           "Simvastatin, atorvastatin and rosuvastatin were given to rats. Liver weight did not change.\n")


@pytest.fixture
def lib(tmp_path: Path) -> Iterator[Library]:
    d = tmp_path / "papers"
    d.mkdir()
    for name, text in (("review.md", REVIEW), ("trial.md", TRIAL), ("rats.md", SEVERAL)):
        (d / name).write_text(text, encoding="utf-8")
    with Library(load_config()) as library:
        library.ingest([d])
        yield library


def _paper(lib: Library, word: str) -> str:
    return next(p.id for p in lib.store.papers() if word in p.title.lower())


def test_the_trial_of_a_member_answers_the_class_across_the_library(lib: Library) -> None:
    res = Searcher(lib).search(QUERY, k=3, method="best")
    assert res.evidence[0].sentence.paper_id == _paper(lib, "lovastatin")
    assert "Lovastatin (20 to 80 mg/d)" in res.evidence[0].sentence.text


def test_the_paper_channel_scores_a_class_by_its_best_member(lib: Library) -> None:
    parsed = parse_query(QUERY)
    ranker = Searcher(lib).ranker
    words = ranker._words(parsed)
    alternatives = ranker._alternatives(parsed, words)
    assert "pravastatin" in alternatives["statins"] and "reduce" not in alternatives  # concepts only
    papers = dict(lib.index.paper_search(words, 10, alternatives=alternatives))
    trial, rats = _paper(lib, "lovastatin"), _paper(lib, "rats")
    assert trial in papers and papers[trial] > papers.get(_paper(lib, "century"), 0.0)
    # three statins named are one concept found once: the rats paper, which names nothing else, stays below the trial
    assert papers[rats] < papers[trial]
    plain = lib.index.paper_search(words, 10)  # word for word, "statins" is only in the review's title
    assert plain[0][0] == _paper(lib, "century") and dict(plain)[trial] < papers[trial]


def test_paper_coverage_counts_a_member_as_the_class_only_across_the_library(lib: Library) -> None:
    parsed = parse_query(QUERY)
    matcher = compile_matcher(parsed.aspects)
    sent = next(s for s in lib.store.sentences(_paper(lib, "lovastatin")) if s.text.startswith("Lovastatin (20"))
    cands = [Candidate(sent, matcher.spans(sent.text))]
    title = {sent.paper_id: "Efficacy and tolerability of lovastatin in women"}
    col = {f: i for i, f in enumerate(FEATURES)}

    def row(forms: bool) -> np.ndarray:
        return featurize(parsed, cands, paper_sizes={sent.paper_id: 5}, titles=title, aspect_forms=forms,
                         title_aspects={sent.paper_id: {sp.aspect for sp in matcher.spans(title[sent.paper_id])}})[0]

    wide, within = row(True), row(False)
    assert wide[col["paper_cov"]] > within[col["paper_cov"]]  # "statin" found through lovastatin
    assert wide[col["title_overlap"]] > within[col["title_overlap"]] == 0.0
    assert wide[col["term_overlap"]] == within[col["term_overlap"]]  # the sentence's own words stay lexical
