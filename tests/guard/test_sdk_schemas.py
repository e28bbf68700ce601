"""Tools whose schemas name their nested models once under ``$defs`` (what pydantic, and so
the official MCP SDK, writes for any tool that takes a model): the guard validates them.

The pool here is what the SDK's server lists for tools written as a user would write them
(``mcp.server.mcpserver.MCPServer``, pydantic models as parameters, one of them recursive),
not a schema written for the test. Before the references were followed, a parameter
``{"$ref": "#/$defs/Order"}`` read as any value and the validator refused the rebuilt schema
(the pointer led nowhere), so the guard let every call to such a tool through.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import plancheck
from plancheck.cli import main

mcpserver = pytest.importorskip("mcp.server.mcpserver")


class Item(BaseModel):
    name: str
    qty: int = 1


class Order(BaseModel):
    items: list[Item]
    note: str | None = None


class Node(BaseModel):
    label: str
    children: list[Node] = []


def _pool() -> dict[str, Any]:
    server = mcpserver.MCPServer("shop")

    @server.tool()
    def place_order(order: Order, rush: bool = False) -> str:
        """Place an order."""
        return "ok"

    @server.tool()
    def save_tree(root: Node) -> str:
        """Save a tree."""
        return "ok"

    tools = asyncio.run(server.list_tools())
    return {"tools": [t.model_dump(mode="json", exclude_none=True, by_alias=True)
                      for t in tools]}


POOL = _pool()


_IDS = iter(range(10**6))


def _call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": f"c{next(_IDS)}", "name": name, "input": arguments}


def test_the_sdk_writes_references_to_its_definitions() -> None:
    schema = POOL["tools"][0]["inputSchema"]
    assert schema["properties"]["order"] == {"$ref": "#/$defs/Order"}
    assert "Item" in schema["$defs"]


def test_the_pool_lints_clean_and_reads_the_models_as_objects(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "pool.json"
    path.write_text(json.dumps(POOL), encoding="utf-8")
    assert main(["toolset", "lint", str(path), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["diagnostics"] == []
    tools = plancheck.load_toolset(path).tools
    assert [p.type for p in tools["place_order"].inputs] == ["Object", "Boolean"]


def test_calls_are_validated_against_the_models() -> None:
    guard = plancheck.Guard(POOL, provenance=False)
    good = guard.propose(_call("place_order", {"order": {"items": [{"name": "pen"}]}}))
    assert good.allowed, good.feedback
    bad = guard.propose(_call("place_order", {"order": {"items": [{"qty": "two"}]}}))
    assert not bad.allowed
    # no name; qty no integer: both inside `order`, so both are the schema's PC302, each with
    # the path of its value
    assert sorted(d.code for d in bad.errors) == ["PC302", "PC302"]
    assert "`order.items[0].name` is required" in bad.feedback
    assert "`order.items[0].qty` must be an integer" in bad.feedback


def test_a_recursive_model_is_checked_as_far_as_it_is_written_out() -> None:
    guard = plancheck.Guard(POOL, provenance=False)
    tree = {"root": {"label": "a", "children": [{"label": "b", "children": []}]}}
    assert guard.propose(_call("save_tree", tree)).allowed
    assert not guard.propose(_call("save_tree", {"root": {"children": []}})).allowed  # no label
