"""A sweep killed under an evtui that recorded no file contents in its resume key is still finished by
`--resume` after the upgrade (the contents check applies to runs that recorded them), not started over with a
message that its file was edited."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from evtui.bench.driver import RunBook
from evtui.bench.runs import ItemResult, list_runs, resume_key
from evtui.cli import main
from evtui.config import load_config
from evtui.library import Library

FIX = Path(__file__).parents[1] / "fixtures" / "bench"
CC_CORPUS, CC_CLAIMS = FIX / "checkcovid_corpus6.json", FIX / "checkcovid_claims.json"


def test_a_run_killed_before_the_upgrade_is_resumed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    claims = tmp_path / "claims.json"
    shutil.copy(CC_CLAIMS, claims)
    first = json.loads(claims.read_text(encoding="utf-8").splitlines()[0])["id"]
    params = {"corpus": str(CC_CORPUS), "claims": str(claims), "seed": 0, "limit": None}
    dataset, task = f"check-covid:{claims.name}", "sentence+doc-retrieval"
    with Library(load_config()) as lib:
        book = RunBook(lib, dataset, [task], "bm25", params)
        record = book.recorder(task)
        assert record is not None
        record(ItemResult(str(first), None, {"sentences": {}, "docs": {}}, 0.1))
        book.release()
        rid = book.run_id(task)
        # as the older evtui stored it: the arguments only
        lib.store.con.execute("UPDATE runs SET resume_key = ? WHERE id = ?",
                              [resume_key(dataset, task, "bm25", params, {}), rid])
    assert main(["bench", "checkcovid", "--corpus", str(CC_CORPUS), "--claims", str(claims), "--method", "bm25",
                 "--resume", "--json"]) == 0
    out = capsys.readouterr()
    assert "edited since it started" not in out.err
    with Library(load_config()) as lib:
        assert [(r["id"], r["status"]) for r in list_runs(lib)] == [(rid, "done")]
