"""A name suffix (Jr., III) must not become the BibTeX family name."""

from __future__ import annotations

from bibtex_names import bib_families

from evtui.export import Selected, bib_author, to_bibtex
from evtui.models import Paper


def _paper(authors: list[str]) -> Paper:
    return Paper(id="doi:10.1000/xyz", title="The BRCA1 gene", authors=authors, year=2021, journal="Nat. Genet.",
                 doi="10.1000/xyz", pmid=None, pmcid=None, licence=None, source_path="refs.bib",
                 source_format="bibtex", content_hash="h")


def test_suffix_is_not_the_family_name_in_bibtex() -> None:
    # `evtui ingest` of a .bib with "Smith, Jr., John" stores "John Smith Jr." (seen in a real session): the export
    # wrote it back as is, and every reference manager read the family name as "Jr.".
    p = _paper(["John Smith Jr.", "Martin Luther King III", "Anna van der Berg Jr.", "Hans Müller"])
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
