"""The layer map: each package imports only from its own layer and the layers below it.

Every ``import`` in ``plancheck/`` counts, at module level or inside a function, and so does
``importlib.import_module("plancheck....")`` with a literal name. Imports under
``if TYPE_CHECKING:`` are exempt (they never run). On top of the map, packages must not import
each other in a cycle, even within one layer, and the modules of one package must not import
each other in a cycle either (a function-level import hides a cycle from Python, not from the
design: the two modules still cannot be understood, tested or moved apart).

The map (bottom to top) is the layer table of docs/architecture.md; a module that no entry
covers is a failure too, so a new package has to be placed before it can land.
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE_ROOT = Path(__file__).resolve().parents[1] / "plancheck"

# Layer of each top-level unit of ``plancheck`` (a subpackage or a module). ``plancheck`` itself
# (its ``__init__``) imports nothing at run time: it exports the API lazily.
LAYERS: dict[str, int] = {
    "plancheck": 0,
    "plancheck.build_info": 0,
    "plancheck.diagnostics": 0,
    "plancheck.fast_json": 0,
    "plancheck.fileio": 0,
    "plancheck.locks": 0,
    "plancheck.records": 0,
    "plancheck.ir": 1,
    "plancheck.formats": 1,
    "plancheck.dsl": 2,
    "plancheck.dora": 2,
    "plancheck.typecheck": 3,
    "plancheck.interp": 3,
    "plancheck.checks": 3,
    "plancheck.policy": 3,
    "plancheck.compiler": 4,
    "plancheck.corpus": 4,
    "plancheck.api": 7,
    "plancheck.render": 5,
    "plancheck.guard": 5,
    "plancheck.smt": 6,
    "plancheck.scoring": 6,
    "plancheck.planners": 7,
    "plancheck.config": 8,
    "plancheck.cli": 8,
    "plancheck.integrations": 8,
    "plancheck.__main__": 8,
}

# Module cycles inside one package that exist today, each the set of modules of one strongly
# connected component. The list only shrinks: a cycle broken is removed from it (a test fails
# while an entry names a cycle that no longer exists), and no new entry is added.
KNOWN_MODULE_CYCLES: list[frozenset[str]] = []


@dataclass(frozen=True)
class Import:
    source: str  # the importing module
    target: str  # the imported module (or package)
    file: str
    line: int


def module_name(root: Path, file: Path) -> str:
    parts = list(file.relative_to(root.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _runtime_nodes(tree: ast.AST) -> Iterator[ast.AST]:
    """Every node, except the bodies of ``if TYPE_CHECKING:`` blocks."""
    stack: list[ast.AST] = [tree]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))


def imports_of(root: Path) -> Iterator[Import]:
    for file in sorted(root.rglob("*.py")):
        source = module_name(root, file)
        is_package = file.name == "__init__.py"
        tree = ast.parse(file.read_text(encoding="utf-8"), str(file))
        for node in _runtime_nodes(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = source.split(".")
                    if not is_package:
                        base = base[:-1]
                    base = base[: len(base) - node.level + 1]
                    module = ".".join([*base, *([node.module] if node.module else [])])
                else:
                    module = node.module or ""
                # ``from package import module`` imports the module.
                targets = [f"{module}.{alias.name}" for alias in node.names] or [module]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute | ast.Name)
                and (getattr(node.func, "attr", None) or getattr(node.func, "id", None))
                == "import_module"
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, str)
            ):
                targets = [node.args[0].value]
            for target in targets:
                if target == "plancheck" or target.startswith("plancheck."):
                    yield Import(source, target, str(file), getattr(node, "lineno", 0))


def unit_of(module: str, layers: dict[str, int]) -> str | None:
    """The longest entry of the layer map that covers ``module``."""
    parts = module.split(".")
    # The root entry is the package's ``__init__`` alone, not every module below it.
    for end in range(len(parts), 1, -1):
        candidate = ".".join(parts[:end])
        if candidate in layers:
            return candidate
    return "plancheck" if module == "plancheck" else None


def violations(root: Path, layers: dict[str, int]) -> list[str]:
    """Upward imports, modules the map does not place, and cycles between units."""
    found: list[str] = []
    graph: dict[str, set[str]] = {}
    for item in imports_of(root):
        source_unit = unit_of(item.source, layers)
        target_unit = unit_of(item.target, layers)
        name = item.target.removeprefix("plancheck.")
        if target_unit is None and "." not in name and not (
            (root / name).is_dir() or (root / f"{name}.py").is_file()
        ):
            target_unit = "plancheck"  # ``from plancheck import __version__``: an attribute
        if source_unit is None:
            found.append(f"{item.file}: module {item.source} is not in the layer map")
            continue
        if target_unit is None:
            found.append(f"{item.file}:{item.line}: {item.target} is not in the layer map")
            continue
        if layers[target_unit] > layers[source_unit]:
            found.append(
                f"{item.file}:{item.line}: {item.source} (layer {layers[source_unit]}) imports "
                f"{item.target} (layer {layers[target_unit]}): an import up the layer map"
            )
        if target_unit not in {source_unit, "plancheck"}:
            graph.setdefault(source_unit, set()).add(target_unit)
    found.extend(f"import cycle between packages: {' -> '.join(c)}" for c in cycles(graph))
    return found


def module_of(root: Path, target: str) -> str | None:
    """The module (or package) an import names: ``from plancheck.x import name`` imports
    ``plancheck.x`` when ``name`` is not a module of its own."""
    parts = target.split(".")
    while len(parts) > 1:
        path = root.parent.joinpath(*parts)
        if path.is_dir() or path.with_suffix(".py").is_file():
            return ".".join(parts)
        parts.pop()
    return None


def module_cycles(root: Path, layers: dict[str, int]) -> list[frozenset[str]]:
    """The strongly connected components of the import graph between the modules of each unit
    of the layer map (cycles between units are :func:`violations`' business)."""
    graph: dict[str, set[str]] = {}
    for item in imports_of(root):
        target = module_of(root, item.target)
        if target is None or target == item.source:
            continue
        unit = unit_of(item.source, layers)
        if unit is not None and unit != "plancheck" and unit_of(target, layers) == unit:
            graph.setdefault(item.source, set()).add(target)
    return [frozenset(component) for component in cycles(graph)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one node (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                components.append([*sorted(component), sorted(component)[0]])

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return components


def test_the_package_follows_the_layer_map() -> None:
    problems = violations(PACKAGE_ROOT, LAYERS)
    assert not problems, "\n".join(problems)


def test_no_module_cycle_inside_a_package_beyond_the_known_ones() -> None:
    found = module_cycles(PACKAGE_ROOT, LAYERS)
    new = [sorted(c) for c in found if c not in KNOWN_MODULE_CYCLES]
    assert not new, f"import cycles between the modules of one package: {new}"


def test_every_known_module_cycle_still_exists() -> None:
    """The allowlist is kept honest: a cycle broken (or changed) comes off it."""
    found = module_cycles(PACKAGE_ROOT, LAYERS)
    gone = [sorted(c) for c in KNOWN_MODULE_CYCLES if c not in found]
    assert not gone, f"no longer cycles (remove them from KNOWN_MODULE_CYCLES): {gone}"


def test_a_module_cycle_hidden_in_a_function_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "ir/__init__.py": "",
        "ir/nodes.py": """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from plancheck.ir.types import Kind  # exempt: never runs
            def lattice():
                from plancheck.ir.lattice import build  # the cycle, hidden in a function
                return build
        """,
        "ir/lattice.py": "from .nodes import lattice\n\ndef build(): ...\n",
        "ir/types.py": "from plancheck.ir import nodes\n",
        "ir/leaf.py": "from plancheck.ir.lattice import build\n",
    })
    assert module_cycles(root, LAYERS) == [
        frozenset({"plancheck.ir.lattice", "plancheck.ir.nodes"})
    ]
    assert violations(root, LAYERS) == []  # one package: no cycle between packages


# --------------------------------------------------------------------------- what ships

MAX_LINES = 800  # no module under plancheck/ longer: one job a module

# How plancheck is entered: the command line, the API (and the package's lazy exports).
ENTRY_POINTS = ("plancheck", "plancheck.__main__", "plancheck.cli", "plancheck.api")
# Modules no entry point reaches that are still the package's, each for a stated reason.
# (Anything else that only the tests import belongs in tests/support/.)
LIBRARY_ONLY = {
    "plancheck.integrations.agents": "the OpenAI Agents SDK guardrails (docs: guarding an agent "
                                     "loop), imported by the user's agent",
    "plancheck.cli.__main__": "`python -m plancheck.cli`",
    "plancheck.dora.score": "the paper's wording of DORA's metrics, a documented option "
                            "(docs/ecosystem.md)",
    "plancheck.dora.paper_answers": "the paper's wording of DORA's answer operators, a "
                                    "documented option (docs/dora-scoring.md)",
}
# A module named in a string (``"plancheck.render.text:TextStream"`` in the format registry,
# the command table's module names): what ``importlib`` is given at run time; ``"P.*"`` names
# every module of package P (a registry's built-in entries, found there).
_MODULE_IN_STRING = re.compile(r"^(plancheck(?:\.\w+)+)(?::\w+|(\.\*))?$")


def reachable(root: Path, entry_points: tuple[str, ...]) -> set[str]:
    """The modules that running the entry points can import: through imports (at run time),
    module names in string constants, and a module's packages (importing ``a.b`` runs ``a``)."""
    graph: dict[str, set[str]] = {}
    for item in imports_of(root):
        target = module_of(root, item.target)
        if target is not None:
            graph.setdefault(item.source, set()).add(target)
    for file in root.rglob("*.py"):
        source = module_name(root, file)
        edges = graph.setdefault(source, set())
        parts = source.split(".")
        edges.update(".".join(parts[:end]) for end in range(1, len(parts)))
        for node in _runtime_nodes(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                named = _MODULE_IN_STRING.match(node.value)
                target = module_of(root, named[1]) if named else None
                if target is not None:
                    edges.add(target)
                if named and named[2] and target is not None:
                    package = root.parent.joinpath(*target.split("."))
                    edges.update(module_name(root, f) for f in package.glob("*.py"))
    seen: set[str] = set()
    stack = list(entry_points)
    while stack:
        module = stack.pop()
        if module not in seen:
            seen.add(module)
            stack.extend(graph.get(module, ()))
    return seen


def test_no_module_is_longer_than_the_limit() -> None:
    long = {str(f.relative_to(PACKAGE_ROOT.parent)): n for f in sorted(PACKAGE_ROOT.rglob("*.py"))
            if (n := len(f.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by job): {long}"


def test_every_module_is_reached_from_an_entry_point() -> None:
    """Nothing under plancheck/ serves only the tests (those helpers live in tests/support/)."""
    modules = {module_name(PACKAGE_ROOT, f) for f in PACKAGE_ROOT.rglob("*.py")}
    unreached = modules - reachable(PACKAGE_ROOT, ENTRY_POINTS)
    assert unreached == set(LIBRARY_ONLY), (
        f"reached by no entry point: {sorted(unreached - set(LIBRARY_ONLY))}; "
        f"reached after all (remove from LIBRARY_ONLY): {sorted(set(LIBRARY_ONLY) - unreached)}")


def test_a_module_only_tests_import_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "api.py": "def check():\n    from plancheck.render import registry\n",
        "cli/__init__.py": 'COMMANDS = {"score": "plancheck.cli.score"}\n',
        "cli/score.py": "",
        "render/__init__.py": "",
        "render/registry.py": 'FORMATS = {"text": "plancheck.render.text:TextStream"}\n',
        "render/text.py": "",
        "testing/__init__.py": "",
        "testing/completions.py": "from plancheck.render import text\n",
    })
    assert sorted({module_name(root, f) for f in root.rglob("*.py")}
                  - reachable(root, ENTRY_POINTS)) == [
        "plancheck.testing", "plancheck.testing.completions"]


def test_every_unit_in_the_map_exists() -> None:
    for unit in LAYERS:
        path = PACKAGE_ROOT.parent.joinpath(*unit.split("."))
        assert path.is_dir() or path.with_suffix(".py").is_file(), unit


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "plancheck"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text), encoding="utf-8")
    return root


def test_an_upward_import_is_caught_at_module_level_and_inside_functions(
    tmp_path: Path,
) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "diagnostics/__init__.py": "",
        "diagnostics/model.py": "from plancheck.compiler.driver import check_plan\n",
        "ir/__init__.py": "",
        "ir/nodes.py": """
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from plancheck.compiler.driver import Report  # exempt: never runs
            def late():
                from ..render import text  # a relative import inside a function
                import importlib
                return importlib.import_module("plancheck.cli")
        """,
        "compiler/__init__.py": "",
        "compiler/driver.py": "from plancheck.diagnostics.model import Diagnostic\n",
        "render/__init__.py": "",
        "render/text.py": "",
        "cli/__init__.py": "",
    })
    problems = violations(root, LAYERS)
    assert any("plancheck.diagnostics.model (layer 0) imports plancheck.compiler.driver" in p
               for p in problems), problems
    assert any("plancheck.ir.nodes (layer 1) imports plancheck.render.text" in p
               for p in problems), problems
    assert any("plancheck.ir.nodes (layer 1) imports plancheck.cli" in p for p in problems)
    assert not any("nodes.py:4:" in p for p in problems), problems  # TYPE_CHECKING: exempt
    assert len([p for p in problems if "layer map" in p and "up" in p]) == 3, problems


def test_a_cycle_within_one_layer_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {
        "__init__.py": "",
        "typecheck/__init__.py": "",
        "typecheck/names.py": "def f():\n    from plancheck.interp import engine\n",
        "interp/__init__.py": "",
        "interp/engine.py": "from plancheck.typecheck.names import f\n",
    })
    problems = violations(root, LAYERS)
    assert problems == [
        "import cycle between packages: plancheck.interp -> plancheck.typecheck -> "
        "plancheck.interp"
    ]


def test_an_unplaced_module_is_caught(tmp_path: Path) -> None:
    root = _tree(tmp_path, {"__init__.py": "", "newthing.py": "import plancheck.ir\n"})
    assert any("not in the layer map" in p for p in violations(root, LAYERS))


@pytest.mark.parametrize("unit", sorted(LAYERS))
def test_architecture_page_names_every_unit(unit: str) -> None:
    section = (PACKAGE_ROOT.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    short = unit.removeprefix("plancheck.").replace(".", "/")
    if unit in {"plancheck", "plancheck.__main__"}:
        return
    assert f"`{short}" in section, f"docs/architecture.md does not describe {short}"
