"""The app (and the CLI's rich output) in every terminal: without colour the aspects stay apart and no text sinks
into its background; a sentence can be copied from the paper reader too."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.segment import Segment
from rich.style import Style
from textual.color import Color
from textual.widgets import DataTable, OptionList
from tui_pilot import TRIPLET, notified, open_screen, run, search, started, until

from evtui.models import Aspect, Span
from evtui.render import aspect_chips, highlight
from evtui.tui.screens.reader import ReaderScreen
from evtui.tui.widgets import AspectBar


def _looks(text: object) -> dict[str, str]:
    """Each styled stretch of a rich Text → its style without colour: what a terminal without colour shows."""
    return {text.plain[s.start:s.end]: str(Style.parse(str(s.style)).without_color)  # type: ignore[attr-defined]
            for s in text.spans}  # type: ignore[attr-defined]


def test_no_color_cli_highlight_tells_the_aspects_apart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Under NO_COLOR Rich drops the colours: every aspect's matches were "bold underline", all alike."""
    aspects = [Aspect("head", "aspirin", ["aspirin"]), Aspect("relation", "reduce", ["reduced"]),
               Aspect("tail", "cancer", ["cancer"])]
    text = "aspirin reduced cancer"
    spans = [Span("head", 0, 7), Span("relation", 8, 15), Span("tail", 16, 22)]
    monkeypatch.setenv("NO_COLOR", "1")
    looks = _looks(highlight(text, spans, aspects))
    assert len(set(looks.values())) == 3, looks
    # each chip is drawn as its aspect's matches are: the chips are the legend
    chips = _looks(aspect_chips(aspects))
    assert chips[" head: aspirin "] == looks["aspirin"] and chips[" tail: cancer "] == looks["cancer"]
    monkeypatch.delenv("NO_COLOR")
    assert all("#" in str(s.style) for s in highlight(text, spans, aspects).spans)  # colour as before


def test_no_color_app_highlights_and_chips_differ_per_aspect(papers_ingested: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")

    async def flow() -> None:
        async with started() as (app, pilot):
            assert app.no_color
            await search(app, pilot, TRIPLET)
            assert app.result is not None
            top = app.result.evidence[0]
            assert {h.aspect for h in top.highlights} == {"head", "relation", "tail"}
            cell = app.screen.query_one("#results", DataTable).get_cell_at((0, 3))
            looks = {h.aspect: str(Style.parse(str(s.style)).without_color)
                     for h in top.highlights for s in cell.spans if (s.start, s.end) == (h.start, h.end)}
            assert len(set(looks.values())) == 3, looks  # one look per aspect, without colour
            chips = app.screen.query_one(AspectBar).chip_text(80)
            chip_looks = [str(Style.parse(str(s.style)).without_color) for s in chips.spans]
            assert chip_looks == [looks["head"], looks["relation"], looks["tail"]]

    run(flow)


def test_no_color_text_keeps_its_contrast(papers_ingested: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Textual's greyscale made red "▼ refute" grey 54 on a background of 18: unreadable. Borders drawn in their
    background's colour on purpose stay as they were."""
    monkeypatch.setenv("NO_COLOR", "1")

    async def flow() -> None:
        async with started(wait=False) as (app, _pilot):
            back = Color(18, 18, 18)
            segments = [Segment("▼ 0 refute", Style(color="red", bgcolor="#121212")),
                        Segment("▊", Style(color="#121212", bgcolor="#121212"))]
            for f in app.get_line_filters():
                segments = f.apply(segments, back)
            text, edge = segments
            assert text.style is not None and text.style.color is not None and text.style.bgcolor is not None
            fore = Color.from_rich_color(text.style.color).brightness
            ground = Color.from_rich_color(text.style.bgcolor).brightness
            assert fore - ground >= 0.4, (fore, ground)
            assert edge.style is not None and edge.style.color == edge.style.bgcolor

    run(flow)


def test_reader_copies_the_sentence_with_its_citation(papers_ingested: Path) -> None:
    """`y` copied a result on the Search screen, but in the reader (where a paper is read) it did nothing."""
    async def flow() -> None:
        async with started() as (app, pilot):
            await search(app, pilot, TRIPLET)
            reader = await open_screen(app, pilot, "o", ReaderScreen)
            await until(pilot, lambda: reader.current_id() is not None, "a sentence under the cursor")
            sid = reader.current_id()
            assert sid is not None
            await pilot.press("y")
            await notified(pilot, "copied")
            words = " ".join(reader.sentences[sid].text.split())
            assert app.clipboard.startswith(f"“{words}” — ")
            assert "Aspirin and colorectal cancer" in app.clipboard  # the citation names the paper
            assert reader.query_one(OptionList).has_focus  # the reader is still where it was

    run(flow)


def test_claim_verdicts_wrap_under_their_text(papers_ingested: Path) -> None:
    """At 80 columns a paper's wrapped title and rationale lines ran back to the left edge, under its verdict."""
    from rich.console import Console

    from evtui.tui.screens.verdicts import VerdictsScreen

    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            await search(app, pilot, TRIPLET)
            screen = await open_screen(app, pilot, "c", VerdictsScreen)
            await until(pilot, lambda: screen.verdict is not None, "the verdicts", timeout=60)
            assert screen.verdict is not None and screen.verdict.papers
            ol = screen.query_one(OptionList)
            console = Console(width=ol.content_region.width or 76, record=True)
            for i in range(ol.option_count):
                console.print(ol.get_option_at_index(i).prompt)
            lines = [line for line in console.export_text().splitlines() if line.strip()]
            verdicts = [line for line in lines if line.lstrip()[:1] in "▲▼●"]
            assert len(verdicts) == len(screen.verdict.papers)
            # every other line (the title's and rationales' continuations) starts under the text column
            assert all(line.startswith(" " * 10) for line in lines if line not in verdicts), lines

    run(flow)
