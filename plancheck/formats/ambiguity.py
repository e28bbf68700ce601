"""Whether a call object can be read as two different calls.

A shape reads a call's tool and arguments from the keys it owns (``function.name``, ``input``,
``params.arguments``). When the same object also holds another tool name or other arguments
under a key some other reader takes them from (the generic shape's
:data:`~plancheck.formats.records.CALL_NAME_KEYS` and
:data:`~plancheck.formats.records.CALL_ARGUMENT_KEYS`: ``tool``, ``args``, ``input``, ..., or
an object of another shape: ``function``, ``functionCall``, ``toolUse``, ``params``), a loop
whose code reads that key runs a call other than the one checked. A guard must not say
"allowed" about an object whose meaning depends on who reads it (``PC122``).

Read with dictionary lookups only, a few dozen of them: every call a guard decides that is
not a bare ``{name, arguments, id}`` comes through here.
"""

from __future__ import annotations

import json
from typing import Any, Final

from plancheck.diagnostics.span import pointer_tokens, unescape_token
from plancheck.formats.found import FoundCall, child
from plancheck.formats.records import CALL_ARGUMENT_KEYS, CALL_NAME_KEYS
from plancheck.records import replace

__all__ = ["other_reading", "with_other_reading"]

# The members other shapes keep a whole call in (OpenAI's, Gemini's, Bedrock's, MCP's).
CALL_WRAPPER_KEYS: Final = ("function", "functionCall", "function_call", "toolUse", "params")
_NAME_KEYS: Final = frozenset(CALL_NAME_KEYS)
_WRAPPER_KEYS: Final = frozenset(CALL_WRAPPER_KEYS)
_ARGUMENT_KEYS: Final = frozenset(CALL_ARGUMENT_KEYS) - _WRAPPER_KEYS
_READ_KEYS: Final = _NAME_KEYS | _WRAPPER_KEYS | _ARGUMENT_KEYS
# Where such a wrapped call keeps its arguments.
_WRAPPED_ARGUMENTS: Final = ("arguments", "args", "input")


def with_other_reading(item: Any, call: FoundCall) -> FoundCall:
    """``call`` (read from ``item``) with the other reading ``item`` allows, if any."""
    conflict = other_reading(item, call) if isinstance(item, dict) else None
    return call if conflict is None else replace(call, conflict=conflict)


def other_reading(item: dict[str, Any], call: FoundCall) -> tuple[str, str] | None:
    """The first key of ``item`` that gives another tool or other arguments than ``call``
    (read from ``item``) has, as (its JSON pointer, a sentence saying so); ``None`` when the
    object reads one way. The keys ``call`` was read through are not counted."""
    through: tuple[str | None, str | None] | None = None
    for key, value in item.items():  # (a call has a few members: one set lookup each)
        if key not in _READ_KEYS:
            continue
        if through is None:
            through = (_key_under(call.name_pointer, call.pointer),
                       _key_under(call.arguments_pointer, call.pointer))
        if key in through:
            continue
        if key in _NAME_KEYS and isinstance(value, str):
            if value != call.name:
                return child(call.pointer, key), _names(key, value, call)
        elif key in _WRAPPER_KEYS and isinstance(value, dict):
            found = _wrapped_reading(value, child(call.pointer, key), key, call)
            if found is not None:
                return found
        elif key in _ARGUMENT_KEYS and not _same(value, call.arguments):
            held = _shown(call.arguments_pointer, call.pointer)
            return child(call.pointer, key), (
                f"`{key}` holds other arguments than `{held}`" if held else
                f"`{key}` holds arguments the call's shape does not read")
    return None


def _wrapped_reading(wrapped: dict[str, Any], pointer: str, key: str, call: FoundCall
                     ) -> tuple[str, str] | None:
    """Another call inside ``item[key]`` (a call of another shape: a name, its arguments)."""
    name = wrapped.get("name")
    if not isinstance(name, str):
        return None if key != "params" else _other_arguments(wrapped, pointer, key, call)
    if name != call.name:
        return child(pointer, "name"), _names(f"{key}.name", name, call)
    return _other_arguments(wrapped, pointer, key, call)


def _other_arguments(wrapped: dict[str, Any], pointer: str, key: str, call: FoundCall
                     ) -> tuple[str, str] | None:
    for inner in _WRAPPED_ARGUMENTS:
        if inner in wrapped:
            if _same(wrapped[inner], call.arguments):
                return None
            held = _shown(call.arguments_pointer, call.pointer) or "the call"
            return child(pointer, inner), f"`{key}.{inner}` holds other arguments than `{held}`"
    if key == "params" and "name" not in wrapped:
        # (``params`` as the arguments of a generic call: other arguments unless they agree)
        return None if _same(wrapped, call.arguments) else (
            pointer, f"`params` holds other arguments than "
                     f"`{_shown(call.arguments_pointer, call.pointer) or 'the call'}`")
    return None


def _names(key: str, value: str, call: FoundCall) -> str:
    named = _shown(call.name_pointer, call.pointer)
    if isinstance(call.name, str) and named:
        return f"`{key}` names the tool `{value}` while `{named}` names `{call.name}`"
    return f"`{key}` names the tool `{value}`"


def _key_under(pointer: str | None, base: str) -> str | None:
    """The member of the object at ``base`` that ``pointer`` goes through (asked twice for
    every call a guard reads: its first token alone, unescaped only when it holds a ``~``)."""
    if pointer is None or len(pointer) <= len(base) or not pointer.startswith(base) or \
            pointer[len(base)] != "/":
        return None
    first = pointer[len(base) + 1:].split("/", 1)[0]
    return unescape_token(first) if "~" in first else first


def _shown(pointer: str | None, base: str) -> str:
    """``pointer`` below ``base`` as dotted keys (``function.name``)."""
    return ".".join(_below(pointer, base))


def _below(pointer: str | None, base: str) -> list[str]:
    if pointer is None or not pointer.startswith(base + "/"):
        return []
    return pointer_tokens(pointer[len(base):])


def _same(first: Any, second: Any) -> bool:
    """Equal values, a JSON text counted as the value it writes (``arguments`` of OpenAI's
    shape is text)."""
    if first == second:
        return True
    try:
        if isinstance(first, str) and not isinstance(second, str):
            return bool(json.loads(first) == second)
        if isinstance(second, str) and not isinstance(first, str):
            return bool(json.loads(second) == first)
    except (ValueError, RecursionError):
        return False
    return False
