"""What a researcher pastes into a paper: citations that read like citations, titles whose names survive a BibTeX
style that lower-cases them, and JSON Lines rows that carry the BibTeX key."""

from __future__ import annotations

import json

from markdown_it import MarkdownIt

from evtui.export import Selected, bib_title, citation, to_jsonl, to_markdown
from evtui.models import Aspect, Paper, Span


def _paper(title: str, authors: list[str], journal: str | None = "J", year: int | None = 2021) -> Paper:
    return Paper(id="bib:x", title=title, authors=authors, year=year, journal=journal, doi=None, pmid=None, pmcid=None,
                 licence=None, source_path="refs.bib", source_format="bibtex", content_hash="", n_sentences=1)


def _item(paper: Paper) -> Selected:
    return Selected(sentence_id="bib:x:1", query="q", mode="claim", aspects=[Aspect("a1", "x", ["x"])],
                    highlights=[Span("a1", 0, 1)], method="best", score=1.0, text="x", section="Abstract",
                    paper=paper)


def test_a_list_cut_short_with_others_reads_et_al() -> None:
    # BibTeX's "and others": the citation named an author "others"
    assert citation(_paper("T", ["Ann Lee", "others"])).startswith("Ann Lee et al. (2021). T.")
    assert citation(_paper("T", ["A B", "C D", "E F", "G H", "others"])).startswith("A B, C D, E F et al. (2021)")


def test_no_doubled_full_stops_after_abbreviated_journals_or_questions() -> None:
    cited = citation(_paper("Does aspirin work?", ["Ann Lee"], journal="J. Hypertens."))
    assert cited == "Ann Lee (2021). Does aspirin work? *J. Hypertens.*"  # was "work?." and "Hypertens.*."
    assert citation(_paper("Aspirin trial.", ["Ann Lee"], journal="Lancet")) == "Ann Lee (2021). Aspirin trial. *Lancet*."
    # no title: no empty sentence (". .")
    assert citation(_paper("", ["Ann Lee"], journal=None, year=None)) == "Ann Lee (n.d.)."
    html = MarkdownIt("commonmark").render(to_markdown([_item(_paper("Why?", ["Ann Lee"], journal="N. Engl. J. Med."))]))
    assert "Why? <em>N. Engl. J. Med.</em></li>" in html


def test_names_in_sentence_case_titles_keep_their_capitals() -> None:
    # styles such as plain or apa lower-case a title's unbraced words: "in alzheimer's disease", "n-acyl"
    assert bib_title("Amyloid pathology decreases in Alzheimer's disease mouse model") == (
        "Amyloid pathology decreases in {Alzheimer's} disease mouse model")
    assert bib_title("Lactones produced by Chromobacterium aquaticum and other bacteria") == (
        "Lactones produced by {Chromobacterium} aquaticum and other bacteria")
    assert bib_title("Identification of N-acyl lactones in soil") == "Identification of {N-acyl} lactones in soil"
    # Title Case says nothing of its names: only acronyms are braced, as before
    assert bib_title("Genomic Promoter Analysis Predicts Binding in Yeast") == (
        "Genomic Promoter Analysis Predicts Binding in Yeast")


def test_jsonl_rows_carry_the_papers_citation_key() -> None:
    row = json.loads(to_jsonl([_item(_paper("Aspirin trials", ["Ann Lee"]))]))
    assert row["paper"]["citation_key"] == "lee2021aspirin"
    assert row["paper"]["title"] == "Aspirin trials"  # the documented keys stay
