"""`good.pdf` and `good.pdf.gz` of the same PDF are one paper (the duplicate check hashed the compressed bytes, so
they were two); a .gz of another PDF is a paper of its own."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.filehash import content_sha256, sha256_file

PDFS = Path(__file__).resolve().parents[1] / "fixtures" / "pdf"


def _gz(src: Path, dest: Path) -> Path:
    dest.write_bytes(gzip.compress(src.read_bytes(), mtime=0))
    return dest


def test_a_pdf_and_its_gzip_are_one_paper(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "papers"
    folder.mkdir()
    shutil.copy(PDFS / "unlabelled-abstract.pdf", folder / "good.pdf")
    _gz(PDFS / "unlabelled-abstract.pdf", folder / "good.pdf.gz")
    assert main(["ingest", str(folder), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["papers_added"] == 1 and report["papers_already_stored"] == 1, report
    assert any("identical copy" in n for n in report["notes"]), report["notes"]
    # and again, in either order: still one
    assert main(["ingest", str(folder / "good.pdf.gz"), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["papers_added"] == 0


def test_the_digest_is_of_the_content(tmp_path: Path) -> None:
    pdf = PDFS / "unlabelled-abstract.pdf"
    gz = _gz(pdf, tmp_path / "a.pdf.gz")
    assert content_sha256(gz) == content_sha256(pdf) == sha256_file(pdf)
    other = _gz(PDFS / "PMC2768302.pdf", tmp_path / "b.pdf.gz")
    assert content_sha256(other) != content_sha256(gz)
    broken = tmp_path / "c.pdf.gz"
    broken.write_bytes(b"\x1f\x8b" + b"not gzip at all")
    assert content_sha256(broken) == sha256_file(broken)
