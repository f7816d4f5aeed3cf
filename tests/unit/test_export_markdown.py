"""Markdown exports render paper text as text (checked with a real CommonMark parser) and their citation keys are
the BibTeX export's.

Each sentence of the Markdown evidence carries the citation key the BibTeX export gives its paper."""

from __future__ import annotations

import re

import pytest
from markdown_it import MarkdownIt

from evtui.export import Selected, to_bibtex, to_markdown
from evtui.models import Aspect, Paper, Span

PAPER = Paper(id="PMC1", title="C# and the ## of trials #", authors=["Ann Lee"], year=2020, journal="J",
              doi="10.1/x_y", pmid=None, pmcid="PMC1", licence=None, source_path="", source_format="jats",
              content_hash="")
OTHER = Paper(id="scifact:7", title="Statins lower LDL", authors=[], year=None, journal=None, doi=None, pmid=None,
              pmcid=None, licence=None, source_path="corpus.jsonl", source_format="corpus-jsonl", content_hash="")


def _item(text: str, sid: str = "PMC1:1", paper: Paper = PAPER, spans: list[Span] | None = None,
          verdict: dict[str, object] | None = None) -> Selected:
    return Selected(sentence_id=sid, query="statins # lower LDL", mode="claim",
                    aspects=[Aspect("a1", "statins", ["statins"])], highlights=spans or [], method="best", score=1.0,
                    text=text, section="Results", paper=paper, verdict=verdict)


def _quote(text: str, spans: list[Span] | None = None) -> str:
    """The rendered HTML of the blockquote that holds `text`."""
    html = MarkdownIt("commonmark").render(to_markdown([_item(text, spans=spans)]))
    m = re.search(r"<blockquote>\n(.*?)</blockquote>", html, re.S)
    assert m is not None, html
    return m.group(1)


@pytest.mark.parametrize("text", [
    "# of patients improved after 12 weeks.",
    "- 5 mg daily was given.",
    "+ 2 mm in the treated arm.",
    "1. Introduction of statins lowered LDL.",
    "12) patients withdrew.",
    "---",
    "    four spaces first",
])
def test_a_sentence_that_looks_like_a_block_is_text(text: str) -> None:
    html = _quote(text)
    assert html == f"<p>{text.strip()}</p>\n", html  # one paragraph: no heading, list, rule or code block


def test_inline_specials_are_text() -> None:
    text = "A *bold* _claim_ | a | b | <b>x</b> [l](javascript:x) ~~s~~ & C #"
    assert _quote(text) == ("<p>A *bold* _claim_ | a | b | &lt;b&gt;x&lt;/b&gt; [l](javascript:x) ~~s~~ &amp; C #"
                            "</p>\n")
    # a match at the start of a list-like sentence is still bold, the marker still text
    assert _quote("- statins lowered LDL", [Span("a1", 2, 9)]) == (
        "<p>- <strong>statins</strong><sub>a1</sub> lowered LDL</p>\n")


def test_headings_keep_a_trailing_hash() -> None:
    html = MarkdownIt("commonmark").render(to_markdown([_item("x")]))
    assert "<h2>statins # lower LDL</h2>" in html and "<h3>1. C# and the ## of trials #</h3>" in html


def test_references_carry_the_bibtex_keys() -> None:
    items = [_item("x"), _item("y", "scifact:7:2", OTHER), _item("z", "PMC1:3")]
    md = to_markdown(items)
    keys = re.findall(r"@\w+\{([^,]+),", to_bibtex(items))
    refs = md.split("## References", 1)[1]
    assert sorted(re.findall(r"^- `([a-z0-9]+)` ", refs, re.M)) == sorted(keys) == ["lee2020c", "statins"]
    assert refs.count("\n- ") == 2  # one line per paper, however many of its sentences were picked
    assert "## References" not in to_markdown(items, references=False)


def test_the_footer_says_the_local_judge_is_offline() -> None:
    v = {"score": 80, "level": 4, "stance": "supports", "confidence": 7, "rationale": "why", "judge": "local",
         "model": "evtui-local-r+v"}
    md = to_markdown([_item("x", verdict=v)])
    assert "judge: local (evtui-local-r+v) · the local judge is evtui's offline rubric" in md and "not an LLM" in md
    llm = dict(v, judge="llm", model="openai/gpt-4o-mini")
    assert "not an LLM" not in to_markdown([_item("x", verdict=llm)])


def _keyed_item(pid: str, title: str, query: str) -> Selected:
    # SciFact-like corpus abstracts: no authors, no year, so both papers' base keys are "association" and the
    # keys differ only by hash letters: matching a heading to the References list by eye is where drafts went wrong.
    p = Paper(id=pid, title=title, authors=[], year=None, journal=None, doi=None, pmid=None, pmcid=None,
              licence=None, source_path="corpus.jsonl", source_format="corpus-jsonl", content_hash="h")
    return Selected(sentence_id=f"{pid}:1", query=query, mode="claim", aspects=[], highlights=[], method="best",
                    score=1.0, text=f"A sentence of {pid}.", section="Abstract", paper=p)


def test_each_sentence_names_its_bibtex_key() -> None:
    items = [_keyed_item("scifact:43334921", "Association of aspirin and NSAID use with risk of colorectal cancer", "q1"),
             _keyed_item("scifact:26064662", "Association of Sickle Cell Trait With Hemoglobin A1c", "q2"),
             _keyed_item("scifact:43334921", "Association of aspirin and NSAID use with risk of colorectal cancer", "q2")]
    items[2].sentence_id = "scifact:43334921:2"
    bib_keys = re.findall(r"^@\w+\{([a-z0-9]+),$", to_bibtex(items), re.M)
    assert len(set(bib_keys)) == 2
    md = to_markdown(items)
    body = md.split("## References")[0]
    cited = re.findall(r"^- Citation: `([a-z0-9]+)` ", body, re.M)
    # one key per sentence, in order, each the one the .bib gives that sentence's paper
    assert cited == [bib_keys[0], bib_keys[1], bib_keys[0]]
