"""A tool pool read from a Python module (``plancheck/corpus/pools/python_module.py``, issue
35's third trial: one module and this test file): the registry picks the format by the
``.py`` suffix, the module is read and never run, its tools are typed from their annotations
(as FastMCP types them), and diagnostics point at lines of the module."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import plancheck
from plancheck.corpus.pool_registry import POOL_FORMATS, pool_format_for_suffix

# The MCP quickstart's weather server (modelcontextprotocol.io, "Build an MCP server"), its
# tools as written, bodies shortened, with a tool of richer annotations beside them.
WEATHER = '''
from typing import Any, Literal, Optional
from mcp.server.fastmcp import FastMCP

mcp = FastMCP("weather")
raise SystemExit("never run")


async def make_nws_request(url: str) -> dict[str, Any] | None:
    """Make a request to the NWS API with proper error handling."""


@mcp.tool()
async def get_alerts(state: str) -> str:
    """Get weather alerts for a US state.

    Args:
        state: Two-letter US state code (e.g. CA, NY)
    """


@mcp.tool()
async def get_forecast(latitude: float, longitude: float) -> str:
    """Get weather forecast for a location."""


@mcp.tool()
def plot(cities: list[str], unit: Literal["C", "F"] = "C",
         title: Optional[str] = None, *, dpi: "int | None" = None) -> dict:
    """Plot the forecasts."""
'''


def _pool(tmp_path: Path) -> Path:
    path = tmp_path / "weather.py"
    path.write_text(WEATHER, encoding="utf-8")
    return path


def test_the_registry_owns_the_suffix() -> None:
    found = pool_format_for_suffix(".py")
    assert found is not None and found in POOL_FORMATS and found.name == "python-module"


def test_the_tools_and_their_types(tmp_path: Path) -> None:
    toolset = plancheck.load_toolset(_pool(tmp_path))
    assert sorted(toolset.tools) == ["get_alerts", "get_forecast", "plot"]  # decorated only
    forecast = toolset.tools["get_forecast"]
    assert [(p.name, p.type, p.required) for p in forecast.inputs] == [
        ("latitude", "Number", True), ("longitude", "Number", True)]
    assert forecast.output_names == ("result",)  # FastMCP wraps a string result
    plot = toolset.tools["plot"]
    assert [(p.name, p.required) for p in plot.inputs] == [
        ("cities", True), ("unit", False), ("title", False), ("dpi", False)]
    assert toolset.tools["get_alerts"].description.startswith("Get weather alerts")


def test_calls_checked_against_it_and_problems_located(tmp_path: Path) -> None:
    pool = _pool(tmp_path)
    calls = tmp_path / "calls.json"
    calls.write_text(json.dumps([{"name": "get_forecast", "arguments": {"latitude": 48.8}},
                                 {"name": "plot", "arguments": {"cities": ["Paris"],
                                                                "unit": "K"}}]))
    run = subprocess.run([sys.executable, "-m", "plancheck", "check", "--tools", str(pool),
                          "--format", "json", str(calls)],
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 1, run.stderr
    codes = sorted(d["code"] for d in json.loads(run.stdout)["diagnostics"])
    assert "PC203" in codes  # `longitude` missing
    assert len(codes) == 2  # and "K" is no unit
    broken = tmp_path / "broken.py"
    broken.write_text("@tool\ndef f(a: int) -> None: ...\n\n@tool\ndef f(a: str) -> None: ...\n",
                      encoding="utf-8")
    lint = subprocess.run([sys.executable, "-m", "plancheck", "toolset", "lint", str(broken)],
                          capture_output=True, text=True, check=False, timeout=60)
    assert lint.returncode == 1, lint.stdout + lint.stderr
    assert "PC702" in lint.stdout and "broken.py:5:1" in lint.stdout  # the second `def f`


def test_a_module_that_is_not_python(tmp_path: Path) -> None:
    path = tmp_path / "pool.py"
    path.write_text("def f(:\n", encoding="utf-8")
    run = subprocess.run([sys.executable, "-m", "plancheck", "toolset", "lint", str(path)],
                         capture_output=True, text=True, check=False, timeout=60)
    assert run.returncode == 1 and "PC706" in run.stdout  # an unusable pool, said so
    assert "Traceback" not in run.stderr
