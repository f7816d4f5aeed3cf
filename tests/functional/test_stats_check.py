"""`evtui stats --check` on a library whose search index disagrees with DuckDB (an index folder restored from an
older backup, or synced from another machine): rebuilt from the database, as the damaged-index message promises,
not only listed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library

_JATS = """<?xml version="1.0"?>
<article><front><article-meta><article-id pub-id-type="pmc">{n}</article-id>
<title-group><article-title>Paper number {n} on the zebrafish {word}</article-title></title-group>
<abstract><p>Zebrafish {word} regenerates after injury. The {word} grows back within weeks.</p></abstract>
</article-meta></front><body><sec><title>Results</title><p>The {word} was measured daily.</p></sec></body></article>"""


def _paper(folder: Path, n: int, word: str) -> Path:
    folder.mkdir(exist_ok=True)
    f = folder / f"p{n}.xml"
    f.write_text(_JATS.format(n=n, word=word), encoding="utf-8")
    return f


def _hits(lib: Library, word: str) -> set[str]:
    return {sid.split(":")[0] for sid in lib.index.sentence_ids()} & {
        pid for (pid,) in lib.store.con.execute(
            "SELECT DISTINCT paper_id FROM sentences WHERE text ILIKE ?", [f"%{word}%"]).fetchall()}


@pytest.mark.parametrize("stale", ["missing", "extra"])
def test_check_rebuilds_an_index_that_disagrees_with_the_database(tmp_path: Path, stale: str,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    config = load_config()
    with Library(config) as lib:
        lib.ingest([_paper(tmp_path / "in", 1, "fin")])
        if stale == "extra":
            lib.ingest([_paper(tmp_path / "in", 2, "heart")])
    backup = tmp_path / "index-backup"
    shutil.copytree(config.index_path, backup)
    with Library(config) as lib:
        if stale == "missing":
            lib.ingest([_paper(tmp_path / "in", 2, "heart")])
        else:
            assert lib.remove(["PMC2"]) == 1
    shutil.rmtree(config.index_path)
    shutil.copytree(backup, config.index_path)  # the older index put back

    assert main(["stats", "--check", "--json"]) == 0
    c = json.loads(capsys.readouterr().out)["consistency"]
    assert c["consistent"] is True and c["repaired"] is True
    assert c["before"]["consistent"] is False
    assert c["before"]["only_in_db" if stale == "missing" else "only_in_index"]
    with Library(config) as lib:
        assert lib.check_consistency()["consistent"] is True
        assert lib.index.sentence_ids() == lib.store.all_sentence_ids()
        assert _hits(lib, "heart") == ({"PMC2"} if stale == "missing" else set())
    assert main(["stats", "--check", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["consistency"]["repaired"] is False  # nothing left to repair
