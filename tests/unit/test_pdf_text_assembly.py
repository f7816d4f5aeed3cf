"""PDF text assembly: a hyphen before a capital or a digit at a line end is kept without a space ("FDG-PET/CT",
not "FDG- PET/CT"), and a superscript mass number before an element ("¹⁸F-FDG") is text, not a citation marker.

Superscript digits: a unit's or a symbol's power, or a citation mark."""

from __future__ import annotations

from collections import Counter

import pytest

from evtui.ingest.pdf import _exponent, _join, _Line, _make_line, _Stats


def _lines(*texts: str) -> list[_Line]:
    return [_Line(t, 0.0, 100.0, 700.0 - 12 * i, 10.0, False, 0) for i, t in enumerate(texts)]


def test_a_compound_hyphen_at_a_line_end_joins_without_a_space() -> None:
    vocab: Counter[str] = Counter({"identified": 1})
    text = _join(_lines("detection of bone metastases, FDG-", "PET/CT can be false negative in COVID-",
                        "19 patients with a 355-", "mm field; identi-", "fied as such - then", "more"),
                 vocab, set(), _Stats())
    assert text == ("detection of bone metastases, FDG-PET/CT can be false negative in COVID-19 patients with a "
                    "355-mm field; identified as such - then more")


def _superscripted(text: str, raised: str) -> _Line | None:
    """`text` set in 10 pt with the first occurrence of `raised` as a 7 pt superscript."""
    at = text.index(raised)
    sup = range(at, at + len(raised))
    sizes = [7.0 if k in sup else 10.0 for k in range(len(text))]
    ys = [704.0 if k in sup else 700.0 for k in range(len(text))]
    xs = [5.0 * k for k in range(len(text))]
    return _make_line(text, xs, ys, sizes, 0, len(text), False, 0)


def test_a_mass_number_is_kept_and_a_citation_marker_dropped() -> None:
    iso = _superscripted("and 18F-galacto RGD has been tested", "18")
    assert iso is not None and iso.text == "and 18F-galacto RGD has been tested" and iso.cites == 0
    lead = _superscripted("11C-raclopride binding fell", "11")
    assert lead is not None and lead.text == "11C-raclopride binding fell"
    cite = _superscripted("colorectal cancer12 and gastric", "12")
    assert cite is not None and cite.text == "colorectal cancer and gastric" and cite.cites == 1
    after = _superscripted("as shown before.3 The next", "3")
    assert after is not None and after.text == "as shown before. The next" and after.cites == 1


@pytest.mark.parametrize("before", ["cm", "24.32 m", "sp", "(χ", "R", " μm", "mm"])
def test_a_digit_after_a_unit_or_a_symbol_is_a_power(before: str) -> None:
    assert _exponent("2", list(before))


@pytest.mark.parametrize(("run", "before"), [("2", "cancer"), ("12", "cm"), ("3", "DNA"), ("1", "of"),
                                              ("4", "in"), ("2", "Obesity is"), ("7", "trial.")])
def test_a_citation_mark_is_not_a_power(run: str, before: str) -> None:
    assert not _exponent(run, list(before))
