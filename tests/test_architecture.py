"""The layers of the package (README.md, "Architecture"; docs/architecture.md): imports
only run down.

Every ``import`` and ``from ... import`` in ``src/semnmf`` is read with :mod:`ast`,
including those inside functions (an import deferred for speed is still a dependency).
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "src" / "semnmf"

# Floors from the bottom up. A unit may import its own floor's modules only within itself,
# and any unit of a lower floor.
FLOORS = [
    {"_utils"},
    {"metrics"},
    {"text"},
    {"datasets", "graphs"},
    {"models"},
    {"ensemble", "refine"},
    {"pipelines"},
    {"experiments", "report"},
    {"workflows"},
    {"cli"},
    {"__init__", "__main__"},
]
FLOOR = {unit: level for level, units in enumerate(FLOORS) for unit in units}


def _module_name(path):
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path, source=None):
    """Absolute names of the semnmf modules that ``path`` imports (``source``: its text,
    read from ``path`` when not given)."""
    tree = ast.parse(path.read_text(encoding="utf-8") if source is None else source)
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name.startswith("semnmf")]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("semnmf"):
                continue
            if node.module is None or target.count(".") == 0:
                # "from . import x" / "from semnmf import x": x is a module or a name of it
                found += [f"{target}.{alias.name}" for alias in node.names]
            else:
                found.append(target)
    return found


def _unit(module):
    parts = module.split(".")
    if len(parts) == 1:
        return "__init__"
    return parts[1]


SOURCES = sorted(PACKAGE.rglob("*.py"))


def test_every_top_level_unit_has_a_floor():
    units = {_unit(_module_name(path)) if path.name != "__main__.py" else "__main__"
             for path in SOURCES}
    assert units <= set(FLOOR), f"units without a floor: {units - set(FLOOR)}"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_only_run_down(path):
    here = "__main__" if path.name == "__main__.py" else _unit(_module_name(path))
    wrong = []
    for target in _imports(path):
        there = _unit(target)
        if there == here:
            continue
        if there not in FLOOR:  # "from semnmf import __version__" and the like
            there = "__init__"
        if FLOOR[there] >= FLOOR[here]:
            wrong.append(f"{target} (floor {FLOOR[there]}, {there})")
    assert not wrong, (f"{path.relative_to(PACKAGE)} (floor {FLOOR[here]}, {here}) imports "
                       f"up or sideways: {', '.join(wrong)}")


@pytest.mark.parametrize("path", sorted((PACKAGE / "models" / "_solvers").rglob("*.py")),
                         ids=lambda p: p.name)
def test_solvers_know_no_estimator(path):
    """The private solver layer sits under the public estimators: it imports no module of
    ``semnmf.models`` outside ``_solvers``."""
    wrong = [t for t in _imports(path)
             if t.startswith("semnmf.models") and not t.startswith("semnmf.models._solvers")]
    assert not wrong, f"{path.name} imports the estimator layer: {wrong}"


def test_the_reader_resolves_deferred_relative_imports():
    """An import inside a function, relative or absolute, is found and resolved."""
    source = ("import numpy\n"
              "def f():\n    from ..refine import GTNMF\n    from . import nmf\n"
              "    import semnmf.cli\n    from .. import report\n")
    found = _imports(PACKAGE / "models" / "gnmf.py", source)
    assert found == ["semnmf.refine", "semnmf.models.nmf", "semnmf.cli", "semnmf.report"]
    assert [_unit(t) for t in found] == ["refine", "models", "cli", "report"]


@pytest.mark.parametrize("path", [p for p in SOURCES if p.parent.name != "cli"
                                  and p.name != "__main__.py"],
                         ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_library_never_prints(path):
    """Only the command line writes to stdout; the library logs (``_utils.progress.log``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    calls = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
             and isinstance(node.func, ast.Name) and node.func.id == "print"]
    assert not calls, f"{path.relative_to(PACKAGE)} calls print() on lines {calls}"


MODULES = {_module_name(path): path for path in SOURCES if path.name != "__main__.py"}


def _module_of(target):
    """The semnmf module a target names: itself, or the longest module prefix (``from
    .nmf import NMF`` gives ``semnmf.models.nmf``; ``from . import x`` may name a module
    or a name of the package)."""
    parts = target.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in MODULES:
            return name
    return None


def _import_graph(modules):
    return {name: sorted({m for m in map(_module_of, _imports(path))
                          if m is not None and m != name})
            for name, path in modules.items()}


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in graph.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_circle_anywhere():
    """No circle of imports between modules, inside one folder as between folders (an
    import deferred into a function counts: it is still a dependency)."""
    circles = _cycles(_import_graph(MODULES))
    assert not circles, "import circles: " + "; ".join(" <-> ".join(c) for c in circles)


def test_the_circle_finder_finds_a_circle():
    graph = {"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}
    assert _cycles(graph) == [["a", "b", "c"]]
    assert _cycles({"a": ["b"], "b": []}) == []


LONGEST_FUNCTION = 120


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_function_is_longer_than_a_screenful_or_two(path):
    """Rooms with one job: no function (docstring included) longer than 120 lines."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    long = [f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(tree)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LONGEST_FUNCTION]
    assert not long, f"{path.relative_to(PACKAGE)}: {', '.join(long)}"
