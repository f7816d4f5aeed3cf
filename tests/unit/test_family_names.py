"""A family name of several capitalised words ("García Márquez", "De la Cruz") is kept whole from
ingest (BibTeX, RIS, CSL-JSON, JATS, Zotero) to the citation, the citation key and the BibTeX export."""

from __future__ import annotations

from pathlib import Path

from bibtex_names import bib_families
from zotero_fixture import ZoteroFixture

from evtui.export import Selected, base_key, citation, display_names, to_bibtex
from evtui.ingest import iter_papers
from evtui.ingest.refs import display_name, person_name
from evtui.models import Paper


def _authors(path: Path) -> list[list[str]]:
    return [p.authors for p in iter_papers(path) if hasattr(p, "authors")]


def _paper(authors: list[str]) -> Paper:
    return Paper(id="doi:10.1000/gm", title="Cholera in the time of love", authors=authors, year=1985,
                 journal="J. Lit. Med.", doi="10.1000/gm", pmid=None, pmcid=None, licence=None,
                 source_path="refs.bib", source_format="bibtex", content_hash="h")


def test_bibtex_keeps_a_family_name_of_several_words(tmp_path: Path) -> None:
    bib = tmp_path / "refs.bib"
    bib.write_text(
        "@article{gm,\n  title = {Cholera},\n  author = {Garc{\\'\\i}a M{\\'a}rquez, Gabriel and De la Cruz, Maria"
        " and van der Berg, Anna and Smith, Jr., John and Gabriel {Garc{\\'\\i}a M{\\'a}rquez} and"
        " Ana de Souza Santos and {World Health Organization}},\n  year = {1985}\n}\n", encoding="utf-8")
    assert _authors(bib) == [["García Márquez, Gabriel", "De la Cruz, Maria", "Anna van der Berg", "John Smith Jr.",
                              "García Márquez, Gabriel", "de Souza Santos, Ana", "World Health Organization"]]


def test_ris_keeps_the_family_name_and_reads_the_suffix_last(tmp_path: Path) -> None:
    ris = tmp_path / "refs.ris"
    ris.write_text("TY  - JOUR\nTI  - Solitude\nAU  - García Márquez, Gabriel\nAU  - Smith, John, Jr.\n"
                   "AU  - Lee, Ann\nPY  - 1967\nER  - \n", encoding="utf-8")
    # RIS writes "Last, First, Suffix": the suffix was read as the given name ("Jr. Smith John")
    assert _authors(ris) == [["García Márquez, Gabriel", "John Smith Jr.", "Ann Lee"]]


def test_csl_json_keeps_the_family_name_and_its_particles(tmp_path: Path) -> None:
    csl = tmp_path / "refs.json"
    csl.write_text('[{"id": "c1", "type": "article-journal", "title": "Solitude", "author": ['
                   '{"family": "García Márquez", "given": "Gabriel"},'
                   '{"family": "Beethoven", "given": "Ludwig", "non-dropping-particle": "van"},'
                   '{"family": "Lee", "given": "Ann"}, {"literal": "WHO Study Group"}]}]', encoding="utf-8")
    assert _authors(csl) == [["García Márquez, Gabriel", "Ludwig van Beethoven", "Ann Lee", "WHO Study Group"]]


def test_jats_keeps_the_surname(tmp_path: Path) -> None:
    xml = tmp_path / "paper.xml"
    xml.write_text(
        '<?xml version="1.0"?><article><front><article-meta><article-id pub-id-type="pmcid">PMC1</article-id>'
        "<title-group><article-title>Solitude and hypoxia</article-title></title-group><contrib-group>"
        '<contrib contrib-type="author"><name><surname>García Márquez</surname><given-names>Gabriel</given-names>'
        '</name></contrib><contrib contrib-type="author"><name><surname>van Engelshoven</surname>'
        "<given-names>Jos</given-names></name></contrib></contrib-group></article-meta></front>"
        "<body><p>Solitude reduces hypoxia in mice.</p></body></article>", encoding="utf-8")
    assert _authors(xml) == [["García Márquez, Gabriel", "Jos van Engelshoven"]]


def test_zotero_keeps_the_last_name(tmp_path: Path) -> None:
    z = ZoteroFixture(tmp_path / "Zotero")
    z.add_item("IGM00001", {"title": "Solitude", "date": "1967"},
               [("Gabriel", "García Márquez"), ("Maria", "De la Cruz"), ("Florian", "Uhl"), ("", "WHO")])
    assert _authors(z.db) == [["García Márquez, Gabriel", "De la Cruz, Maria", "Florian Uhl", "WHO"]]


def test_export_cites_and_keys_the_whole_family_name() -> None:
    p = _paper(["García Márquez, Gabriel", "De la Cruz, Maria", "Anna van der Berg", "John Smith Jr."])
    item = Selected(sentence_id="doi:10.1000/gm:1", query="q", mode="claim", aspects=[], highlights=[],
                    method="best", score=1.0, text="x", section="Abstract", paper=p)
    assert base_key(p) == "garciamarquez1985cholera"
    bib = to_bibtex([item])
    assert bib.startswith("@article{garciamarquez1985cholera,")
    field = next(line for line in bib.splitlines() if line.strip().startswith("author = "))
    value = field.split("{", 1)[1].rsplit("}", 1)[0]
    assert bib_families(value) == ["García Márquez", "De la Cruz", "van der Berg", "Smith"]
    cited = citation(p)
    assert cited.startswith("Gabriel García Márquez, Maria De la Cruz, Anna van der Berg et al. (1985).")


def test_display_is_given_family_and_leaves_other_names_alone() -> None:
    assert display_name("García Márquez, Gabriel") == "Gabriel García Márquez"
    assert display_name("García Márquez, Jr., Gabriel") == "Gabriel García Márquez Jr."
    assert display_name("Florian Uhl") == "Florian Uhl"
    assert display_name("Ben and Jerry, Inc.") == "Ben and Jerry, Inc."
    assert display_name("Acme, Inc.") == "Acme, Inc."
    names = ["García Márquez, Gabriel", "John Smith", "De la Cruz, Maria", "Ann Lee"]
    assert display_names(names, 3) == "Gabriel García Márquez, John Smith, Maria De la Cruz et al."
    # what the stored form is: a name BibTeX's "Given Family" would cut is kept as "Family, Given"
    assert person_name("Gabriel", "García Márquez") == "García Márquez, Gabriel"
    assert person_name("Anna", "van der Berg") == "Anna van der Berg"
    assert person_name("John", "Smith", "Jr.") == "John Smith Jr."
    assert person_name("", "World Health Organization") == "World Health Organization"
