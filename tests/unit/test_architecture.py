"""The domain core must not depend on the UI: only evtui/tui/ may import textual."""

from __future__ import annotations

import ast
from pathlib import Path

PKG = Path(__file__).parents[2] / "evtui"


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_only_tui_imports_textual() -> None:
    offenders = [
        str(p.relative_to(PKG.parent))
        for p in PKG.rglob("*.py")
        if "tui" not in p.relative_to(PKG).parts[:1] and "textual" in _imports(p)
    ]
    assert offenders == [], f"modules outside evtui/tui import textual: {offenders}"


def test_checker_sees_a_textual_import(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("from textual.app import App\n")
    assert "textual" in _imports(bad)
