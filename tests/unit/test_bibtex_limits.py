"""A BibTeX file of a few KB never grows without bound: @string abbreviations that double at every level, many
abbreviations of a MB each, and entries of many such fields are refused entry by entry, in one line each, and the
file's other entries are read."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

from evtui.errors import IngestError
from evtui.ingest.refs import MAX_VALUE_CHARS, load_bibtex, parse_bibtex
from evtui.models import ParsedPaper


def _doubling(levels: int) -> list[str]:
    lines = ['@string{m0 = "abcdefghij"}']
    lines += [f"@string{{m{k} = m{k - 1} # m{k - 1}}}" for k in range(1, levels + 1)]
    return lines


def _read(tmp_path: Path, text: str) -> tuple[list[ParsedPaper], list[IngestError]]:
    path = tmp_path / "refs.bib"
    path.write_text(text, encoding="utf-8")
    tracemalloc.start()
    try:
        got = list(load_bibtex(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 200 * 2**20, f"reading a {len(text):,}-byte .bib took {peak / 2**20:.0f} MB"
    return [g for g in got if isinstance(g, ParsedPaper)], [g for g in got if isinstance(g, IngestError)]


def test_doubling_abbreviations_refuse_their_entry_only(tmp_path: Path) -> None:
    text = "\n".join([*_doubling(40), "@article{bomb, title = m40, year = 2020}",
                      "@article{good, title = {Aspirin and the heart: a trial}, year = 2021}"])
    assert len(text) < 2000
    papers, errors = _read(tmp_path, text)
    assert [p.title for p in papers] == ["Aspirin and the heart: a trial"]
    assert len(errors) == 1 and "entry bomb:" in errors[0].reason and "m40" in errors[0].reason
    assert "\n" not in errors[0].reason


def test_an_abbreviation_under_the_limit_is_expanded(tmp_path: Path) -> None:
    text = "\n".join([*_doubling(3), "@article{ok, title = m3 # { tail}, year = 2020}"])
    papers, errors = _read(tmp_path, text)
    assert not errors and papers[0].title == "abcdefghij" * 8 + " tail"


def test_many_large_abbreviations_are_bounded_together(tmp_path: Path) -> None:
    # 16 levels: 655,360 characters, under the value limit; 200 abbreviations of twice that would be 260 M
    lines = _doubling(16) + [f"@string{{big{k} = m16 # {{x}}}}" for k in range(200)]
    lines += [f"@article{{e{k}, title = big{k}}}" for k in range(0, 200, 50)]
    lines.append("@article{good, title = {A small entry after them}}")
    papers, errors = _read(tmp_path, "\n".join(lines))
    assert papers[-1].title == "A small entry after them"
    assert errors, "at least the later abbreviations are refused"


def test_one_entry_of_many_large_fields_is_refused(tmp_path: Path) -> None:
    fields = ", ".join(f"note{k} = m16" for k in range(50))
    text = "\n".join([*_doubling(16), f"@misc{{wide, title = {{Wide}}, {fields}}}", "@misc{next, title = {Next}}"])
    got = list(parse_bibtex(text))
    assert "__error__" in got[0][2] and got[1][2]["title"] == "Next"
    assert sum(len(v) for v in got[0][2].values()) < 2 * MAX_VALUE_CHARS + 1000
