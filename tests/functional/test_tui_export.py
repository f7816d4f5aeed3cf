"""The Export screen: the format follows the typed file name (out.bib was written as Markdown), the preview shows
aspect tags readably and headings whole, and the list's columns fit 80x24 and 120x40."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Button, DataTable, Input, Markdown, Select
from tui_pilot import TRIPLET, focus_results, notified, run, search, started, until

from evtui.tui.screens.export import ExportScreen, preview_markdown


async def _export_screen(app: Any, pilot: Any, rows: int = 2) -> ExportScreen:
    await search(app, pilot, TRIPLET)
    await focus_results(app, pilot)
    await pilot.press(*(["space", "j"] * rows), "e")
    await until(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
    screen = app.screen
    assert isinstance(screen, ExportScreen)
    await until(pilot, lambda: screen.query_one("#basket", DataTable).row_count == rows, "the basket")
    await pilot.pause(0.2)
    return screen


def test_preview_reads_cleanly_and_the_file_keeps_the_tags() -> None:
    """Tags set inline made the preview read "aspirin head per day": it shows the bold matches alone."""
    md = "> **aspirin**<sub>head</sub> per day **reduced**<sub>relation</sub> it; \\<sub>x\\</sub> is text"
    assert preview_markdown(md) == "> **aspirin** per day **reduced** it; \\<sub>x\\</sub> is text"
    assert preview_markdown("a **b**<sub>a\\_1</sub>") == "a **b**"


def test_typed_extension_picks_the_format_and_save_writes_it(papers_ingested: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.bib"

    async def flow() -> None:
        async with started((120, 40)) as (app, pilot):
            screen = await _export_screen(app, pilot)
            fmt = screen.query_one("#export-format", Select)
            path = screen.query_one("#export-path", Input)
            assert fmt.value == "md"
            await pilot.press("w", "ctrl+u", *str(out))
            await pilot.pause()
            assert path.value == str(out)
            assert fmt.value == "bibtex"  # the format followed the name as it was typed
            await pilot.press("enter")
            await until(pilot, out.exists, "the export file")
            assert out.read_text(encoding="utf-8").startswith("@article{")
            await notified(pilot, "(BibTeX)")
            # a format picked afterwards renames the file; a name whose extension already means it is kept
            fmt.value = "jsonl"
            await pilot.pause()
            assert path.value == str(tmp_path / "out.jsonl")
            path.value = str(tmp_path / "notes.markdown")
            await pilot.pause()
            assert fmt.value == "md" and path.value == str(tmp_path / "notes.markdown")
            path.value = str(tmp_path / "notes.txt")  # an extension with no meaning leaves the format alone
            await pilot.pause()
            assert fmt.value == "md"

    run(flow)


@pytest.mark.parametrize(("size", "sentence_min", "stacked"), [((80, 24), 40, True), ((120, 40), 77, True),
                                                               ((180, 50), 40, False)])
def test_list_and_preview_fit_the_terminal(papers_ingested: Path, size: tuple[int, int], sentence_min: int,
                                           stacked: bool) -> None:
    """At 80x24 the paper column was 3 characters ("sci") and Save touched the edge; at 120x40 the sentences were
    about 25 characters (77 now that the verdict column takes 3); the preview ran tags into words (aspirinhead) and
    cut the heading."""
    async def flow() -> None:
        async with started(size) as (app, pilot):
            screen = await _export_screen(app, pilot)
            assert screen.has_class("-stacked") is stacked  # below 160 columns the list over the preview
            table = screen.query_one("#basket", DataTable)
            widths = {str(c.key.value): c.get_render_width(table) - 2 * table.cell_padding
                      for c in table.columns.values()}
            assert widths["sentence"] >= sentence_min, widths
            papers = [str(table.get_cell(r_key, "paper")) for r_key in table.rows]
            assert widths["paper"] >= 16 and all(len(p) <= widths["paper"] for p in papers), (papers, widths)
            if stacked and size[0] >= 120:  # ids whole (file:aspirin-<hash>, 21 characters)
                assert all("…" not in p for p in papers), papers
            save = screen.query_one("#save", Button).region
            assert save.right <= size[0] - 1  # a margin before the right edge
            preview = screen.query_one("#preview", Markdown)
            source = preview.source
            assert "<sub>" not in source and "** `head`" not in source and "**" in source
            heading = next(h for h in preview.query("MarkdownH3"))
            assert heading.region.width == preview.content_region.width  # wraps instead of being cut
            assert "level" in source and "(level 5 direct, quantified)" not in source

    run(flow)


def test_the_list_marks_each_sentence_with_its_verdict(papers_ingested: Path) -> None:
    """The list where the user decides what to keep showed no verdict: each row now has ▲ / ▼ / ● (· not judged)."""
    async def flow() -> None:
        async with started((80, 24)) as (app, pilot):
            screen = await _export_screen(app, pilot)
            table = screen.query_one("#basket", DataTable)
            glyphs = {"supports": "▲", "refutes": "▼", "neutral": "●"}
            marks = [str(table.get_cell(key, "verdict")) for key in table.rows]
            want = [glyphs[it.verdict["stance"]] if it.verdict else "·" for it in screen.items]
            assert marks == want and len(marks) == 2, (marks, want)
            assert any(it.verdict for it in screen.items)  # the local judge's verdicts, shown as marks

    run(flow)
