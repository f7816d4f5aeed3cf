"""What a search asks for, as values: `Filters` (which sentences may answer) and `SearchRequest` (the whole
search). The CLI (evtui/cli/flags.py), the TUI, the Searcher, the `best` ranker, dense retrieval and the search
backend all pass these, so a new filter is one field here, not a parameter added to six signatures.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from evtui.errors import QueryError
from evtui.models import SECTION_KINDS, ParsedQuery

DEFAULT_K = 20


@dataclass(frozen=True, slots=True)
class Filters:
    """Only sentences of this paper / section kind / years (inclusive; a paper without a year never passes a
    year bound). Headings never answer a search; the backend leaves them out."""

    paper: str | None = None
    section: str | None = None
    year_from: int | None = None
    year_to: int | None = None

    def check_section(self) -> None:
        if self.section is not None and self.section not in SECTION_KINDS:
            raise QueryError(f"unknown section kind {self.section!r}; choose one of: {', '.join(SECTION_KINDS)}")

    def check_years(self) -> None:
        for name, year in (("year_from", self.year_from), ("year_to", self.year_to)):
            if year is not None and not -9999 <= year <= 9999:  # the index holds years as 64-bit numbers
                raise QueryError(f"{name.replace('_', '-')} {year} is not a year")

    def within_paper(self, paper: str) -> Filters:
        return replace(self, paper=paper)

    def library_wide(self) -> Filters:
        return replace(self, paper=None)

    def years_admit(self, year: int | None) -> bool:
        """Whether a paper of this year passes the year bounds."""
        return (self.year_from is None or (year is not None and year >= self.year_from)) and (
            self.year_to is None or (year is not None and year <= self.year_to))


NO_FILTERS = Filters()


@dataclass(frozen=True)
class SearchRequest:
    """One search: the query (text, or already parsed), how many results, which method, and the filters.
    `results` asks `best` for results evidence; `seed` makes `random` reproducible; `method` None means the
    default method."""

    query: str | ParsedQuery
    k: int = DEFAULT_K
    method: str | None = None
    mode: str | None = None
    filters: Filters = field(default_factory=Filters)
    results: bool = False
    seed: int = 0

    def check(self) -> None:
        """QueryError naming the first bad value (the method is the Searcher's to check)."""
        self.filters.check_section()
        if self.k < 1:
            raise QueryError("k must be at least 1")
        self.filters.check_years()
