"""Citation keys a draft can rely on: a paper's BibTeX key does not change with what else is selected, and a key
never passes from one paper to another."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.export import base_key, bibtex_keys
from evtui.models import Paper

# Two papers whose base key is the same (smith2020aspirin), and one whose key is another's base plus a letter.
BIB = """@article{one,
  title = {Aspirin lowers stroke risk},
  author = {Smith, Ann},
  journal = {Stroke},
  year = {2020},
  abstract = {Aspirin lowered the stroke risk of treated patients by thirty percent.}
}
@article{two,
  title = {Aspirin and bleeding},
  author = {Smith, Bo},
  journal = {Blood},
  year = {2020},
  abstract = {Gastrointestinal bleeding doubled under daily aspirin in elderly volunteers.}
}
"""


def _keys(path: Path) -> dict[str, str]:
    """title -> key of each entry of an exported .bib."""
    text = path.read_text(encoding="utf-8")
    return {t: k for k, t in re.findall(r"@\w+\{([^,]+),\n  title = \{([^}]*)", text)}


def _export(tmp_path: Path, name: str) -> dict[str, str]:
    out = tmp_path / name
    assert main(["export", "--out", str(out)]) == 0
    return _keys(out)


def test_a_papers_key_stays_when_another_paper_with_its_base_joins_the_selection(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "refs.bib").write_text(BIB, encoding="utf-8")
    assert main(["ingest", str(tmp_path / "refs.bib")]) == 0
    assert main(["select", "aspirin lowered the stroke risk", "--k", "1", "--no-judge"]) == 0
    alone = _export(tmp_path, "first.bib")
    assert list(alone) == ["Aspirin lowers stroke risk"]
    key = alone["Aspirin lowers stroke risk"]
    assert key.startswith("smith2020aspirin") and re.fullmatch(r"[a-z0-9]+", key)
    # the draft cites \cite{key}; later the other smith2020aspirin paper is selected too
    assert main(["select", "bleeding doubled under daily aspirin", "--k", "1", "--no-judge"]) == 0
    both = _export(tmp_path, "second.bib")
    assert both["Aspirin lowers stroke risk"] == key  # was smith2020aspirin, then smith2020aspirina
    assert len(set(both.values())) == 2
    # the Markdown's reference list carries the same keys
    md = tmp_path / "notes.md"
    assert main(["export", "--out", str(md)]) == 0
    refs = md.read_text(encoding="utf-8").split("## References", 1)[1]
    assert all(f"`{k}`" in refs for k in both.values())
    # and the selection's order plays no part
    assert main(["select", "--clear"]) == 0
    assert main(["select", "bleeding doubled under daily aspirin", "--k", "1", "--no-judge"]) == 0
    assert main(["select", "aspirin lowered the stroke risk", "--k", "1", "--no-judge"]) == 0
    assert _export(tmp_path, "third.bib") == both
    capsys.readouterr()


def _paper(pid: str, title: str, author: str, year: int | None = 2020) -> Paper:
    return Paper(pid, title, [author], year, None, None, None, None, None, "", "bibtex", "")


def test_a_key_never_passes_to_another_paper_as_the_library_grows() -> None:
    papers = [_paper(f"bib:{n}", f"Aspirin study {n}", "Ann Lee") for n in range(12)]
    seen: dict[str, str] = {}  # key -> the paper it ever named
    for size in range(1, len(papers) + 1):
        library = {p.id: base_key(p) for p in papers[:size]}
        for p in papers[:size]:
            key = bibtex_keys([p], library)[p.id]
            assert seen.setdefault(key, p.id) == p.id, f"{key} moved from {seen[key]} to {p.id}"
            # the same key whichever other papers are exported with it
            assert bibtex_keys(papers[:size], library)[p.id] == key
        assert len(set(bibtex_keys(papers[:size], library).values())) == size
    # a suffixed key never takes another paper's own key (lee2020aspirin + a letter = lee2020aspirina's)
    taken = {f"lee2020aspirin{c}" for c in "abcdefghijklmnopqrstuvwxyz"}
    library = {p.id: base_key(p) for p in papers} | {f"x:{k}": k for k in taken}
    keys = bibtex_keys(papers, library)
    assert not taken & set(keys.values()) and len(set(keys.values())) == len(papers)
