"""Libraries holding JATS papers that an earlier evtui read with their abstract twice: reading the file again
replaces them, the bundled demo's are read again on the next launch (its other papers, a removed one and the
selection untouched), and a note names the user's own until they are read again."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import Config
from evtui.demo import ensure_demo
from evtui.ingest import loaders
from evtui.library import Library
from evtui.models import Evidence

ROOT = Path(__file__).resolve().parents[2]
JATS = ROOT / "data" / "demo" / "jats" / "PMC6398430.nxml"
CORE = ROOT / "tests" / "fixtures" / "core"
ABSTRACT = 10  # sentences in PMC6398430's main abstract


def _earlier_reader(meta: object, out: list) -> None:
    """How evtui read JATS abstracts before the fix: each main abstract twice, the teaser dropped."""
    for _ in range(2):
        for ab in loaders._children(meta, "abstract"):  # type: ignore[arg-type]
            if ab.get("abstract-type") not in ("graphical", "teaser", "toc"):
                loaders._jats_block(ab, "Abstract", "abstract", out, fixed_kind="abstract")


def _as_an_earlier_evtui_left_it(lib: Library) -> None:
    lib.store.con.execute("DELETE FROM meta WHERE key IN ('reads_checked', 'stale_reads')")


def _abstract(lib: Library, pid: str) -> list[str]:
    return [s.text for s in lib.store.sentences(pid) if s.section_kind == "abstract" and not s.is_heading]


def _read_wrongly(monkeypatch: pytest.MonkeyPatch, cfg: Config, *paths: Path) -> None:
    with monkeypatch.context() as m:
        m.setattr(loaders, "_jats_abstracts", _earlier_reader)
        with Library(cfg) as lib:
            assert lib.ingest(list(paths)).added == len(paths)
            assert len(_abstract(lib, "PMC6398430")) == 2 * ABSTRACT
            _as_an_earlier_evtui_left_it(lib)


def test_reading_the_file_again_corrects_it_and_a_note_says_so_until_then(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = Config(home=tmp_path / "home", demo=False)
    mine = tmp_path / "papers" / "crows.nxml"
    mine.parent.mkdir()
    shutil.copy(JATS, mine)
    _read_wrongly(monkeypatch, cfg, mine)
    with Library(cfg) as lib:
        assert lib.stale_reads() == {"PMC6398430": str(mine)}
        assert lib.notes == [f"1 JATS paper(s) stored by an earlier evtui hold their abstract twice (PMC6398430): "
                             f"ingest their files again to correct them (evtui ingest {mine})"]
    with Library(cfg) as lib:  # said on every open until then
        assert len(lib.notes) == 1
    monkeypatch.setenv("EVTUI_HOME", str(cfg.home))
    assert main(["ingest", str(mine), "--json"]) == 0  # the same file, unchanged on disk: not "unchanged"
    report = json.loads(capsys.readouterr().out)
    assert (report["papers_added"], report["papers_replaced"], report["papers_unchanged"]) == (0, 1, 0)
    with Library(cfg) as lib:
        assert lib.notes == [] and lib.stale_reads() == {}
        assert lib.store.get_meta("stale_reads") == "{}"  # the list is emptied: one meta read per open from now on
        abstract = _abstract(lib, "PMC6398430")
        assert len(abstract) == ABSTRACT + 2 and len(set(abstract)) == len(abstract)  # once, and the teaser
        assert lib.check_consistency()["consistent"]
    assert main(["ingest", str(mine), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["papers_unchanged"] == 1


def test_a_new_library_is_checked_once_and_finds_nothing(tmp_path: Path) -> None:
    cfg = Config(home=tmp_path / "home", demo=False)
    with Library(cfg) as lib:
        lib.ingest([JATS, CORE / "PMC2852030.xml"])
        assert lib.store.get_meta("reads_checked") == "1" and lib.store.get_meta("stale_reads") == "{}"
    with Library(cfg) as lib:
        assert lib.notes == [] and lib.stale_reads() == {}


@pytest.mark.parametrize("shared", [False, True], ids=["cli", "app"])  # the app: DuckDB read-only between writes
def test_the_demo_is_corrected_on_the_next_launch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  shared: bool) -> None:
    from evtui.export import Basket
    from evtui.search import Searcher

    demo = tmp_path / "demo"
    (demo / "jats").mkdir(parents=True)
    shutil.copy(JATS, demo / "jats")
    shutil.copy(CORE / "PMC2852030.xml", demo / "jats")
    shutil.copy(CORE / "scifact5.jsonl", demo)
    monkeypatch.setenv("EVTUI_DEMO_DIR", str(demo))
    cfg = Config(home=tmp_path / "home", demo=True)
    with monkeypatch.context() as m:  # the first launch, by an earlier evtui
        m.setattr(loaders, "_jats_abstracts", _earlier_reader)
        with Library(cfg) as lib:
            report = ensure_demo(lib)
            assert report is not None and report.added == 7
            assert len(_abstract(lib, "PMC6398430")) == 2 * ABSTRACT
            hit = Searcher(lib).search("white matter preterm infants", k=1)
            assert hit.evidence and hit.evidence[0].sentence.paper_id.startswith("scifact:")
            Basket(lib).add(hit.evidence[0], hit.query, hit.method)
            body = next(x for x in lib.store.sentences("PMC6398430")
                        if x.position > 2 * ABSTRACT + 3 and not x.is_heading)  # numbered after the doubled abstract
            Basket(lib).add(Evidence(rank=2, sentence=body, title="t", score=0.0, highlights=[]), hit.query, "best")
            selected = [(it.sentence_id, it.text) for it in Basket(lib).items()]
            assert lib.remove(["PMC2852030"]) == 1  # the user removed a demo paper
            others = {p.id: p.content_hash for p in lib.store.papers() if p.id != "PMC6398430"}
            _as_an_earlier_evtui_left_it(lib)
    if not shared:  # (the app's case finds them itself, below)
        with Library(Config(home=cfg.home, demo=False)) as lib:  # with the demo turned off the note names it
            assert "(PMC6398430)" in " ".join(lib.notes)
    with Library(cfg, shared=shared) as lib:  # the next launch: no note, the demo's own step reads it again
        assert lib.notes == []
        with lib.rw():  # as the app calls it
            assert ensure_demo(lib) is None
        abstract = _abstract(lib, "PMC6398430")
        assert len(abstract) == ABSTRACT + 2 and len(set(abstract)) == len(abstract)
        assert lib.store.paper("PMC2852030") is None  # stays removed
        assert {p.id: p.content_hash for p in lib.store.papers() if p.id != "PMC6398430"} == others
        # the selected body sentence follows its text to its new number (the abstract is stored once now)
        now = [(it.sentence_id, it.text) for it in Basket(lib).items()]
        assert [t for _i, t in now] == [t for _i, t in selected]
        assert now[0] == selected[0] and now[1][0] != selected[1][0] == body.id
        assert lib.stale_reads() == {} and lib.check_consistency()["consistent"]
    calls: list[object] = []
    monkeypatch.setattr(Library, "ingest", lambda self, *a, **k: calls.append(a))
    with Library(cfg, shared=shared) as lib:  # every launch after that: nothing to read
        with lib.rw():
            assert ensure_demo(lib) is None and lib.notes == []
    assert calls == []
