"""`evtui fetch` against recorded Europe PMC answers served on 127.0.0.1 (tests/europepmc_server.py): a DOI, a PMID
and a PMCID each become one paper; a second fetch adds and sends nothing; offline is one line and exit 1 with
nothing stored; 429 / 5xx are retried as Retry-After asks; a search lists its hits and fetches on --yes; a
withdrawn record is not added; a metadata-only entry gives way to the fetched full text, its selection with it."""

from __future__ import annotations

import json
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

import duckdb
import pytest

sys.path.insert(0, str(Path(__file__).parent.parent))
from europepmc_server import OA_PMCID, EuropePMCServer, europepmc_server  # noqa: E402

from evtui.cli import main  # noqa: E402
from evtui.config import load_config  # noqa: E402
from evtui.library import Library  # noqa: E402
from evtui.store import SELECTIONS_DDL  # noqa: E402

OA_DOI = "10.1038/s41392-025-02280-1"  # PMC12311175, open access, its fullTextXML recorded
PMID_ONLY = "40468710"  # a MEDLINE record without a PMCID (abstract, licence "cc by")
NOT_OA = "PMC12124214"  # has a PMCID, isOpenAccess "N": no full text is asked for


@pytest.fixture
def srv(monkeypatch: pytest.MonkeyPatch) -> Iterator[EuropePMCServer]:
    with europepmc_server() as s:
        monkeypatch.setenv("EVTUI_EUROPEPMC_URL", s.url)
        monkeypatch.setenv("EVTUI_CONTACT_EMAIL", "researcher@example.org")
        yield s


def _fetch(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict]:
    capsys.readouterr()
    rc = main(["fetch", *argv, "--json"])
    return rc, json.loads(capsys.readouterr().out)


def _papers(capsys: pytest.CaptureFixture[str]) -> dict[str, dict]:
    capsys.readouterr()
    main(["papers", "--json"])
    return {p["id"]: p for p in json.loads(capsys.readouterr().out)}


def test_a_doi_a_pmid_and_a_pmcid_each_become_one_paper(srv: EuropePMCServer,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _fetch(capsys, OA_DOI, f"PMID:{PMID_ONLY}", NOT_OA)
    assert rc == 0 and out["skipped"] == []
    got = {f["paper_id"]: f for f in out["fetched"]}
    assert set(got) == {OA_PMCID, f"PMID:{PMID_ONLY}", NOT_OA}
    assert all(f["source"] == "europepmc" for f in got.values())
    assert got[OA_PMCID]["full_text"] is True and got[OA_PMCID]["licence"] == "CC BY 4.0"
    assert got[OA_PMCID]["title"] == "Immune evasion in cancer: mechanisms and cutting-edge therapeutic approaches"
    assert got[f"PMID:{PMID_ONLY}"]["full_text"] is False and got[f"PMID:{PMID_ONLY}"]["licence"] == "CC BY"
    assert got[NOT_OA]["full_text"] is False
    papers = _papers(capsys)
    assert papers[OA_PMCID]["year"] == 2025 and papers[f"PMID:{PMID_ONLY}"]["year"] == 2025
    asked = [r["path"] for r in srv.requests]
    assert f"/europepmc/webservices/rest/{OA_PMCID}/fullTextXML" in asked
    assert not any(NOT_OA in p for p in asked)  # not open access: its full text is never asked for
    assert all("researcher@example.org" in r["headers"]["User-Agent"] and "evtui/" in r["headers"]["User-Agent"]
               for r in srv.requests)
    with Library(load_config()) as lib:  # the JATS loader read the full text: its sections as for a file
        sents = lib.store.sentences(OA_PMCID)
    assert {"title", "abstract", "introduction", "conclusion"} <= {s.section_kind for s in sents}
    assert "Immune checkpoint regulation" in {s.section_title for s in sents} and len(sents) > 500


def test_fetching_twice_adds_nothing_and_sends_nothing(srv: EuropePMCServer,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert _fetch(capsys, OA_PMCID, PMID_ONLY)[1]["fetched"]
    sent = len(srv.requests)
    rc, out = _fetch(capsys, OA_PMCID, PMID_ONLY)
    assert rc == 0 and out["fetched"] == []
    assert [s["reason"] for s in out["skipped"]] == [f"already in the library as {OA_PMCID}",
                                                     f"already in the library as PMID:{PMID_ONLY}"]
    assert len(srv.requests) == sent and len(_papers(capsys)) == 2
    rc, out = _fetch(capsys, OA_DOI, "PMID:40739089")  # the same paper by its DOI and its PMID: held, not asked
    assert rc == 0 and out["fetched"] == [] and len(out["skipped"]) == 2 and len(srv.requests) == sent


def test_a_removed_paper_comes_back_from_the_local_copy_without_a_network(
        srv: EuropePMCServer, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert _fetch(capsys, OA_PMCID)[1]["fetched"]
    assert main(["remove", OA_PMCID]) == 0
    monkeypatch.setenv("EVTUI_EUROPEPMC_URL", _closed_port_url())
    rc, out = _fetch(capsys, OA_PMCID)
    assert rc == 0 and [f["paper_id"] for f in out["fetched"]] == [OA_PMCID] and out["fetched"][0]["full_text"]


def test_the_fetched_papers_are_rebuilt_from_the_data_home_by_ingest(srv: EuropePMCServer,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    assert len(_fetch(capsys, OA_PMCID, PMID_ONLY)[1]["fetched"]) == 2
    assert main(["remove", OA_PMCID, f"PMID:{PMID_ONLY}"]) == 0
    capsys.readouterr()
    assert main(["ingest", "--format", "europepmc", str(load_config().home / "europepmc" / "papers"), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["papers_added"] == 2 and report["errors"] == []
    papers = _papers(capsys)
    assert papers[OA_PMCID]["licence"] == "CC BY 4.0" and papers[f"PMID:{PMID_ONLY}"]["source_format"] == "europepmc"


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/europepmc/webservices/rest/"


def test_offline_is_one_line_and_exit_1_with_nothing_stored(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EVTUI_EUROPEPMC_URL", _closed_port_url())
    capsys.readouterr()
    assert main(["fetch", OA_DOI, PMID_ONLY]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["error: cannot reach Europe PMC: connection refused"]
    assert _papers(capsys) == {}


def test_a_busy_service_is_waited_for_as_retry_after_asks(srv: EuropePMCServer,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    srv.faults = [(429, "1"), (503, "0")]
    rc, out = _fetch(capsys, OA_PMCID)
    assert rc == 0 and [f["paper_id"] for f in out["fetched"]] == [OA_PMCID]
    assert len(srv.requests) == 4  # two refused, the search, the full text


def test_a_service_that_stays_down_fails_whole(srv: EuropePMCServer, capsys: pytest.CaptureFixture[str]) -> None:
    srv.faults = [(503, "0")] * 8
    rc, out = _fetch(capsys, OA_PMCID, PMID_ONLY)
    assert rc == 1 and out["error"].startswith("cannot reach Europe PMC: HTTP 503 after 4 tries")
    srv.faults = [(503, "7200")]  # asked to come back in two hours: not waited for
    rc, out = _fetch(capsys, OA_PMCID)
    assert rc == 1 and "asked to wait 7200 s" in out["error"]
    assert _papers(capsys) == {}


def test_a_full_text_that_fails_midway_stores_nothing(srv: EuropePMCServer,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # the records' searches answer, a full text then meets a gateway down for good: not even the records are stored
    original = srv.answer

    def broken(path: str, query: dict[str, str]) -> tuple[int, bytes, str]:
        if path.endswith("/fullTextXML"):
            return 502, b"Bad Gateway", "text/plain"
        return original(path, query)

    srv.answer = broken  # type: ignore[method-assign]
    rc, out = _fetch(capsys, PMID_ONLY, OA_PMCID)
    assert rc == 1 and "HTTP 502" in out["error"] and _papers(capsys) == {}


def test_a_search_lists_its_hits_and_fetches_on_yes(srv: EuropePMCServer, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _fetch(capsys, "--search", "cancer", "--limit", "3")
    assert rc == 0 and out["fetched"] == [] and len(out["hits"]) == 3 and out["total"] == 5059039
    assert {"id", "title", "year", "journal", "open_access"} <= set(out["hits"][0])
    assert _papers(capsys) == {}
    rc, out = _fetch(capsys, "--search", "cancer", "--limit", "3", "--yes")
    assert rc == 0 and len(out["fetched"]) == 3
    rc, out = _fetch(capsys, "--search", "cancer", "--open-access", "--since", "2020", "--limit", "2", "--yes")
    assert [f["full_text"] for f in out["fetched"]] == [True, False]  # the second's full text is not recorded
    assert srv.requests[-3]["query"]["query"] == "((cancer) AND OPEN_ACCESS:y) AND PUB_YEAR:[2020 TO 3000]"


def test_an_empty_search_fetches_nothing(srv: EuropePMCServer, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out = _fetch(capsys, "--search", "zzzznothing", "--yes")
    assert rc == 0 and out["fetched"] == [] and out["hits"] == [] and out["total"] == 0


def test_a_withdrawn_record_and_an_unknown_id_are_skipped(srv: EuropePMCServer,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    srv.withdrawn = {PMID_ONLY}
    rc, out = _fetch(capsys, PMID_ONLY, "PMC99999999", OA_PMCID)
    assert rc == 0 and [f["paper_id"] for f in out["fetched"]] == [OA_PMCID]
    assert out["skipped"] == [
        {"id": "PMC99999999", "reason": "not found in Europe PMC"},
        {"id": PMID_ONLY, "reason": "withdrawn: Europe PMC lists it as a Retracted Publication; not added"}]


def test_bad_input_is_refused_before_the_network(srv: EuropePMCServer, capsys: pytest.CaptureFixture[str]) -> None:
    for argv in (["not-an-id"], [], [OA_PMCID, "--search", "x"], ["--search", "x", "--limit", "0"]):
        rc, out = _fetch(capsys, *argv)
        assert rc == 2 and out["error"]
    assert srv.requests == []


def test_a_metadata_only_entry_gives_way_to_the_fetched_full_text(tmp_path: Path, srv: EuropePMCServer,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    title = "Immune evasion in cancer: mechanisms and cutting-edge therapeutic approaches"
    bib = tmp_path / "refs.bib"
    bib.write_text(f"@article{{tufail2025, title = {{{title}}}, author = {{Tufail, Muhammad}}, year = {{2025}},\n"
                   f"  doi = {{{OA_DOI}}}}}\n", encoding="utf-8")
    assert main(["ingest", str(bib)]) == 0
    with Library(load_config()) as lib:
        (stub,) = [p.id for p in lib.store.papers()]
        first = lib.store.sentences(stub)[0]
    with duckdb.connect(str(load_config().db_path)) as con:
        con.execute(SELECTIONS_DDL)
        con.execute("INSERT INTO selections (sentence_id, position, query, mode) VALUES (?, 0, 'immune evasion', "
                    "'best')", [first.id])
    rc, out = _fetch(capsys, OA_DOI)
    assert rc == 0 and [f["paper_id"] for f in out["fetched"]] == [OA_PMCID]
    assert list(_papers(capsys)) == [OA_PMCID]
    with Library(load_config()) as lib:
        (sid,) = [r[0] for r in lib.store.con.execute("SELECT sentence_id FROM selections").fetchall()]
        moved = next(s for s in lib.store.sentences(OA_PMCID) if s.id == sid)
    assert moved.text == title
