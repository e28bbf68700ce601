"""The DSL parser's LALR tables, shipped in the package as JSON data (``tables.json``).

Building the parser from ``grammar.lark`` costs about 115 ms of CPU; Lark's own ``cache=True``
saves that by unpickling a file in the shared temporary directory, where any local user can
plant a pickle that runs code, or a link that makes the writer overwrite its target. The
tables are instead serialised once, by this module, into a JSON file beside the grammar
(``python -m plancheck.dsl.tables`` rewrites it; a test proves it current) and read back as
data: JSON holds no code, and Lark rebuilds from it only the classes it names for its own
tables (about 40 ms). Nothing is written at run time. When the file does not match the
grammar or the installed Lark (a developer editing the grammar, another Lark release), the
parser is built from the grammar, with no cache at all.
"""

from __future__ import annotations

import json
import zlib
from pathlib import Path
from typing import Any

GRAMMAR_PATH = Path(__file__).with_name("grammar.lark")
TABLES_PATH = Path(__file__).with_name("tables.json")
_FORMAT = 1
# The options every plancheck parser is built with (the tables depend on them).
OPTIONS: dict[str, Any] = {"parser": "lalr", "propagate_positions": True,
                           "maybe_placeholders": False}
# Lark's tables hold tuples and dictionaries keyed by integers, which JSON cannot spell:
# they are written as one-key objects (a key no Lark table uses).
_TUPLE, _PAIRS = "@tuple", "@pairs"


def _stamp(grammar: str) -> dict[str, Any]:
    import lark

    return {"format": _FORMAT, "lark": lark.__version__,
            "grammar_crc": zlib.crc32(grammar.encode("utf-8")), "grammar_length": len(grammar)}


def build_parser(grammar: str) -> Any:
    """The parser built from the grammar itself (no cache read or written)."""
    import lark

    return lark.Lark(grammar, **OPTIONS)


def serialise(grammar: str) -> str:
    """The JSON text of the tables of ``grammar``'s parser, headed by what they were built from."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = build_parser(grammar).memo_serialize([TerminalDef, Rule])
    return json.dumps({"stamp": _stamp(grammar), "data": _encode(data), "memo": _encode(memo)},
                      separators=(",", ":"), sort_keys=True) + "\n"


def _encode(value: Any) -> Any:
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value):
            return {key: _encode(item) for key, item in value.items()}
        return {_PAIRS: [[_encode(key), _encode(item)] for key, item in value.items()]}
    if isinstance(value, tuple):
        return {_TUPLE: [_encode(item) for item in value]}
    if isinstance(value, list):
        return [_encode(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"Lark's tables hold a {type(value).__name__}, which JSON cannot hold")


def _decode(found: dict[str, Any]) -> Any:
    if len(found) == 1:
        if _TUPLE in found:
            return tuple(found[_TUPLE])
        if _PAIRS in found:
            return {_hashable(key): item for key, item in found[_PAIRS]}
    return found


def _hashable(key: Any) -> Any:
    return key if not isinstance(key, list) else tuple(key)


def load_parser(grammar: str) -> Any | None:
    """The parser read from the shipped tables, or None when they are not those of
    ``grammar`` under the installed Lark (or cannot be read)."""
    import lark

    try:
        tables = json.loads(TABLES_PATH.read_bytes(), object_hook=_decode)
        if not isinstance(tables, dict) or tables.get("stamp") != _stamp(grammar):
            return None
        # (Lark's standalone parsers load the same dictionaries through this method.)
        return lark.Lark._load_from_dict(tables["data"], tables["memo"])  # type: ignore[no-untyped-call]
    except (OSError, ValueError, KeyError, TypeError, AttributeError, lark.exceptions.LarkError):
        return None


def parser() -> Any:
    """The DSL parser: from the shipped tables when they are current, else from the grammar."""
    grammar = GRAMMAR_PATH.read_text(encoding="utf-8")
    loaded = load_parser(grammar)
    return loaded if loaded is not None else build_parser(grammar)


def main() -> None:
    TABLES_PATH.write_text(serialise(GRAMMAR_PATH.read_text(encoding="utf-8")),
                           encoding="utf-8")


if __name__ == "__main__":
    main()
