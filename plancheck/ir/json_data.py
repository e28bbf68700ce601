"""Whether a Python value is JSON data that a walk can finish: the check every entry point that
takes a value (``plancheck.check``, ``check_trajectory``, the guard) makes before reading it.

JSON text cannot spell a value that contains itself, nor one that holds the same part many
times over, but a Python caller can pass both: ``a = []; a.append(a)`` made ``check(a)`` walk
forever (1.1 GB in 60 s), a call whose arguments held the call made ``check_trajectory`` raise
``RecursionError``, and ``x = [x, x]`` sixty times over is a list of 2**60 members to any walk
that reads it as a tree. :func:`json_data_problem` visits each container once (a part shared by
several parents is read once, and its size remembered), so it takes time linear in the number
of distinct containers and their members, whatever the value holds.
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAX_DEPTH", "MAX_MEMBERS", "json_data_problem"]

# The members a value may hold counting a shared part each time it appears: what a walk of the
# value as a tree reads. A 16 MB JSON file (the default --max-size) holds fewer.
MAX_MEMBERS = 16_000_000

# Arrays and objects nested deeper are refused where a value is read by recursive walks (the
# lowering of trajectories): within Python's default recursion limit they must still fit.
MAX_DEPTH = 500

# Values with nothing inside to look into.
_LEAVES = frozenset({str, int, float, bool, type(None)})


def json_data_problem(value: Any, max_members: int = MAX_MEMBERS,
                      max_depth: int | None = None) -> str | None:
    """What keeps ``value`` from being JSON data a walk can finish, or None: an object key that
    is not a string, a container inside itself, more than ``max_members`` members counting a
    shared part each time it appears, or (given ``max_depth``) containers nested deeper. Lists
    and tuples are arrays, dicts objects."""
    # Containers, each with its parent and the key that leads to it, so a pointer is built only
    # for the one that fails (building one per member was a third of check()'s time).
    nodes: list[tuple[Any, int, object]] = [(value, -1, "")]
    depths = [0] if max_depth is not None else []
    sizes: dict[int, int] = {}  # id of a container walked to its end -> its members as a tree
    inside: set[int] = set()  # ids of the containers on the path from the root
    pending: list[tuple[int, bool]] = [(0, False)]  # (node, leaving it)
    while pending:
        at, leaving = pending.pop()
        item = nodes[at][0]
        if leaving:
            inside.discard(id(item))
            size = len(item) + sum(sizes[id(member)] for member in _members(item)
                                   if type(member) not in _LEAVES)
            if size > max_members:
                return (f"it holds more than {max_members:,} members counting each shared part "
                        f"every time it appears (at `{_pointer(nodes, at)}`)")
            sizes[id(item)] = size
            continue
        if id(item) in sizes:
            continue  # a part seen before: its size is known
        if id(item) in inside:
            return f"the value at `{_pointer(nodes, at)}` contains itself"
        if isinstance(item, dict):
            for key in item:
                if not isinstance(key, str):
                    return (f"the key {key!r} at `{_pointer(nodes, at)}` is not a string "
                            f"({type(key).__name__})")
        elif not isinstance(item, list | tuple):
            sizes[id(item)] = 0  # a scalar of another type: lowering says what it is
            continue
        if max_depth is not None and depths[at] >= max_depth:
            return (f"it is nested more than {max_depth:,} levels deep (at "
                    f"`{_pointer(nodes, at)}`)")
        inside.add(id(item))
        pending.append((at, True))
        for key, member in (item.items() if isinstance(item, dict) else enumerate(item)):
            if type(member) not in _LEAVES:
                pending.append((len(nodes), False))
                nodes.append((member, at, key))
                if max_depth is not None:
                    depths.append(depths[at] + 1)
    return None


def _members(item: Any) -> Any:
    return item.values() if isinstance(item, dict) else item


def _pointer(nodes: list[tuple[Any, int, object]], at: int) -> str:
    from plancheck.diagnostics.span import escape_pointer

    tokens = []
    while at > 0:
        _, parent, key = nodes[at]
        tokens.append(escape_pointer(str(key)))
        at = parent
    return "".join(f"/{t}" for t in reversed(tokens)) or "/"
