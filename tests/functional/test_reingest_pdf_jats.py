"""Re-ingesting a folder where a PDF is the same paper as a stored JATS text: skipped unread, quietly, as
unchanged (the PDF's sha256 and reader version remembered), and read again once anything that decided it changes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evtui.config import load_config
from evtui.library import Library

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "pdf"
# The JATS text of the paper typeset in PMC6398430.pdf (same DOI), its body stood in for by 150 short sentences.
_JATS = """<?xml version="1.0"?>
<article><front><article-meta>
<article-id pub-id-type="pmc">6398430</article-id><article-id pub-id-type="doi">10.1093/beheco/ary157</article-id>
<title-group><article-title>Counting crows: population structure and group size variation in an urban population
of crows</article-title></title-group>
<abstract><p>Crows gather in flocks. Their group size varies over the year.</p></abstract>
</article-meta></front><body><sec><title>Introduction</title><p>Crows are social birds of the city.</p>{body}</sec>
</body></article>""".replace("{body}", "".join(f"<p>Crows of group {i} were counted on {i + 2} days.</p>"
                                             for i in range(150)))  # as much of the paper as its PDF reading


def _folder(tmp_path: Path, *, jats_first: bool) -> Path:
    folder = tmp_path / "papers"
    folder.mkdir()
    # reading order is by file name: "a_" before "z_"
    (folder / ("a_crows.xml" if jats_first else "z_crows.xml")).write_text(_JATS, encoding="utf-8")
    shutil.copy(FIXTURES / "PMC6398430.pdf", folder / ("z_crows.pdf" if jats_first else "a_crows.pdf"))
    return folder


@pytest.mark.parametrize("jats_first", [True, False])
def test_a_pdf_of_a_stored_jats_paper_is_skipped_quietly_on_reingest(tmp_path: Path, jats_first: bool) -> None:
    folder = _folder(tmp_path, jats_first=jats_first)
    with Library(load_config()) as lib:
        first = lib.ingest([folder])
        assert not first.errors
        assert lib.store.stats()["papers"] == 1 and lib.store.paper("PMC6398430") is not None
        again = lib.ingest([folder])
        assert (again.added, again.replaced, again.same_paper, again.unchanged) == (0, 0, 0, 2)
        assert again.notes == [] and again.errors == []
        third = lib.ingest([folder])  # and stays so
        assert (third.same_paper, third.unchanged, third.notes) == (0, 2, [])


def test_the_pdf_is_read_again_when_the_reader_or_the_stored_paper_changes(tmp_path: Path) -> None:
    folder = _folder(tmp_path, jats_first=True)
    with Library(load_config()) as lib:
        lib.ingest([folder])
        lib.ingest([folder])
        # as if recorded by an older reader version, which may have read it otherwise: read again
        lib.store.con.execute("UPDATE pdf_seen SET reader = 'old'")
        newer = lib.ingest([folder])
        assert (newer.same_paper, newer.unchanged) == (1, 1)
        assert any("already in the library as PMC6398430" in n for n in newer.notes)
        assert lib.ingest([folder]).same_paper == 0  # remembered for the new version too
        # the JATS paper removed: the PDF is no longer "that stored paper", and is stored on its own
        assert lib.remove(["PMC6398430"]) == 1
        (folder / "a_crows.xml").unlink()
        alone = lib.ingest([folder])
        assert alone.added == 1 and alone.unchanged == 0
        assert lib.store.paper("doi:10.1093/beheco/ary157") is not None
