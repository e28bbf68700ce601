"""Tool pools from whatever a program holds: a path, a loaded toolset, a Python value, JSON or
DSL text, or several pools at once, merged.

* a value: an MCP ``tools/list`` result (or the JSON-RPC response holding it), an OpenAI
  ``tools`` list (chat or Responses shape), an Anthropic ``tools`` list (``input_schema``), a
  DisasterBench manifest, a TaskBench document;
* text: JSON text of one of those, or workflow DSL source (a string holding ``{`` or a line
  break is text; any other string names a file, or ``builtin`` / ``dora``);
* several pools: a list or tuple of pools (paths, toolsets, ``tools/list`` results), or a dict
  from server name to pool. Tools are merged into one toolset; a name two pools define
  differently is kept from each under ``SERVER.NAME`` (the server's name, or ``poolN``), and
  one warning lists every such name.

A loaded pool is kept and reused: a value or text by its content (and the same object by its
identity, without reading it again), a file by its path, size and modification time.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.severity import Severity
from plancheck.ir.json_data import json_data_problem
from plancheck.ir.nodes import Toolset, ToolSignature
from plancheck.records import replace

_KEEP = 32  # pools kept (least recently used dropped first)
_BY_CONTENT: OrderedDict[tuple[Any, ...], tuple[Toolset, list[Diagnostic]]] = OrderedDict()
_BY_IDENTITY: OrderedDict[int, tuple[Any, Toolset, list[Diagnostic]]] = OrderedDict()


def load_toolset(spec: Any = None) -> Toolset:
    """The built-in pool (``None``), a DSL file, a release directory or a tool manifest; or a
    value or text: an MCP ``tools/list`` result, an OpenAI or Anthropic ``tools`` list, JSON
    or DSL text; or several pools (a list of them, or a dict from server name to pool),
    merged. A pool loaded once is reused.

    Raises :class:`plancheck.corpus.toolsets.ToolsetError` when it cannot be loaded.
    (Here, not beside ``check``, so that an agent loop's guard loads a pool without importing
    the checker.)
    """
    return toolset_from(spec)


def toolset_from(spec: Any) -> Toolset:
    """The toolset ``spec`` names or holds (see the module docstring); raises
    :class:`~plancheck.corpus.toolsets.ToolsetError` when it cannot be used."""
    if isinstance(spec, Toolset):
        return spec
    return load_pool(spec)[0]


def load_pool(spec: Any) -> tuple[Toolset, list[Diagnostic]]:
    """The toolset and the warnings loading it raised (kept: a second load reuses it)."""
    if isinstance(spec, Toolset):
        return spec, []
    if isinstance(spec, (dict, list, tuple)):
        held = _BY_IDENTITY.get(id(spec))
        if held is not None and held[0] is spec:
            _BY_IDENTITY.move_to_end(id(spec))
            return held[1], held[2]
        problem = json_data_problem(spec)  # (a pool inside itself: every walk below would hang)
        if problem is not None:
            from plancheck.corpus.pool_errors import ToolsetError

            raise ToolsetError([make("PC706", f"the tool pool is not JSON data: {problem}")])
    key = _content_key(spec)
    loaded = _BY_CONTENT.get(key) if key is not None else None
    if loaded is None:
        loaded = _load(spec)
        if key is not None:
            _keep(_BY_CONTENT, key, loaded)
    else:
        _BY_CONTENT.move_to_end(key)  # type: ignore[arg-type]
    if isinstance(spec, (dict, list, tuple)):
        _keep(_BY_IDENTITY, id(spec), (spec, *loaded))
    return loaded


def _keep(cache: OrderedDict[Any, Any], key: Any, value: Any) -> None:
    cache[key] = value
    while len(cache) > _KEEP:
        cache.popitem(last=False)


def _content_key(spec: Any) -> tuple[Any, ...] | None:
    if spec is None:
        return ("builtin",)
    if isinstance(spec, Path) or (isinstance(spec, str) and not _is_text(spec)):
        import os

        try:
            stat = os.stat(spec)
        except (OSError, ValueError):
            return None  # not there: loading says why
        return ("path", str(Path(spec).resolve()), stat.st_size, stat.st_mtime_ns)
    if isinstance(spec, str):
        return ("text", spec)
    try:
        return ("value", json.dumps(spec, sort_keys=True, default=_unkeyable))
    except (TypeError, ValueError, RecursionError):
        return None


def _unkeyable(value: Any) -> Any:
    if isinstance(value, (Toolset, Path)):
        return f"{type(value).__name__}@{id(value)}"
    raise TypeError(type(value).__name__)


def _is_text(spec: str) -> bool:
    return "{" in spec or "[" in spec or "\n" in spec


def _load(spec: Any) -> tuple[Toolset, list[Diagnostic]]:
    from plancheck.corpus.toolsets import ToolsetError, load_toolset

    several = _several(spec)
    if several is not None:
        return merge_pools([(name, *load_pool(pool)) for name, pool in several])
    if spec is None or isinstance(spec, Path) or (isinstance(spec, str) and not _is_text(spec)):
        return load_toolset(spec)
    if isinstance(spec, str):
        stripped = spec.lstrip("\ufeff \t\r\n")
        if not stripped.startswith(("{", "[")):
            from plancheck.corpus.toolsets import dsl_toolset

            return dsl_toolset(spec, Path("<text>"))
        try:
            spec = json.loads(stripped)
        except (ValueError, RecursionError) as error:
            raise ToolsetError([make("PC706", f"the tool pool is not valid JSON: {error}")]
                               ) from None
    from plancheck.corpus.builtin import builtin_toolset
    from plancheck.corpus.foreign import foreign_toolset

    try:
        return foreign_toolset(spec, Path("<value>"), typed_from=builtin_toolset())
    except (TypeError, ValueError, KeyError, AttributeError, RecursionError) as error:
        raise ToolsetError([make("PC706", f"the tool pool cannot be read: {error}")]
                           ) from None


def _is_pool(item: Any) -> bool:
    """Whether a member of a list is a pool of its own (not a tool of one pool)."""
    return isinstance(item, (Toolset, Path, str, list, tuple)) or (
        isinstance(item, Mapping) and ("tools" in item or "result" in item))


def _several(spec: Any) -> list[tuple[str | None, Any]] | None:
    """The pools of a list of pools or a dict of named pools (``None``: one pool)."""
    if isinstance(spec, (list, tuple)) and spec and all(_is_pool(i) for i in spec):
        return [(None, item) for item in spec]
    if isinstance(spec, Mapping) and spec and "tools" not in spec and "result" not in spec \
            and all(isinstance(k, str) and _is_pool(v) and not isinstance(v, str)
                    for k, v in spec.items()):
        return list(spec.items())
    return None


def merge_pools(pools: list[tuple[str | None, Toolset, list[Diagnostic]]]
                ) -> tuple[Toolset, list[Diagnostic]]:
    """One toolset of several (see the module docstring); one warning names every tool kept
    under its server's name."""
    names = _server_names([(name, toolset) for name, toolset, _ in pools])
    diagnostics = [d for _, _, found in pools for d in found]
    defined: dict[str, list[tuple[str, ToolSignature]]] = {}
    for server, (_, toolset, _) in zip(names, pools, strict=True):
        for tool in toolset.tools.values():
            defined.setdefault(tool.name, []).append((server, tool))
    merged = Toolset("+".join(names))
    renamed: list[str] = []
    for name, owners in defined.items():
        shapes = {_shape(tool) for _, tool in owners}
        if len(shapes) == 1:
            merged.tools[name] = owners[0][1]
            continue
        for server, tool in owners:
            qualified = f"{server}.{name}"
            merged.tools[qualified] = replace(tool, name=qualified)
            renamed.append(qualified)
    for _, toolset, _ in pools:
        for type_name, decl in toolset.types.items():
            merged.types.setdefault(type_name, decl)
        for family_name, family in toolset.families.items():
            merged.families.setdefault(family_name, family)
        merged.flows |= toolset.flows
        merged.flow_decls.extend(toolset.flow_decls)
        merged.aliases.update(toolset.aliases)
        merged.outputs_are_fields = merged.outputs_are_fields or toolset.outputs_are_fields
    if renamed:
        diagnostics.append(make(
            "PC702", f"tools that several pools define differently are kept under each "
                     f"pool's name: {', '.join(f'`{n}`' for n in renamed)}",
            severity=Severity.WARNING, data={"renamed": renamed, "pools": names}))
    return merged, diagnostics


def _server_names(pools: list[tuple[str | None, Toolset]]) -> list[str]:
    names: list[str] = []
    for position, (name, toolset) in enumerate(pools, 1):
        chosen = name or toolset.name
        if not chosen or chosen in names or chosen.startswith("<") or chosen == "value":
            chosen = f"pool{position}"
        names.append(chosen)
    return names


def _shape(tool: ToolSignature) -> tuple[Any, ...]:
    """What makes two definitions of one name the same tool (not where they are written)."""
    return (tuple((p.name, p.type, p.required, p.schema_text) for p in tool.inputs),
            tuple((p.name, p.type, p.schema_text) for p in tool.outputs), tool.open_inputs,
            tool.open_outputs, tool.input_schema)
