"""Edits applied to a JSON document: what a repair's edits do to the plan they point into."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from plancheck.diagnostics.model import Edit
from plancheck.diagnostics.span import pointer_tokens

__all__ = ["apply_edits"]

JSON = Any


def apply_edits(document: JSON, edits: Sequence[Edit]) -> JSON:
    """Apply edits whose pointers index ``document`` as it was before any edit.

    Replacements and deletions are applied first, then insertions (highest index first), so
    that every pointer keeps meaning what it meant in the original.
    """
    import copy

    result = copy.deepcopy(document)
    inserts = [e for e in edits if e.insert]
    for edit in (e for e in edits if not e.insert):
        parent, token = _locate(result, edit.pointer)
        if edit.delete:
            if isinstance(parent, dict):
                parent.pop(token, None)
            elif isinstance(parent, list):
                del parent[int(token)]
        elif isinstance(parent, dict):
            parent[token] = copy.deepcopy(edit.value)
        elif isinstance(parent, list):
            parent[int(token)] = copy.deepcopy(edit.value)
    ordered = sorted(enumerate(inserts), key=lambda t: (-_last_index(t[1].pointer), -t[0]))
    for _order, edit in ordered:
        parent, token = _locate(result, edit.pointer)
        assert isinstance(parent, list)
        parent.insert(int(token), copy.deepcopy(edit.value))
    return result


def _last_index(pointer: str) -> int:
    return int(pointer.rsplit("/", 1)[1])


def _locate(document: JSON, pointer: str) -> tuple[JSON, str]:
    tokens = pointer_tokens(pointer)
    if not tokens:
        raise ValueError("cannot edit the document root in place")
    node = document
    for token in tokens[:-1]:
        node = node[int(token)] if isinstance(node, list) else node[token]
    return node, tokens[-1]
