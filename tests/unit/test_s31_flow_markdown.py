"""s31 flow: each sentence of the Markdown evidence carries the citation key the BibTeX export gives its paper."""

from __future__ import annotations

import re

from evtui.export import Selected, to_bibtex, to_markdown
from evtui.models import Paper


def _item(pid: str, title: str, query: str) -> Selected:
    # SciFact-like corpus abstracts: no authors, no year, so both papers' base keys are "association" and the
    # keys differ only by hash letters: matching a heading to the References list by eye is where drafts went wrong.
    p = Paper(id=pid, title=title, authors=[], year=None, journal=None, doi=None, pmid=None, pmcid=None,
              licence=None, source_path="corpus.jsonl", source_format="corpus-jsonl", content_hash="h")
    return Selected(sentence_id=f"{pid}:1", query=query, mode="claim", aspects=[], highlights=[], method="best",
                    score=1.0, text=f"A sentence of {pid}.", section="Abstract", paper=p)


def test_each_sentence_names_its_bibtex_key() -> None:
    items = [_item("scifact:43334921", "Association of aspirin and NSAID use with risk of colorectal cancer", "q1"),
             _item("scifact:26064662", "Association of Sickle Cell Trait With Hemoglobin A1c", "q2"),
             _item("scifact:43334921", "Association of aspirin and NSAID use with risk of colorectal cancer", "q2")]
    items[2].sentence_id = "scifact:43334921:2"
    bib_keys = re.findall(r"^@\w+\{([a-z0-9]+),$", to_bibtex(items), re.M)
    assert len(set(bib_keys)) == 2
    md = to_markdown(items)
    body = md.split("## References")[0]
    cited = re.findall(r"^- Citation: `([a-z0-9]+)` ", body, re.M)
    # one key per sentence, in order, each the one the .bib gives that sentence's paper
    assert cited == [bib_keys[0], bib_keys[1], bib_keys[0]]
