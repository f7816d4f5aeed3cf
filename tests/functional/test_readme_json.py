"""The documented `evtui search --json` shape (README or the user guide's scripting page) against the real CLI: a
script writer reads the keys there.

The README listed neither "method" nor "notes" at the top level nor "section_kind" / "position" in a result, all of
which the CLI prints (and a script needs "notes" to learn, say, that a concept matched nothing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evtui.cli import main

ROOT = Path(__file__).resolve().parents[2]


def readme_search_shape() -> tuple[list[str], list[str]]:
    """(top-level keys, result keys) of the one-line `{"query","mode",...}` shape the docs give for search."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]
    text = "\n".join(p.read_text(encoding="utf-8") for p in pages)
    line = next(x for x in text.splitlines() if x.startswith('`{"query","mode"'))
    results = line.split('"results":[{', 1)[1]
    result_keys = re.findall(r'"(\w+)"', results.split('"highlights"', 1)[0]) + ["highlights"]
    top = re.sub(r"\[\{[^\]]*\}\]", "", line.split('"results"', 1)[0])  # drop the aspects' own keys
    top_keys = re.findall(r'"(\w+)"', top) + ["results"]
    return top_keys, result_keys


def test_the_readme_names_every_key_of_search_json(papers_ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "aspirin reduces colorectal cancer", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    top_keys, result_keys = readme_search_shape()
    assert doc["results"], "the fixture library should answer this query"
    assert sorted(top_keys) == sorted(doc)
    assert sorted(result_keys) == sorted(doc["results"][0])
