"""Compiling large pools: the derived Python encoding matches its definition, and costs time
near-linear in the pool's size (issue 25, item 7: 200 tools took 17 s, 1,000 never finished)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.compiler.emit_python import accepted_types, encoding_gaps, python_ancestors
from plancheck.ir.lattice import Compat
from plancheck.ir.nodes import Param, Toolset
from tests.support.large_pools import PLAN, layered_pool

PLANCHECK = str(Path(sys.executable).with_name("plancheck"))


@st.composite
def random_pools(draw: st.DrawFn) -> str:
    """An acyclic lattice (parents and conversion targets declared earlier) and tools over it,
    some with polymorphic outputs."""
    count = draw(st.integers(min_value=1, max_value=9))
    lines = ["toolset r {"]
    for i in range(count):
        earlier = st.lists(st.integers(0, i - 1), max_size=2, unique=True) if i else st.just([])
        parents = draw(earlier)
        conversions = draw(st.lists(st.integers(0, count - 1), max_size=1))
        lines.append(f"  type T{i}"
                     + (" <: " + ", ".join(f"T{p}" for p in parents) if parents else "")
                     + (" ~> " + ", ".join(f"T{c}" for c in conversions) if conversions else ""))
    for i in range(draw(st.integers(min_value=1, max_value=6))):
        polymorphic = "any " if draw(st.booleans()) else ""
        lines.append(f"  tool t{i} {{ in x: T{draw(st.integers(0, count - 1))} "
                     f"out y: {polymorphic}T{draw(st.integers(0, count - 1))} }}")
    return "\n".join([*lines, "}"])


def _by_definition(toolset: Toolset) -> tuple[dict[str, list[str]], list[tuple[str, str, str]]]:
    """The annotations and gaps computed straight from ``TypeLattice.compat``, type by type."""
    lattice = toolset.lattice
    accepted = {}
    for expected in lattice.decls:
        convertible = [t for t in lattice.decls
                       if lattice.compat(Param("", t), expected) is Compat.CONVERTIBLE]
        general = [t for t in convertible
                   if not any(o != t and lattice.is_subtype(t, o) for o in convertible)]
        accepted[expected] = [expected, *general]
    used = [t for t in lattice.decls
            if any(p.type == t for tool in toolset.tools.values() for p in tool.inputs)]
    gaps = []
    for tool in toolset.tools.values():
        for output in tool.outputs:
            inherited = python_ancestors(lattice, output)
            for expected in used:
                mypy = bool(inherited.intersection(accepted[expected]))
                ours = lattice.compat(output, expected) is not Compat.INCOMPATIBLE
                if mypy != ours:
                    gaps.append((tool.name, output.name, expected))
    return accepted, gaps


@settings(max_examples=150, deadline=None)
@given(random_pools())
def test_annotations_and_gaps_match_their_definition(source: str) -> None:
    from plancheck.dsl.parser import parse_dsl

    module = parse_dsl(source, "random.wf")
    assert not module.diagnostics, module.diagnostics
    toolset = module.toolsets[0]
    accepted, gaps = _by_definition(toolset)
    assert {t: accepted_types(toolset.lattice, t) for t in toolset.lattice.decls} == accepted
    assert encoding_gaps(toolset) == gaps


def test_a_thousand_tool_pool_compiles_in_seconds(tmp_path: Path) -> None:
    pool = tmp_path / "pool.wf"
    pool.write_text(layered_pool(1000))
    plan = tmp_path / "plan.wf"
    plan.write_text(PLAN)
    start = time.perf_counter()
    done = subprocess.run([PLANCHECK, "compile", "--to", "python", "--tools", str(pool),
                           str(plan), "-o", str(tmp_path / "out.py")],
                          check=False, capture_output=True, text=True, timeout=120)
    elapsed = time.perf_counter() - start
    assert done.returncode == 0, done.stderr
    assert "class T999(" in (tmp_path / "out.py").read_text()
    # Measured: about 1 s here, against minutes before; the margin is for a loaded machine.
    assert elapsed < 30, elapsed
