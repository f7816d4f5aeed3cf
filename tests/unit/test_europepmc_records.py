"""Europe PMC records and answers treated as hostile: the record loader (evtui/ingest/europepmc.py) on recorded
records, on every field of the wrong type or size, and on a full text that is no JATS; the client's reading of IDs,
Retry-After and oversized or over-compressed answers (evtui/europepmc.py)."""

from __future__ import annotations

import gzip
import io
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from evtui.errors import IngestError
from evtui.europepmc import Refused, _read_body, _retry_after, parse_id, user_agent
from evtui.ingest import iter_papers
from evtui.models import ParsedPaper

sys.path.insert(0, str(Path(__file__).parents[1]))
from europepmc_server import RECORDS, record  # noqa: E402


def _load(tmp_path: Path, rec: dict[str, Any], xml: bytes | None = None) -> list[ParsedPaper | IngestError]:
    path = tmp_path / "r.json"
    path.write_text(json.dumps(rec), encoding="utf-8")
    if xml is not None:
        path.with_suffix(".xml").write_bytes(xml)
    return list(iter_papers(path, "europepmc"))


def test_every_recorded_record_reads_as_a_paper(tmp_path: Path) -> None:
    for rec in RECORDS:
        (p,) = _load(tmp_path, rec)
        assert isinstance(p, ParsedPaper) and p.title and p.sentences[0].section_kind == "title"
        assert p.info["full_text"] is False and p.source_format == "europepmc"
        assert p.id in (rec.get("pmcid"), f"PMID:{rec.get('pmid')}")


def test_a_labelled_abstract_keeps_its_labels_and_its_less_than_signs(tmp_path: Path) -> None:
    rec = record(pmid="40468710")  # "<h4>...</h4>" labels, "(at p\u2009<\u2009.001)" as recorded
    (p,) = _load(tmp_path, rec)
    assert isinstance(p, ParsedPaper)
    labels = [s.section_title for s in p.sentences if s.section_kind == "abstract"]
    assert "Abstract" not in labels and len(set(labels)) >= 3
    assert any("(at p < .001)" in s.text for s in p.sentences)
    assert not any("<h4>" in s.text or "</h4>" in s.text for s in p.sentences)
    assert p.licence == "CC BY" and p.year == 2025 and p.authors


def test_fields_of_the_wrong_type_or_shape_are_dropped_not_trusted(tmp_path: Path) -> None:
    rec = record(pmid="40468710")
    rec.update({"pmcid": "PMC1/../../etc", "doi": "10.1/a b", "pubYear": "99999", "license": 5,
                "authorList": "Smith J", "journalInfo": [1], "title": "T" * 300_000, "abstractText": ["x"]})
    (p,) = _load(tmp_path, rec)
    assert isinstance(p, ParsedPaper)
    assert (p.pmcid, p.doi, p.year, p.licence, p.authors, p.journal) == (None, None, None, None, [], None)
    assert p.id == "PMID:40468710" and len(p.title) <= 2000  # the loaders' own title limit
    rec["pmid"] = 40468710  # a number where the service sends a string: no id left
    (err,) = _load(tmp_path, rec)
    assert isinstance(err, IngestError) and "no PMCID, PMID or DOI" in err.reason.replace("without a", "no")


def test_a_full_text_that_is_no_jats_leaves_the_abstract(tmp_path: Path) -> None:
    rec = record(pmcid="PMC12311175")
    (p,) = _load(tmp_path, rec, b"<html><body>Service temporarily unavailable</body></html>")
    assert isinstance(p, ParsedPaper) and p.info["full_text"] is False
    assert p.notes and "was not read" in p.notes[0]


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=40),
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                 max_size=3), max_leaves=10)


@settings(max_examples=60, deadline=2000, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.dictionaries(st.sampled_from(["pmid", "pmcid", "doi", "title", "abstractText", "pubYear", "license",
                                        "authorList", "journalInfo", "pubTypeList", "isOpenAccess"]), _JSON))
def test_any_values_in_a_record_give_a_paper_or_a_clear_error(tmp_path: Path, changes: dict[str, Any]) -> None:
    rec = {**record(pmid="40468710"), **changes}
    for item in _load(tmp_path, rec):
        assert isinstance(item, ParsedPaper) or item.reason.strip()


@pytest.mark.parametrize(("text", "kind", "value"), [
    ("10.1038/s41392-025-02280-1", "doi", "10.1038/s41392-025-02280-1"),
    ("https://doi.org/10.1093/nar/gkr715", "doi", "10.1093/nar/gkr715"),
    ("doi:10.1016/s0140-6736(24)02600-x", "doi", "10.1016/s0140-6736(24)02600-x"),
    ("PMID:40468710", "pmid", "40468710"), ("40468710", "pmid", "40468710"), ("pmc12311175", "pmcid", "PMC12311175"),
])
def test_ids_as_researchers_write_them(text: str, kind: str, value: str) -> None:
    ident = parse_id(text)
    assert (ident.kind, ident.value) == (kind, value)


@pytest.mark.parametrize("text", ["", "PMC", "PMCabc", "10.1/x\" OR *", "hello", "PMID:12a", "1" * 13])
def test_what_is_no_id_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="is not a DOI"):
        parse_id(text)


def test_retry_after_in_seconds_or_as_a_date() -> None:
    assert _retry_after("7") == 7.0 and _retry_after(None) is None and _retry_after("soon") is None
    assert _retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0  # a date in the past: no wait


class _Resp:
    def __init__(self, data: bytes, encoding: str | None = None) -> None:
        self._buf = io.BytesIO(data)
        self.headers = {"Content-Encoding": encoding} if encoding else {}

    def read(self, n: int = -1) -> bytes:
        return self._buf.read(n)


def test_oversized_and_over_compressed_answers_are_refused() -> None:
    assert _read_body(_Resp(b"x" * 100), 1000) == b"x" * 100
    assert _read_body(_Resp(gzip.compress(b"<a/>"), "gzip"), 1000) == b"<a/>"
    with pytest.raises(Refused, match="over"):
        _read_body(_Resp(b"x" * 5000), 1000)
    with pytest.raises(Refused, match="once unpacked"):
        _read_body(_Resp(gzip.compress(b"\0" * 2_000_000), "gzip"), 100_000)


def test_the_user_agent_names_evtui_and_the_contact() -> None:
    assert user_agent("a@b.org").startswith("evtui/") and "mailto:a@b.org" in user_agent("a@b.org")
    assert "contact_email" in user_agent(None)
