"""BibTeX a reference manager accepts: verbatim DOIs, entry types from what is known, protected acronyms, braced
organisations, ASCII keys; checked with the real `bibtex` where it is installed.

A name suffix (Jr., III) must not become the BibTeX family name."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from bibtex_names import bib_families

from evtui.export import Selected, bib_author, bib_title, entry_type, to_bibtex
from evtui.models import Aspect, Paper, Span


def _paper(pid: str, title: str, authors: list[str] | None = None, year: int | None = 2020, *,
           source_format: str = "jats", **kw: str) -> Paper:
    return Paper(id=pid, title=title, authors=authors or [], year=year, journal=kw.get("journal"), doi=kw.get("doi"),
                 pmid=kw.get("pmid"), pmcid=kw.get("pmcid"), licence=None, source_path="x", source_format=source_format,
                 content_hash="", n_sentences=1)


def _item(paper: Paper, sid: str, *, item_type: str | None = None,
          sections: frozenset[str] = frozenset()) -> Selected:
    return Selected(sentence_id=sid, query="q", mode="claim", aspects=[Aspect("a1", "x", ["x"])],
                    highlights=[Span("a1", 0, 1)], method="best", score=1.0, text="x", section="Results",
                    paper=paper, item_type=item_type, sections=sections)


def _entries(bib: str) -> dict[str, tuple[str, str]]:
    """key -> (entry type, body)."""
    return {m.group(2): (m.group(1), m.group(3)) for m in re.finditer(r"@(\w+)\{([^,]+),\n(.*?)\n\}", bib, re.S)}


def test_doi_is_verbatim_not_tex_escaped() -> None:
    bib = to_bibtex([_item(_paper("p1", "T", ["Ann Lee"], journal="J", doi="10.1000/abc_123"), "p1:1"),
                     _item(_paper("p2", "U", ["Bo Kim"], journal="J", doi="10.1002/(SICI)1097{x}"), "p2:1")])
    assert "doi = {10.1000/abc_123}" in bib  # was 10.1000/abc\_123: the backslash became part of the DOI
    assert "doi = {10.1002/(SICI)1097%7Bx%7D}" in bib  # a brace would end the field: percent-encoded as in URLs


@pytest.mark.parametrize(("paper", "item_type", "sections", "want"), [
    (_paper("a", "T", journal="Nature", source_format="pdf"), None, frozenset(), "article"),
    (_paper("b", "T", source_format="corpus-jsonl"), None, frozenset({"abstract"}), "article"),
    (_paper("c", "T", source_format="text"), None, frozenset({"abstract", "results"}), "article"),
    (_paper("d", "Shopping list", source_format="text"), None, frozenset({"other"}), "misc"),
    (_paper("e", "T", doi="10.1101/2023.01.01.123456", source_format="bibtex"), None, frozenset(), "misc"),
    (_paper("f", "T", journal="medRxiv", source_format="pdf"), None, frozenset({"results"}), "misc"),
    (_paper("g", "T", doi="10.1101/gad.1234", journal="Genes Dev"), None, frozenset(), "article"),  # CSHL journal
    (_paper("h", "T", source_format="bibtex"), None, frozenset({"title", "abstract"}), "misc"),
    (_paper("i", "T", journal="Handbook", source_format="bibtex"), "bookSection", frozenset(), "incollection"),
    (_paper("j", "T", journal="Proc. X", source_format="zotero"), "conferencePaper", frozenset(), "inproceedings"),
    (_paper("k", "T", source_format="ris"), "THES", frozenset(), "phdthesis"),
    (_paper("l", "T", source_format="csl-json"), "article-journal", frozenset(), "article"),
    (_paper("m", "T", source_format="bibtex"), "unpublished", frozenset(), "misc"),
])
def test_entry_type_follows_what_is_known(paper: Paper, item_type: str | None, sections: frozenset[str],
                                          want: str) -> None:
    assert entry_type(paper, item_type, sections) == want


def test_venue_goes_where_the_entry_type_keeps_it() -> None:
    chap = _paper("doi:10.1/c", "Statins", ["Ann Lee"], journal="Handbook of Lipidology", source_format="bibtex")
    bib = to_bibtex([_item(chap, "c:1", item_type="incollection")])
    assert bib.startswith("@incollection{lee2020statins,") and "booktitle = {Handbook of Lipidology}" in bib
    assert "journal" not in bib
    pre = _paper("doi:10.1101/2023.01.01.1", "Crows", ["Ann Lee"], doi="10.1101/2023.01.01.123456",
                 source_format="bibtex")
    assert "@misc{" in to_bibtex([_item(pre, "p:1")]) and "note = {Preprint}" in to_bibtex([_item(pre, "p:1")])


def test_titles_keep_their_acronyms_and_names_survive() -> None:
    assert bib_title("mRNA Vaccines and COVID-19 in the UK: A Trial of Vitamin D in T cells and Ki-67") == (
        "{mRNA} Vaccines and {COVID-19} in the {UK}: A Trial of Vitamin {D} in {T} cells and {Ki-67}")
    assert bib_title("Effect of 10% {x} \\input") == r"Effect of 10\% (x) \textbackslash{}input"
    org = _paper("o", "A", ["World Health Organization", "Centers for Disease Control and Prevention", "Ørjan Ødegaard"],
                 journal="J")
    bib = to_bibtex([_item(org, "o:1")])
    assert "author = {{World Health Organization} and {Centers for Disease Control and Prevention} and Ørjan " \
           "Ødegaard}" in bib  # an organisation is one name, not "Organization, World Health" + "Prevention"
    assert bib.startswith("@article{worldhealthorganization2020,")  # its key uses its name, not "organization"


def test_keys_are_unique_ascii_and_independent_of_order() -> None:
    papers = [_paper(f"p{i}", t, a, journal="J") for i, (t, a) in enumerate([
        ("Über die Wirkung", ["José Gómez"]), ("Über die Wirkung", ["José Gómez"]), ("{Brace} me", ["Ann {X} Lee"]),
        ("", []), ("", [])])]
    items = [_item(p, f"{p.id}:1") for p in papers]
    one, two = _entries(to_bibtex(items)), _entries(to_bibtex(items[::-1]))
    assert set(one) == set(two) and len(one) == 5
    assert all(re.fullmatch(r"[a-z][a-z0-9]*", k) for k in one), one.keys()


@pytest.mark.skipif(shutil.which("bibtex") is None, reason="no bibtex installed")
def test_real_bibtex_reads_every_entry(tmp_path: Path) -> None:
    items = [
        _item(_paper("a", "mRNA Vaccines Reduce COVID-19", ["World Health Organization", "Wei Chen"],
                     doi="10.1101/2023.01.01.123456", source_format="bibtex"), "a:1"),
        _item(_paper("b", "Statins & LDL: 50% of {cases}", ["José Gómez"], journal="Handbook", doi="10.1000/a_b",
                     source_format="bibtex"), "b:1", item_type="bookSection"),
        _item(_paper("c", "Aspirin in the UK", ["Anna Müller"], source_format="ris"), "c:1", item_type="THES"),
    ]
    (tmp_path / "refs.bib").write_text(to_bibtex(items), encoding="utf-8")
    (tmp_path / "t.aux").write_text("\\citation{*}\n\\bibstyle{plain}\n\\bibdata{refs}\n", encoding="utf-8")
    run = subprocess.run(["bibtex", "t"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert run.returncode < 2 and "error message" not in run.stdout, run.stdout  # 1 = warnings only
    bbl = (tmp_path / "t.bbl").read_text(encoding="utf-8")
    assert bbl.count("\\bibitem{") == 3
    assert "{mRNA} vaccines reduce {COVID-19}" in bbl  # plain lower-cases titles; the acronyms survive
    assert "{World Health Organization} and Wei Chen" in bbl
    assert "In {\\em Handbook}" in bbl  # a chapter: in the book, not a journal


def _suffix_paper(authors: list[str]) -> Paper:
    return Paper(id="doi:10.1000/xyz", title="The BRCA1 gene", authors=authors, year=2021, journal="Nat. Genet.",
                 doi="10.1000/xyz", pmid=None, pmcid=None, licence=None, source_path="refs.bib",
                 source_format="bibtex", content_hash="h")


def test_suffix_is_not_the_family_name_in_bibtex() -> None:
    # `evtui ingest` of a .bib with "Smith, Jr., John" stores "John Smith Jr." (seen in a real session): the export
    # wrote it back as is, and every reference manager read the family name as "Jr.".
    p = _suffix_paper(["John Smith Jr.", "Martin Luther King III", "Anna van der Berg Jr.", "Hans Müller"])
    item = Selected(sentence_id="doi:10.1000/xyz:1", query="q", mode="claim", aspects=[], highlights=[],
                    method="best", score=1.0, text="x", section="Abstract", paper=p)
    bib = to_bibtex([item])
    field = next(line for line in bib.splitlines() if line.strip().startswith("author = "))
    value = field.split("{", 1)[1].rsplit("}", 1)[0]
    assert bib_families(value) == ["Smith", "King", "van der Berg", "Müller"]
    assert "Smith, Jr., John" in value and "van der Berg, Jr., Anna" in value


def test_names_without_a_suffix_are_unchanged() -> None:
    assert bib_author("John Smith") == "John Smith"
    assert bib_author("Smith, Jr., John") == "Smith, Jr., John"
    assert bib_author("Mary Jane ii") == "Mary Jane ii"  # not a capitalised suffix
    assert bib_author("World Health Organization") == "{World Health Organization}"
