"""A PDF whose ToUnicode map names a lone surrogate (U+D800) for one glyph: pdfium hands the surrogate on, and the
paper was refused whole ("surrogates not allowed"). The character becomes U+FFFD; the paper is stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from evtui.cli import main
from evtui.ingest import iter_papers
from evtui.models import ParsedPaper

LINES = ["Aspirin lowered the fever of adults in a randomised trial of two hundred patients.",
         "The effect was seen within two hours of the first dose ~ and lasted a day.",
         "No serious adverse events were reported in either group of the trial."]


def make_pdf(path: Path, body_lines: list[str], cmap_target: str = "D800") -> None:
    """A one-page PDF in Helvetica whose ToUnicode map sends "~" to U+<cmap_target>."""
    cmap = f"""/CIDInit /ProcSet findresource begin
12 dict begin
begincmap
/CMapName /Surrogate def
/CMapType 2 def
1 begincodespacerange
<00> <FF>
endcodespacerange
1 beginbfchar
<7E> <{cmap_target}>
endbfchar
1 beginbfrange
<20> <7D> <0020>
endbfrange
endcmap
CMapName currentdict /CMap defineresource pop
end
end
"""
    content = "BT /F1 12 Tf 72 720 Td 14 TL\n" + "\n".join(f"({line}) '" for line in body_lines) + "\nET"
    objs = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R"
        " /Resources << /Font << /F1 5 0 R >> >> >>",
        f"<< /Length {len(content)} >>\nstream\n{content}\nendstream",
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        f"<< /Length {len(cmap)} >>\nstream\n{cmap}endstream",
    ]
    out = b"%PDF-1.4\n"
    offsets = []
    for i, o in enumerate(objs, 1):
        offsets.append(len(out))
        out += f"{i} 0 obj\n{o}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objs)+1}\n0000000000 65535 f \n".encode()
    for off in offsets:
        out += f"{off:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size {len(objs)+1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    path.write_bytes(out)


def test_a_lone_surrogate_from_tounicode_is_replaced(tmp_path: Path) -> None:
    pdf = tmp_path / "surrogate.pdf"
    make_pdf(pdf, LINES)
    (paper,) = list(iter_papers(pdf))
    assert isinstance(paper, ParsedPaper), paper
    text = " ".join(s.text for s in paper.sentences)
    assert "\ufffd" in text and "first dose" in text
    text.encode("utf-8")  # every character storable


def test_the_paper_is_stored(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pdf = tmp_path / "surrogate.pdf"
    make_pdf(pdf, LINES)
    assert main(["ingest", str(pdf), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["papers_added"] == 1 and report["errors"] == []
