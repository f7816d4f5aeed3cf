"""PDF: nothing of the abstract is dropped as small print, keywords are not abstract text, a table's label is no
sentence of its own (issue 34). tests/fixtures/pdf/trial/trial.pdf (make_trial_pdf.py beside it) opens its
structured abstract on a line set smaller than the rest, as 2 of 3 typeset trial papers did."""

from __future__ import annotations

from pathlib import Path

from evtui.ingest.pdf import parse_pdf
from evtui.ingest.sections import METADATA_KIND

TRIAL = Path(__file__).parents[1] / "fixtures" / "pdf" / "trial" / "trial.pdf"


def test_the_abstract_keeps_its_first_line_and_loses_the_table_cells() -> None:
    paper = parse_pdf(TRIAL)
    abstract = [s.text for s in paper.sentences if s.section_kind == "abstract"]
    assert abstract[:2] == ["Background: Exercise may improve depressive symptoms.",
                            "Methods: 180 outpatients with major depression were randomised to supervised exercise "
                            "or usual care for 12 weeks."]
    text = " ".join(s.text for s in paper.sentences)
    assert "Age, years" not in text and "Corresponding author" not in text  # table cells and a footnote
    assert paper.info["dropped"]["small_print_lines"] == 4


def test_keywords_are_metadata_and_a_caption_keeps_its_label(tmp_path: Path) -> None:
    from evtui.ingest import iter_papers

    paper = next(p for p in iter_papers(TRIAL) if not isinstance(p, Exception))
    kinds = {s.text: s.section_kind for s in paper.sentences}
    assert kinds["Keywords: exercise; depression; randomised trial"] == METADATA_KIND
    assert "Table 1." not in kinds
    assert kinds["Table 1. Baseline characteristics of the participants by group."] == "caption"
