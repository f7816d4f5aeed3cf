"""`evtui fetch` against the real Europe PMC (skipped unless EVTUI_LIVE_TESTS=1; CI never runs it): the recorded
answers the other fetch tests use must still be how the service answers."""

from __future__ import annotations

import json
import os

import pytest

from evtui.cli import main

pytestmark = pytest.mark.skipif(os.environ.get("EVTUI_LIVE_TESTS") != "1",
                                reason="talks to Europe PMC: set EVTUI_LIVE_TESTS=1 to run it")


def test_a_doi_a_pmid_and_a_pmcid_from_the_live_service(capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    # an open-access paper by its DOI (full text), the same paper's PMID and PMCID (nothing added twice)
    rc = main(["fetch", "10.1093/nar/gkr715", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and [f["paper_id"] for f in out["fetched"]] == ["PMC3258128"]
    assert out["fetched"][0]["full_text"] is True and out["fetched"][0]["licence"].startswith("CC BY")
    assert out["fetched"][0]["title"].startswith("Hepato-specific microRNA-122")
    rc = main(["fetch", "PMC3258128", "--json"])
    again = json.loads(capsys.readouterr().out)
    assert rc == 0 and again["fetched"] == [] and again["skipped"][0]["reason"].startswith("already in the library")
