"""What the fused checker looks up in one toolset, kept between plans: its tools as the JSON
fast path sees them, and the type codes each reference and literal draws."""

from __future__ import annotations

from plancheck.ir.lattice import TypeLattice
from plancheck.ir.nodes import Param, Toolset, ToolSignature
from plancheck.typecheck.types import literal_passes, reference_codes

__all__ = ["Tables", "ToolEntry", "tables_for"]


class ToolEntry:
    """A known tool, as the fast path looks at it: its parameters by name, and what the types
    phase says of references to outputs of other tools."""

    __slots__ = ("_reads", "params", "signature")

    def __init__(self, signature: ToolSignature) -> None:
        self.signature = signature
        self.params = {param.name: param for param in signature.inputs}
        self._reads: dict[tuple[str, str, str], tuple[ToolSignature, tuple[str, ...]]] = {}

    def reads(self, name: str, producer: ToolSignature, key: str, tables: Tables
              ) -> tuple[str, ...]:
        """What the types phase reports on input ``name`` reading output ``key`` of a step of
        ``producer`` (:func:`reference_codes`; ``producer`` makes ``key``)."""
        memo_key = (name, producer.name, key)
        found = self._reads.get(memo_key)
        if found is None or found[0] is not producer:
            if len(self._reads) >= 1024:
                self._reads.clear()  # (keys come from plans: a misspelt one is kept too)
            output = producer.output(key)
            assert output is not None
            codes = tables.reference_codes(producer, output, self.signature, self.params[name])
            found = self._reads[memo_key] = (producer, codes)
        return found[1]


class Tables:
    """What the fast path looks up in one toolset: its tools, and the type codes each
    (producer tool, output, consumer tool, input) reference draws. The toolset is read
    afresh where it is cheap to (a tool replaced under the same name, new flows or types
    start the tables over)."""

    __slots__ = ("_fits", "_references", "_stamp", "_tools", "lattice", "literals", "toolset")

    def __init__(self, toolset: Toolset) -> None:
        self.toolset = toolset
        self.lattice: TypeLattice = toolset.lattice
        self._stamp = _stamp(toolset)
        self._tools: dict[str, ToolEntry] = {}
        self._references: dict[tuple[str, str, str, str], tuple[str, ...]] = {}
        self._fits: dict[tuple[str, int], bool] = {}
        self.literals: dict[str, bool] = {}  # string -> whether the lowering reads a literal

    def literal_passes(self, value: str, param: Param) -> bool:
        """Whether the literal string ``value`` passed for ``param`` draws nothing from the
        type checks. Kept: batches repeat their paths."""
        key = (value, id(param))  # (the toolset keeps its parameters alive)
        found = self._fits.get(key)
        if found is None:
            if len(self._fits) >= 2048:
                self._fits.clear()
            found = self._fits[key] = literal_passes(value, param, self.lattice)
        return found

    def current(self) -> bool:
        toolset = self.toolset
        return self._stamp == _stamp(toolset) and self.lattice is toolset.lattice

    def tool(self, name: str) -> ToolEntry | None:
        signature = self.toolset.tools.get(name)
        if signature is None:
            return None
        entry = self._tools.get(name)
        if entry is None or entry.signature is not signature:
            if entry is not None:
                self._references.clear()  # a tool was replaced: its codes may differ
                self._fits.clear()
            entry = self._tools[name] = ToolEntry(signature)
        return entry

    def reference_codes(
        self, producer: ToolSignature, output: Param, consumer: ToolSignature, param: Param
    ) -> tuple[str, ...]:
        key = (producer.name, output.name, consumer.name, param.name)
        codes = self._references.get(key)
        if codes is None:
            codes = self._references[key] = reference_codes(
                output, param, producer, consumer, self.toolset
            )
        return codes


def _stamp(toolset: Toolset) -> tuple[int, int, int, int, int | None]:
    return (id(toolset.tools), id(toolset.flows), len(toolset.flows), id(toolset.types),
            toolset.max_predecessors)


_TABLES: dict[int, Tables] = {}  # by the toolset's id (the entry keeps the toolset alive)
_LAST: list[Tables | None] = [None]  # the tables used last


def tables_for(toolset: Toolset) -> Tables:
    """The tables of ``toolset`` (made afresh when it changed since they were made)."""
    last = _LAST[0]
    if last is not None and last.toolset is toolset and last.current():
        return last
    tables = _TABLES.get(id(toolset))
    if tables is None or tables.toolset is not toolset or not tables.current():
        if len(_TABLES) >= 8:
            _TABLES.clear()
        tables = _TABLES[id(toolset)] = Tables(toolset)
    _LAST[0] = tables
    return tables
