"""Text from a paper reaches a terminal harmless in every output: `--json` escapes C1 controls (U+009B is an 8-bit
CSI) and bidi overrides (U+202E shows the rest of the line reversed) as \\uXXXX, the same JSON to a parser; plain
output shows them as spaces. The stored text keeps them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.render import json_text, printable

RAW = re.compile("[\x80-\x9f\u202a-\u202e\u2066-\u2069]")
TITLE = "Aspirin \x9b31m lowers fever \u202egnp.exe in adults \u2066isolated\u2069 over two days"


@pytest.fixture
def ingested(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> str:
    path = tmp_path / "library.json"
    path.write_text(json.dumps([{"id": "evil", "type": "article-journal", "title": TITLE,
                                 "issued": {"date-parts": [[2020]]},
                                 "abstract": f"{TITLE}. A second sentence with \x85 and \u202d in it."}]),
                    encoding="utf-8")
    assert main(["ingest", str(path)]) == 0
    capsys.readouterr()
    return "csl:evil"


@pytest.mark.parametrize("argv", [["papers", "--json"], ["show", "csl:evil", "--json"],
                                  ["search", "aspirin fever", "--json"]])
def test_json_output_escapes_them(ingested: str, capsys: pytest.CaptureFixture[str], argv: list[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert not RAW.search(out), [hex(ord(c)) for c in RAW.findall(out)]
    assert TITLE in json.dumps(json.loads(out), ensure_ascii=False)  # the same text, once parsed


@pytest.mark.parametrize("argv", [["papers"], ["show", "csl:evil"], ["search", "aspirin fever"]])
def test_plain_output_shows_them_as_spaces(ingested: str, capsys: pytest.CaptureFixture[str],
                                           argv: list[str]) -> None:
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "lowers fever" in out.replace("\n", " ") or "Aspirin" in out
    assert not RAW.search(out), [hex(ord(c)) for c in RAW.findall(out)]


def test_json_text_round_trips_and_printable_keeps_length() -> None:
    doc = {"t": TITLE, "k\u202e": ["\x9b", "\u2028"]}
    text = json_text(doc, indent=2)
    assert not RAW.search(text) and "\u2028" not in text and json.loads(text) == doc
    assert len(printable(TITLE)) == len(TITLE) and not RAW.search(printable(TITLE))
