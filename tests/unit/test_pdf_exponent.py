"""Superscript digits: a unit's or a symbol's power, or a citation mark."""

from __future__ import annotations

import pytest

from evtui.ingest.pdf import _exponent


@pytest.mark.parametrize("before", ["cm", "24.32 m", "sp", "(χ", "R", " μm", "mm"])
def test_a_digit_after_a_unit_or_a_symbol_is_a_power(before: str) -> None:
    assert _exponent("2", list(before))


@pytest.mark.parametrize(("run", "before"), [("2", "cancer"), ("12", "cm"), ("3", "DNA"), ("1", "of"),
                                              ("4", "in"), ("2", "Obesity is"), ("7", "trial.")])
def test_a_citation_mark_is_not_a_power(run: str, before: str) -> None:
    assert not _exponent(run, list(before))
