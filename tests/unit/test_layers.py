"""The layer order and the absence of import cycles, checked on every CI run (docs/architecture.md draws them).

Imports inside functions count: a lazy import is still a dependency, so hiding one in a function does not pass.
"""

from __future__ import annotations

import sys
from pathlib import Path

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[2]


def module_cycles(package: str) -> list[list[str]]:
    """Strongly connected components (size > 1) of the package's module import graph."""
    graph = grimp.build_graph(package, cache_dir=None)
    edges = {m: graph.find_modules_directly_imported_by(m) for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(root: str) -> None:  # iterative Tarjan: the graph is deep enough to hit the recursion limit
        nonlocal counter
        work = [(root, iter(sorted(edges.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    m = stack.pop()
                    on_stack.discard(m)
                    comp.append(m)
                    if m == node:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))

    for m in sorted(edges):
        if m not in index:
            visit(m)
    return found


def test_no_import_cycles() -> None:
    cycles = module_cycles("evtui")
    assert cycles == [], "import cycles (break them by moving code to the layer that owns it): " + "; ".join(
        " <-> ".join(c) for c in cycles)


def test_the_layer_contract_holds() -> None:
    from importlinter.cli import lint_imports

    assert lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True) == 0, \
        "an import points up the layers: run `lint-imports` for the chain"


def test_the_checks_can_fail(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pkg = tmp_path / "cyclepkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from cyclepkg import b\n")
    (pkg / "b.py").write_text("def f():\n    from cyclepkg import a  # a lazy import is still an edge\n")
    (pkg / "c.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert module_cycles("cyclepkg") == [["cyclepkg.a", "cyclepkg.b"]]
    (tmp_path / "contract.toml").write_text(
        '[tool.importlinter]\nroot_package = "cyclepkg"\n\n[[tool.importlinter.contracts]]\nname = "c over a"\n'
        'type = "layers"\nlayers = ["cyclepkg.c", "cyclepkg.a"]\n')
    (pkg / "a.py").write_text("from cyclepkg import b, c\n")  # a imports c: upward
    from importlinter.cli import lint_imports

    sys.modules.pop("cyclepkg", None)
    assert lint_imports(config_filename=str(tmp_path / "contract.toml"), no_cache=True, no_logo=True) == 1
