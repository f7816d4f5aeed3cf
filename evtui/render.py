"""Rich rendering shared by the CLI and the TUI: one colour per aspect, used everywhere."""

from __future__ import annotations

from collections.abc import Sequence

from rich.text import Text

from evtui.models import Aspect, Span

# Distinct on dark and light terminals; aspect i always gets colour i.
ASPECT_COLORS: tuple[str, ...] = (
    "#ff8700", "#00afff", "#5fd75f", "#d75fd7", "#ffd700", "#ff5f5f", "#5fd7d7", "#af87ff",
)


def aspect_color(index: int) -> str:
    return ASPECT_COLORS[index % len(ASPECT_COLORS)]


def aspect_styles(aspects: Sequence[Aspect]) -> dict[str, str]:
    return {a.id: f"bold {aspect_color(i)}" for i, a in enumerate(aspects)}


def highlight(text: str, spans: Sequence[Span], aspects: Sequence[Aspect], base_style: str = "") -> Text:
    """The sentence with each aspect's matches in its colour (later spans win where aspects overlap)."""
    styles = aspect_styles(aspects)
    out = Text(text, style=base_style)
    for s in spans:
        style = styles.get(s.aspect)
        if style and 0 <= s.start < s.end <= len(text):
            out.stylize(f"{style} underline", s.start, s.end)
    return out


def aspect_chips(aspects: Sequence[Aspect]) -> Text:
    out = Text()
    for i, a in enumerate(aspects):
        if i:
            out.append("  ")
        out.append(f" {a.id}: {a.label} ", style=f"bold black on {aspect_color(i)}")
    return out


def coverage_marker(spans: Sequence[Span], aspects: Sequence[Aspect]) -> Text:
    """One dot per aspect: filled in the aspect's colour when the sentence matches it."""
    hit = {s.aspect for s in spans}
    out = Text()
    for i, a in enumerate(aspects):
        out.append("●" if a.id in hit else "○", style=aspect_color(i) if a.id in hit else "dim")
    return out
