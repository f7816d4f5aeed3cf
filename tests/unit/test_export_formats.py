"""Exports: the format follows the file name, BibTeX keys are readable and stable, level names are the judge's."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timezone

import pytest

from evtui import export
from evtui.export import (
    Selected,
    base_key,
    bibtex_keys,
    choose_format,
    format_of,
    to_bibtex,
    to_markdown,
    verdict_line,
)
from evtui.models import LEVELS, Aspect, Paper, Span


def _paper(pid: str, title: str, authors: list[str] | None = None, year: int | None = None, **kw: str) -> Paper:
    return Paper(id=pid, title=title, authors=authors or [], year=year, journal=kw.get("journal"), doi=kw.get("doi"),
                 pmid=kw.get("pmid"), pmcid=kw.get("pmcid"), licence=None, source_path=kw.get("source_path", ""),
                 source_format=kw.get("source_format", "jats"), content_hash="", n_sentences=1)


def _item(paper: Paper | None, sid: str = "s:1", verdict: dict[str, object] | None = None) -> Selected:
    text = "Aspirin reduced colorectal cancer."
    return Selected(sentence_id=sid, query="(aspirin, reduce, colorectal cancer)", mode="triplet",
                    aspects=[Aspect("head", "aspirin", ["aspirin"])], highlights=[Span("head", 0, 7)],
                    method="best", score=1.0, text=text, section="Abstract", paper=paper, verdict=verdict)


UHL = _paper("PMC6398430", "Counting crows: population structure and group size variation in an urban population",
             ["Florian Uhl", "Max Ringler"], 2019, doi="10.1093/beheco/ary157", pmcid="PMC6398430")
SCIFACT = _paper("scifact:15648443", "Long-term effect of aspirin on cancer risk in carriers of hereditary "
                 "colorectal cancer", source_path="corpus.jsonl", source_format="corpus-jsonl")
PUBTATOR = _paper("PMID:227508", "Naloxone reverses the antihypertensive effect of clonidine.", pmid="227508",
                  source_path="bc5cdr.pubtator.txt.gz", source_format="pubtator")


# -- the format follows the extension ------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "fmt"), [("refs.bib", "bibtex"), ("R.BIB", "bibtex"), ("ev.md", "md"),
                                           ("ev.markdown", "md"), ("rows.jsonl", "jsonl"), ("notes.txt", None),
                                           ("evidence", None), ("x.bibtex", None), ("a.bib/out", None)])
def test_format_of_the_extension(name: str, fmt: str | None) -> None:
    assert format_of(name) == fmt


def test_no_format_asked_for_follows_the_extension_and_markdown_otherwise() -> None:
    assert choose_format("refs.bib", None) == ("bibtex", None)
    assert choose_format("rows.jsonl", None) == ("jsonl", None)
    assert choose_format("notes.txt", None) == ("md", None)
    assert choose_format("refs.bib", "bibtex") == ("bibtex", None)
    assert choose_format("x.bibtex", "bibtex") == ("bibtex", None)  # an extension with no meaning: no warning


def test_a_format_the_extension_contradicts_is_written_as_asked_with_one_warning_line() -> None:
    fmt, warning = choose_format("/tmp/refs.bib", "md")
    assert fmt == "md"
    assert warning == "writing Markdown to refs.bib, though its extension .bib means BibTeX"
    fmt, warning = choose_format("ev.md", "jsonl")
    assert fmt == "jsonl" and warning is not None and "\n" not in warning and ".md means Markdown" in warning


# -- BibTeX keys -----------------------------------------------------------------------------------------------------

def test_keys_are_surname_year_and_first_significant_title_word() -> None:
    assert base_key(UHL) == "uhl2019counting"
    assert base_key(_paper("x", "The effect of aspirin", ["Günter Lepperdinger"], 2008)) == "lepperdinger2008effect"
    assert base_key(_paper("x", "A tutorial", ["John L. VandeBerg"], 2011)) == "vandeberg2011tutorial"
    assert base_key(_paper("x", "On the Poisson model", ["Smith, John"], 2000)) == "smith2000poisson"
    assert base_key(_paper("x", "Gene maps", ["Martin Luther King Jr."], 1999)) == "king1999gene"
    assert base_key(_paper("x", "Straße und Ørsted", ["Jürgen Groß"], 2001)) == "gross2001strasse"
    # no author: the title's first significant word and the year, as Zotero keys it ("anonlongterm" told nothing)
    assert base_key(SCIFACT) == "longterm"  # no year: none
    assert base_key(_paper("x", "The aspirin trials", [], 2019)) == "aspirin2019"
    assert base_key(_paper("x", "", [], None)) == "anon" and base_key(_paper("x", "", [], 2019)) == "anon2019"


def test_keys_hold_only_letters_and_digits() -> None:
    odd = _paper("doi:10.1/x{y}", "“Quoted” {braces} & 100% \\input{x}", ["O'Brien-Smith, Ann"], 2020)
    key = base_key(odd)
    assert re.fullmatch(r"[A-Za-z0-9]+", key) and key == "obriensmith2020quoted"


def test_colliding_keys_get_letters_from_their_ids_so_reordering_never_swaps_them() -> None:
    one = _paper("PMC2", "Aspirin trials", ["Ann Lee"], 2020)
    two = _paper("PMC1", "Aspirin trials again", ["Bo Lee"], 2020)
    alone = _paper("PMC3", "Statins", ["Ann Lee"], 2020)
    keys = bibtex_keys([one, two, alone])
    assert keys == {"PMC1": "lee2020aspirino", "PMC2": "lee2020aspirinl", "PMC3": "lee2020statins"}
    assert bibtex_keys([alone, two, one]) == keys
    assert len(set(bibtex_keys([SCIFACT, replace(SCIFACT, id="scifact:1")]).values())) == 2
    # a suffixed key never takes another entry's own key
    taken = _paper("PMC9", "Aspirina", ["Cy Lee"], 2020)  # its own key is lee2020aspirina
    keys = bibtex_keys([one, two, taken])
    assert keys["PMC9"] == "lee2020aspirina" and len(set(keys.values())) == 3


def test_bibtex_before_and_after() -> None:
    bib = to_bibtex([_item(UHL, "a"), _item(SCIFACT, "b"), _item(PUBTATOR, "c"), _item(UHL, "d")])
    keys = re.findall(r"@article\{([^,]+),", bib)
    assert keys == ["uhl2019counting", "longterm", "naloxone"]  # was uhl2019c6398430, anon15648443, ...
    # a corpus abstract says where it is from: its corpus and doc, or its PubMed id
    assert "  note = {SciFact corpus, doc 15648443}" in bib
    assert "  pmid = {227508},\n  note = {PubMed abstract 227508}" in bib
    assert "note" not in bib.split("@article{longterm")[0]  # a paper with authors needs none
    assert bib.endswith("}\n") and not bib.endswith("\n\n")


# -- level names are the judge's rubric ------------------------------------------------------------------------------

def _verdict(level: int) -> dict[str, object]:
    return {"score": 20 * level, "level": level, "stance": "supports", "confidence": 7, "rationale": "why",
            "judge": "local", "model": "m"}


@pytest.mark.parametrize("level", range(6))
def test_verdicts_name_levels_as_the_judge_does(level: int) -> None:
    line = verdict_line(_verdict(level))
    assert f"{20 * level}/100 (level {level} {LEVELS[level]})" in line


def test_markdown_uses_the_judges_names_and_has_none_of_its_own() -> None:
    md = to_markdown([_item(UHL, "a", _verdict(4)), _item(UHL, "b", _verdict(5)), _item(UHL, "c", _verdict(3))])
    assert "80/100 (level 4 primary)" in md
    assert "100/100 (level 5 direct correspondence)" in md
    assert "60/100 (level 3 substantial)" in md
    for old in ("related", "partial", "topical", "irrelevant", "direct, quantified"):
        assert old not in md
    # one vocabulary: the judge names levels from the same table
    from evtui.judge import LEVELS as judge_levels
    assert judge_levels is LEVELS and not hasattr(export, "_LEVELS")


def test_markdown_ends_with_one_newline() -> None:
    md = to_markdown([_item(UHL)], now=datetime(2025, 1, 2, tzinfo=timezone.utc))
    assert md.endswith("UTC · method: best · judge: none\n")
