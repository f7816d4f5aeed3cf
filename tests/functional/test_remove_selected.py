"""Removing a paper whose sentences are selected: `evtui remove` says so, and the export shows the placeholder plain
(the old highlight spans lit parts of it: "(sentence no longer in the li**brary)**")."""

from __future__ import annotations

import json

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.export import Basket
from evtui.library import Library

pytestmark = pytest.mark.usefixtures("papers_ingested")


def test_removing_a_selected_paper_says_so_and_exports_plainly(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["select", "(aspirin, reduce, colorectal cancer)", "--k", "1", "--method", "bm25-coverage",
                 "--no-judge", "--json"]) == 0
    sid = json.loads(capsys.readouterr().out)["added"][0]
    pid = sid.rsplit(":", 1)[0]
    assert main(["remove", pid]) == 0
    assert "1 selected sentence(s) came from them" in capsys.readouterr().err
    with Library(load_config()) as lib:
        (item,) = Basket(lib).items()
    assert item.text == "(sentence no longer in the library)" and item.highlights == []
