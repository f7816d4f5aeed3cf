"""Loaders on real samples (tests/fixtures/core, cut from the public datasets) and on broken input."""

from __future__ import annotations

import gzip
import json
from collections import Counter
from pathlib import Path

import pytest

from evtui.errors import IngestError
from evtui.ingest import detect_format, discover, iter_papers, section_kind
from evtui.models import ParsedPaper

CORE = Path(__file__).parents[1] / "fixtures" / "core"


def papers(path: Path, fmt: str = "auto") -> list[ParsedPaper]:
    out = list(iter_papers(path, fmt))
    assert all(isinstance(p, ParsedPaper) for p in out), out
    return out  # type: ignore[return-value]


def errors(path: Path) -> list[IngestError]:
    out = list(iter_papers(path))
    assert out and all(isinstance(e, IngestError) for e in out), out
    return out  # type: ignore[return-value]


def test_jats_front_matter_sections_and_no_references() -> None:
    (p,) = papers(CORE / "PMC2852030.xml")
    assert p.id == "PMC2852030" and p.pmcid == "PMC2852030" and p.pmid == "18987909"
    assert p.doi == "10.1007/s00261-008-9471-x" and p.year == 2008 and p.journal == "Abdominal Imaging"
    assert p.authors[0] == "Hiromu Mori"
    assert p.sentences[0].section_kind == "title" and p.sentences[0].text == p.title
    kinds = Counter(s.section_kind for s in p.sentences)
    assert kinds["abstract"] >= 5 and kinds["conclusion"] >= 1
    headings = [s.text for s in p.sentences if s.is_heading]
    assert "Conclusion" in headings and "References" not in headings
    text = " ".join(s.text for s in p.sentences)
    assert "<" not in text and "Fig." not in headings


def _abstract_paragraph_sentences(xml: Path) -> list[str]:
    """The sentences of the main <abstract>'s paragraphs, read straight from the XML (no loader involved)."""
    from lxml import etree

    from evtui.ingest.splitter import split_sentences

    root = etree.parse(str(xml), etree.XMLParser(resolve_entities=False, no_network=True)).getroot()
    ab = next(a for a in root.iter("abstract") if a.get("abstract-type") is None)
    return [s for para in ab.iter("p") for s in split_sentences(" ".join("".join(para.itertext()).split()))]


def test_jats_abstract_is_read_once() -> None:
    # lxml's "{*}abstract" matches the un-namespaced element too: the loader asked for "{*}abstract" and "abstract"
    # and stored every JATS abstract twice, the same sentences under two ids.
    (p,) = papers(CORE / "PMC2852030.xml")
    abstract = [s.text for s in p.sentences if s.section_kind == "abstract" and not s.is_heading]
    assert abstract == _abstract_paragraph_sentences(CORE / "PMC2852030.xml")
    assert [s.section_kind for s in p.sentences[1:1 + len(abstract)]] == ["abstract"] * len(abstract)
    assert p.sentences[1 + len(abstract)].section_kind != "abstract"  # the body follows at once


def test_jats_teaser_is_kept_as_its_own_section_after_the_abstract() -> None:
    jats = Path(__file__).parents[2] / "data" / "demo" / "jats" / "PMC6398430.nxml"
    (p,) = papers(jats)
    main = _abstract_paragraph_sentences(jats)
    got = [(s.section_title, s.is_heading, s.text) for s in p.sentences[1:len(main) + 4]]
    assert got[:len(main)] == [("Abstract", False, t) for t in main]  # positions 1..10, as before
    assert got[len(main):] == [
        ("Teaser", True, "Teaser"),
        ("Teaser", False, "With data collected over a 1-year period, we detail the spatio-temporal structure of a "
                          "flock of crows displaying distinct social categories."),
        ("Teaser", False, "Presence of carrion and hooded crows was affected by the environmental factors that "
                          "modulate the party size component of fission–fusion dynamics and thereby influence "
                          "social complexity."),
    ]
    assert {s.section_kind for s in p.sentences[1:len(main) + 4]} == {"abstract"}
    assert p.sentences[len(main) + 4].text == "INTRODUCTION" and p.sentences[len(main) + 4].is_heading
    text = [s.text for s in p.sentences if not s.is_heading]
    assert len(text) == len(set(text))  # no sentence of this paper twice


_EXTRA_ABSTRACTS = """<?xml version="1.0"?>
<article{ns}><front><article-meta>
<article-id pub-id-type="pmc">123</article-id><article-id pub-id-type="doi">10.1/x</article-id>
<title-group><article-title>A trial of several things in adults</article-title></title-group>
<abstract abstract-type="graphical"><p>A picture of the trial design.</p></abstract>
<abstract abstract-type="author-summary"><title>Author Summary</title><p>People took things. It went well.</p>
</abstract>
<abstract><sec><title>Background</title><p>Things matter.</p></sec><sec><title>Results</title><p>Things worked.</p>
</sec></abstract>
<abstract abstract-type="toc"><p/></abstract>
<abstract abstract-type="executive-summary"><p>Read this first.</p></abstract>
</article-meta></front><body><sec><title>Introduction</title><p>Intro here.</p></sec></body></article>"""


@pytest.mark.parametrize("ns", ["", ' xmlns="http://jats.nlm.nih.gov/ns/archiving/1.3/"'])
def test_jats_extra_abstracts_are_labelled_sections(tmp_path: Path, ns: str) -> None:
    f = tmp_path / "extra.xml"
    f.write_text(_EXTRA_ABSTRACTS.format(ns=ns), encoding="utf-8")
    (p,) = papers(f)
    assert p.id == "PMC123" and p.doi == "10.1/x"
    assert [(s.section_title, s.section_kind, s.is_heading, s.text) for s in p.sentences] == [
        ("Title", "title", False, "A trial of several things in adults"),
        ("Background", "abstract", True, "Background"), ("Background", "abstract", False, "Things matter."),
        ("Results", "abstract", True, "Results"), ("Results", "abstract", False, "Things worked."),
        ("Author Summary", "abstract", True, "Author Summary"),  # its own <title>
        ("Author Summary", "abstract", False, "People took things."),
        ("Author Summary", "abstract", False, "It went well."),
        ("Executive summary", "abstract", True, "Executive summary"),  # labelled by its type
        ("Executive summary", "abstract", False, "Read this first."),
        # the graphical abstract (a picture) and the empty toc one give nothing
        ("Introduction", "introduction", True, "Introduction"), ("Introduction", "introduction", False, "Intro here."),
    ]


def test_jats_lone_typed_abstract_is_the_abstract(tmp_path: Path) -> None:
    f = tmp_path / "summary.xml"
    f.write_text('<article><front><article-meta><title-group><article-title>T</article-title></title-group>'
                 '<abstract abstract-type="summary"><p>Only this one.</p></abstract></article-meta></front>'
                 '<body><p>Body.</p></body></article>', encoding="utf-8")
    (p,) = papers(f)
    assert [(s.section_title, s.section_kind, s.is_heading, s.text) for s in p.sentences][1:] == [
        ("Abstract", "abstract", False, "Only this one."), ("Main text", "other", False, "Body."),
    ]


def test_pubtator_and_bioc_agree() -> None:
    pt = papers(CORE / "cdr3.pubtator.txt")
    bioc = papers(CORE / "cdr2.bioc.xml")
    assert [p.id for p in pt] == ["PMID:6794356", "PMID:6504332", "PMID:6436733"]
    assert [p.id for p in bioc] == ["PMID:6794356", "PMID:6504332"]
    assert pt[0].title == bioc[0].title == "Tricuspid valve regurgitation and lithium carbonate toxicity in a newborn infant."
    assert [s.text for s in pt[0].sentences] == [s.text for s in bioc[0].sentences]
    assert all(s.section_kind == "abstract" for s in pt[0].sentences[1:])


def test_corpus_jsonl_keeps_given_sentences() -> None:
    rows = [json.loads(line) for line in (CORE / "scifact5.jsonl").read_text().splitlines()]
    ps = papers(CORE / "scifact5.jsonl")
    assert [p.id for p in ps] == [f"scifact:{r['doc_id']}" for r in rows]
    for p, r in zip(ps, rows, strict=True):
        assert [s.text for s in p.sentences[1:]] == [" ".join(x.split()) for x in r["abstract"]]
    cc = papers(CORE / "checkcovid3.json")
    assert detect_format(CORE / "checkcovid3.json") == "corpus-jsonl"
    assert cc[0].id == "cord:8vp57c1o"


def test_evidencebench_maps_indices_one_to_one() -> None:
    data = json.loads((CORE / "evidencebench2.json").read_text())
    ps = {p.id: p for p in papers(CORE / "evidencebench2.json")}
    for item in data.values():
        p = ps[item["paper_id"]]
        assert [s.text for s in p.sentences] == item["paper_as_candidate_pool"]
        for s, typ in zip(p.sentences, item["sentence_types_in_candidate_pool"], strict=True):
            assert s.is_heading == (typ == "section_name")
            if typ == "abstract":
                assert s.section_kind == "abstract"
    assert ps["pubmed_8597119"].title.startswith("Genetic susceptibility")


def test_gzip_is_transparent(tmp_path: Path) -> None:
    gz = tmp_path / "c.jsonl.gz"
    gz.write_bytes(gzip.compress((CORE / "scifact5.jsonl").read_bytes()))
    assert detect_format(gz) == "corpus-jsonl"
    assert len(papers(gz)) == 5


def test_text_and_markdown(tmp_path: Path) -> None:
    md = tmp_path / "note.md"
    md.write_text("# My title\n\n## Results\n\nIL-6 rose (p < 0.05). TNF-α fell.\n", encoding="utf-8")
    (p,) = papers(md)
    assert p.title == "My title" and p.id.startswith("file:note-")
    assert [(s.section_kind, s.is_heading, s.text) for s in p.sentences] == [
        ("title", False, "My title"), ("results", True, "Results"),
        ("results", False, "IL-6 rose (p < 0.05)."), ("results", False, "TNF-α fell."),
    ]
    latin = tmp_path / "latin.txt"
    latin.write_bytes("Résumé of the café study.\n\nThe effect was small.".encode("latin-1"))
    (q,) = papers(latin)
    assert "Résumé" in q.sentences[0].text


@pytest.mark.parametrize("title,kind", [
    ("Results", "results"), ("3. Findings", "results"), ("Outcomes", "results"), ("Materials and methods", "methods"),
    ("2.1 Statistical analysis", "methods"), ("Background", "introduction"), ("DISCUSSION", "discussion"),
    ("Conclusions:", "conclusion"), ("Abstract", "abstract"), ("Acknowledgements", "other"), ("", "other"),
])
def test_section_kinds(title: str, kind: str) -> None:
    assert section_kind(title) == kind


def test_discover_skips_docs_and_reports_missing(tmp_path: Path) -> None:
    (tmp_path / "README.md").write_text("about")
    (tmp_path / "paper.md").write_text("# T\n\nText.")
    (tmp_path / ".hidden.md").write_text("# H")
    files, errs = discover([tmp_path, tmp_path / "nope.xml"])
    assert [f.name for f in files] == ["paper.md"]
    assert {Path(e.path).name for e in errs} == {"README.md", "nope.xml"}


@pytest.mark.parametrize("name,content,reason", [
    ("trunc.xml", (CORE / "PMC2852030.xml").read_bytes()[:5000], "malformed"),
    ("bad.json", b'{"evidencebench_x": {"paper_as_candidate_pool": [', "invalid JSON"),
    ("bin.xml", bytes(range(256)) * 40, "binary"),
    ("empty.json", b"", "empty"),
    ("blank.txt", b"   \n\n  ", "empty"),
    ("other.json", b'{"hello": "world"}', "unknown schema"),
    ("latin.json", '{"doc_id": 1, "title": "caf\xe9", "abstract": ["x"]}\n'.encode("latin-1"), "line 1"),
])
def test_broken_files_give_clear_errors(tmp_path: Path, name: str, content: bytes, reason: str) -> None:
    f = tmp_path / name
    f.write_bytes(content)
    errs = errors(f)
    assert errs[0].path == str(f)
    assert reason.lower() in errs[0].reason.lower()


def test_xml_entities_are_never_resolved(tmp_path: Path) -> None:
    xxe = tmp_path / "xxe.xml"
    xxe.write_text('<?xml version="1.0"?><!DOCTYPE article [<!ENTITY x SYSTEM "file:///etc/passwd">]>'
                   "<article><front><article-meta><title-group><article-title>T &x;</article-title>"
                   "</title-group></article-meta></front><body><p>Body text here.</p></body></article>")
    out = list(iter_papers(xxe))
    text = " ".join(s.text for p in out if isinstance(p, ParsedPaper) for s in p.sentences)
    assert "root:" not in text
    bomb = tmp_path / "bomb.xml"
    ents = "".join(f'<!ENTITY l{i} "&l{i - 1};&l{i - 1};&l{i - 1};&l{i - 1};">' for i in range(1, 12))
    bomb.write_text(f'<?xml version="1.0"?><!DOCTYPE article [<!ENTITY l0 "lol">{ents}]>'
                    "<article><body><p>&l11;</p></body></article>")
    out = list(iter_papers(bomb))
    size = sum(len(s.text) for p in out if isinstance(p, ParsedPaper) for s in p.sentences)
    assert size < 10_000


def test_one_bad_line_keeps_the_rest(tmp_path: Path) -> None:
    lines = (CORE / "scifact5.jsonl").read_text().splitlines()
    lines.insert(2, '{"doc_id": 99, "title": "x", "abstract": [')
    f = tmp_path / "mixed.jsonl"
    f.write_text("\n".join(lines))
    out = list(iter_papers(f))
    assert sum(isinstance(p, ParsedPaper) for p in out) == 5
    (err,) = [e for e in out if isinstance(e, IngestError)]
    assert "line 3" in err.reason


def test_huge_single_line(tmp_path: Path) -> None:
    f = tmp_path / "huge.txt"
    f.write_text("word " * 2_000_000)  # 10 MB, one line, no sentence end
    (p,) = papers(f)
    assert sum(len(s.text) for s in p.sentences) > 9_000_000


def test_cord_doc2json_sections() -> None:
    (p,) = papers(CORE / "cord_doc2json.json")
    assert detect_format(CORE / "cord_doc2json.json") == "cord"
    assert p.id == "cord:0a1b2c3d4e" and p.authors == ["Ana Lopez", "Wei Chen"]
    assert [(s.section_kind, s.is_heading) for s in p.sentences][:3] == [
        ("title", False), ("abstract", False), ("abstract", False)]
    results = [s.text for s in p.sentences if s.section_kind == "results" and not s.is_heading]
    assert results == ["Saliva detected 96% of swab-positive cases (95% CI 90-99).", "Sensitivity was lower after day 10."]
    assert "Testing capacity limits outbreak control (Smith et al., 2020)." in [s.text for s in p.sentences]
