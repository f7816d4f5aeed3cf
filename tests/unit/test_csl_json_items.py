"""CSL-JSON: one item with a field of the wrong type (`"author": 5`, `"issued": {"date-parts": 5}`, a `file` with a
NUL) is one line naming it; the items before and after it load (all of them were lost, as an internal error)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.errors import IngestError
from evtui.ingest import iter_papers
from evtui.models import ParsedPaper


def _item(n: int, **extra: object) -> dict[str, object]:
    return {"id": f"item{n}", "type": "article-journal", "title": f"Aspirin and fever, part {n} of a long series",
            "author": [{"family": "Smith", "given": "Ann"}], "issued": {"date-parts": [[2020]]}, **extra}


@pytest.mark.parametrize("bad", [{"author": 5}, {"author": [{"family": {"x": 1}, "given": 3}], "title": 7},
                                 {"issued": {"date-parts": [5]}, "author": None}, {"file": "a\x00b.pdf"},
                                 {"author": [[1, 2]], "issued": {"date-parts": [[{"y": 1}]]}}],
                         ids=["author-number", "odd-types", "date-parts", "nul-file", "nested"])
@pytest.mark.parametrize("where", [0, 1, 2])
def test_one_bad_item_is_one_line(tmp_path: Path, bad: dict[str, object], where: int) -> None:
    items = [_item(n) for n in range(3)]
    items[where] = {**items[where], **bad}
    path = tmp_path / "library.json"
    path.write_text(json.dumps(items), encoding="utf-8")
    got = list(iter_papers(path, "csl-json"))
    papers = [g for g in got if isinstance(g, ParsedPaper)]
    errors = [g for g in got if isinstance(g, IngestError)]
    assert len(papers) + len(errors) == 3
    assert len(papers) >= 2, [e.reason for e in errors]
    for e in errors:
        assert f"item {where + 1} (item{where})" in e.reason and "internal error" not in e.reason
