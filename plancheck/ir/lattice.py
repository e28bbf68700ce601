"""The nominal type lattice of a toolset: subtyping, implicit conversions and storage formats.

Built once per toolset (it is part of the toolset's compiled form), so that checking a binding
costs a set lookup. The toolset owns and caches its lattice, so this module reads the pool's
declarations only through their attributes: it names the node classes for the type checker
alone, and ``ir.nodes`` can build a lattice without the two modules importing each other.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum
from typing import TYPE_CHECKING

from plancheck.diagnostics.limits import may_be_close
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import NO_SPAN, Span
from plancheck.records import FrozenRecord

if TYPE_CHECKING:
    from plancheck.ir.nodes import Param, Toolset, TypeDecl


class Compat(Enum):
    """How a produced value relates to the type a consumer expects."""

    OK = "ok"
    CONVERTIBLE = "convertible"  # accepted with a warning (an implicit conversion)
    INCOMPATIBLE = "incompatible"
    UNKNOWN = "unknown"  # a type the toolset does not declare: nothing can be said


class TypeLattice(FrozenRecord):
    """The subtype order of a pool's types: ``ancestors`` and ``descendants`` are reflexive
    (every type is its own), ``formats`` the formats a value of a type (or a subtype) may
    have."""

    __slots__ = _fields = ("decls", "ancestors", "descendants", "formats")

    def __init__(self, decls: dict[str, TypeDecl], ancestors: dict[str, frozenset[str]],
                 descendants: dict[str, frozenset[str]],
                 formats: dict[str, frozenset[str]]) -> None:
        self.decls = decls
        self.ancestors = ancestors
        self.descendants = descendants
        self.formats = formats

    def is_subtype(self, sub: str, sup: str) -> bool:
        return sup in self.ancestors.get(sub, frozenset())

    def related(self, a: str, b: str) -> bool:
        return self.is_subtype(a, b) or self.is_subtype(b, a)

    def conversions(self, name: str) -> frozenset[str]:
        """Types a value of ``name`` converts to implicitly (declared on it or its ancestors)."""
        targets: set[str] = set()
        for ancestor in self.ancestors.get(name, frozenset()):
            targets.update(self.decls[ancestor].converts_to)
        return frozenset(targets)

    def compat(self, produced: Param, expected: str) -> Compat:
        """Can the value an output ``produced`` makes be passed where ``expected`` is wanted?"""
        actual = produced.type
        if actual not in self.decls or expected not in self.decls:
            return Compat.UNKNOWN
        if self.is_subtype(actual, expected):
            return Compat.OK
        if produced.polymorphic and self.descendants[actual] & self.descendants[expected]:
            # `any T` may be any subtype of T, so it fits wherever some subtype of T does.
            return Compat.OK
        if any(self.related(target, expected) for target in self.conversions(actual)):
            return Compat.CONVERTIBLE
        return Compat.INCOMPATIBLE

    def literal_fits(self, extension: str, expected: str) -> bool | None:
        """Whether a file with this extension can hold a value of ``expected``.

        ``None`` when there is no evidence either way (unknown type, or a type whose lattice
        declares no formats).
        """
        allowed = self.formats.get(expected)
        if not allowed:
            return None
        return extension in allowed

    def types_for_extension(self, extension: str) -> list[str]:
        """The most general declared types whose own formats include ``extension``."""
        direct = [n for n, d in self.decls.items() if extension in d.formats]
        return sorted(
            n for n in direct if not any(o != n and self.is_subtype(n, o) for o in direct)
        )

    def chain(self, name: str) -> list[str]:
        """A readable ancestry, most specific first (for messages)."""
        found = self.ancestors.get(name, frozenset())
        return sorted(found, key=lambda n: -len(self.ancestors[n]))

    def describe(self, name: str) -> str:
        decl = self.decls.get(name)
        if decl is None or not decl.doc:
            return f"`{name}`"
        doc = decl.doc.rstrip(".")
        return f"`{name}` ({doc[0].lower()}{doc[1:]})"


def build_lattice(toolset: Toolset) -> tuple[TypeLattice, list[Diagnostic]]:
    """Compute the subtype closure; report unknown names and cycles instead of failing."""
    diagnostics: list[Diagnostic] = []
    decls = dict(toolset.types)
    for decl in toolset.types.values():
        for i, parent in enumerate((*decl.parents, *decl.converts_to)):
            if parent not in decls:
                where = decl.name_spans[i] if i < len(decl.name_spans) else decl.span
                diagnostics.append(_unknown_type(parent, where, decls))
    ancestors: dict[str, frozenset[str]] = {}
    for name, decl in decls.items():
        found, cycle = _ancestors_of(name, decls)
        if cycle:
            diagnostics.append(
                make(
                    "PC703",
                    f"type `{name}` is its own supertype",
                    primary=decl.span,
                    label="this declaration closes the cycle",
                    data={"type": name},
                )
            )
        ancestors[name] = frozenset(found)
    descendants: dict[str, set[str]] = {name: set() for name in decls}
    for name, ups in ancestors.items():
        for up in ups:
            descendants[up].add(name)
    own_formats = {name: _effective_formats(name, decls, ancestors) for name in decls}
    formats = {
        name: frozenset().union(*(own_formats[d] for d in descendants[name]))
        for name in decls
    }
    for tool in toolset.tools.values():
        for param in (*tool.inputs, *tool.outputs):
            if param.type not in decls:
                where = param.type_span if param.type_span != NO_SPAN else param.span
                diagnostics.append(_unknown_type(param.type, where, decls))
    lattice = TypeLattice(
        decls,
        ancestors,
        {name: frozenset(items) for name, items in descendants.items()},
        formats,
    )
    return lattice, diagnostics


def _ancestors_of(name: str, decls: dict[str, TypeDecl]) -> tuple[set[str], bool]:
    seen: set[str] = {name}
    stack = list(decls[name].parents)
    cycle = False
    while stack:
        current = stack.pop()
        if current == name:
            cycle = True
            continue
        if current in seen or current not in decls:
            continue
        seen.add(current)
        stack.extend(decls[current].parents)
    return seen, cycle


def _effective_formats(
    name: str, decls: dict[str, TypeDecl], ancestors: dict[str, frozenset[str]]
) -> frozenset[str]:
    """A type's own formats, or else those of its nearest ancestors that declare some."""
    if decls[name].formats:
        return frozenset(decls[name].formats)
    candidates = [a for a in ancestors[name] if a != name and decls[a].formats]
    nearest = [
        a for a in candidates if not any(o != a and a in ancestors[o] for o in candidates)
    ]
    return frozenset().union(*(frozenset(decls[a].formats) for a in nearest))


def _unknown_type(name: str, span: Span, decls: Iterable[str]) -> Diagnostic:
    from difflib import get_close_matches

    names = list(decls)
    close = get_close_matches(name, names, n=1) if may_be_close(name, names) else []
    return make(
        "PC701",
        f"type `{name}` is not declared",
        primary=span,
        label="used here",
        help=[f"did you mean `{close[0]}`?"] if close else [],
        data={"type": name},
    )
