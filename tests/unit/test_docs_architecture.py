"""docs/architecture.md draws the layer contract of pyproject.toml: the drawing must name the same layers, in order.

The drawing had fallen behind the contract (`paper_vectors` and `sharing` were layered but not drawn), so a reader
looking for where a module sits did not find it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ROOT = Path(__file__).resolve().parents[2]


def contract_layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contracts = config["tool"]["importlinter"]["contracts"]
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    return [sorted(name.strip() for name in layer.split("|")) for layer in layers]


def drawn_layers() -> list[list[str]]:
    """The diagram's layers: each line's modules (from the module column up to its comment in parentheses)."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## The layers", 1)[1].split("```", 2)[1]
    lines = [line for line in block.splitlines()[1:] if line.strip()]
    column = min(len(line) - len(line[len(line.split()[0]):].lstrip()) for line in lines if not line[0].isspace())
    out = []
    for line in lines:
        modules = re.split(r"\s{2,}\(", line[column:].rstrip(), maxsplit=1)[0]
        out.append(sorted(name.strip() for name in modules.split("|")))
    return out


def test_the_drawing_names_every_layer_of_the_contract_in_order() -> None:
    assert drawn_layers() == contract_layers()


def test_every_drawn_module_exists() -> None:
    for layer in drawn_layers():
        for name in layer:
            assert (ROOT / "evtui" / f"{name}.py").exists() or (ROOT / "evtui" / name).is_dir(), name
