"""Which types a compiled input accepts, and where mypy's verdict differs from plancheck's.

Computed once per toolset from inverted indexes, so that compiling a pool costs time roughly
proportional to the pool and the relations it declares, not to the square or cube of its
number of types (a 2,000-tool pool compiles in seconds). See ``emit_python`` for how the
lattice is encoded in Python classes.
"""

from __future__ import annotations

from collections.abc import Iterable

from plancheck.ir.lattice import TypeLattice
from plancheck.ir.nodes import Param, Toolset


class TypeAcceptance:
    """A lattice's implicit conversions, inverted: for each expected type, the types plancheck
    finds *convertible* to it (accepted with warning PC303)."""

    def __init__(self, lattice: TypeLattice) -> None:
        self.lattice = lattice
        self._order = {name: i for i, name in enumerate(lattice.decls)}
        convertible: dict[str, set[str]] = {}
        for name in lattice.decls:
            for target in lattice.conversions(name):
                if target not in lattice.decls:
                    continue
                # A conversion reaches every type related to its target (``Compat``).
                for expected in lattice.ancestors[target] | lattice.descendants[target]:
                    if expected not in lattice.ancestors[name]:
                        convertible.setdefault(expected, set()).add(name)
        self._convertible = convertible
        self._accepted: dict[str, list[str]] = {}
        self._accepted_by: dict[str, set[str]] | None = None

    def in_order(self, types: Iterable[str]) -> list[str]:
        """``types`` in declaration order."""
        return sorted(types, key=lambda name: self._order.get(name, len(self._order)))

    def most_specific(self, types: Iterable[str]) -> list[str]:
        found = set(types)
        descendants = self.lattice.descendants
        return self.in_order(t for t in found if len(descendants[t] & found) == 1)

    def most_general(self, types: Iterable[str]) -> list[str]:
        found = set(types)
        ancestors = self.lattice.ancestors
        return self.in_order(t for t in found if len(ancestors[t] & found) == 1)

    def accepted(self, expected: str) -> list[str]:
        """The types an input of type ``expected`` is annotated with: itself, then the most
        general types plancheck accepts through an implicit conversion (in declaration
        order)."""
        known = self._accepted.get(expected)
        if known is None:
            convertible = self._convertible.get(expected, set())
            known = self._accepted[expected] = [expected, *self.most_general(convertible)]
        return known

    def python_ancestors(self, output: Param) -> frozenset[str]:
        """The lattice types the compiled class of ``output`` inherits (itself included)."""
        lattice = self.lattice
        if not output.polymorphic:
            return lattice.ancestors[output.type]
        return frozenset().union(*(lattice.ancestors[d] for d in lattice.descendants[output.type]))

    def accepted_by(self, annotated: str) -> set[str]:
        """The expected types whose annotation names ``annotated``."""
        if self._accepted_by is None:
            self._accepted_by = {}
            for expected in self.lattice.decls:
                for name in self.accepted(expected):
                    self._accepted_by.setdefault(name, set()).add(expected)
        return self._accepted_by.get(annotated, set())

    def encoding_gaps(self, toolset: Toolset) -> list[tuple[str, str, str]]:
        """``(tool, output, expected type)`` where mypy's verdict on the compiled classes
        would differ from plancheck's.

        mypy accepts an output exactly when one of the annotated types of the input is among
        the output class's ancestors. For an ordinary output the two always agree (an
        ancestor convertible to the input makes the output convertible too, as it inherits
        the ancestor's conversions), so only polymorphic outputs are compared, and each
        against the types either side accepts rather than against every type.
        """
        lattice = self.lattice
        expected_types = {p.type for tool in toolset.tools.values() for p in tool.inputs
                          if p.type in lattice.decls}
        gaps = []
        for tool in toolset.tools.values():
            for output in tool.outputs:
                if not output.polymorphic or output.type not in lattice.decls:
                    continue
                inherited = self.python_ancestors(output)
                mypy = set().union(*(self.accepted_by(name) for name in inherited))
                # plancheck: `any T` fits wherever some subtype of T does (the inherited
                # types), or where a conversion of T reaches (``TypeLattice.compat``).
                plancheck = set(inherited)
                for target in lattice.conversions(output.type):
                    if target in lattice.decls:
                        plancheck |= lattice.ancestors[target] | lattice.descendants[target]
                for expected in self.in_order((mypy ^ plancheck) & expected_types):
                    gaps.append((tool.name, output.name, expected))
        return gaps
