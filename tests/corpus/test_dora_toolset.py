"""The built-in DORA toolset (``--tools dora``) against DORA's own tool servers.

The servers are read at test time from ``PLANCHECK_DORA_REFERENCE`` (default: ``dora-reference``
next to the DisasterBench release); the test skips when they are absent and neither variable is
set, and fails when one is set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import plancheck
from plancheck.corpus.paths import DATA_ENV, DORA_REFERENCE_ENV, dora_reference_dir
from tests.support.dora_tool_sources import SourceTool, read_tools


@pytest.fixture(scope="module")
def source_tools() -> dict[str, SourceTool]:
    tools_dir = dora_reference_dir() / "dora" / "tools"
    if not tools_dir.is_dir():
        message = f"DORA's tool servers not found at {tools_dir}"
        if os.environ.get(DORA_REFERENCE_ENV) or os.environ.get(DATA_ENV):
            pytest.fail(message)
        pytest.skip(f"{message}; set {DORA_REFERENCE_ENV}")
    return read_tools(tools_dir)


def test_toolset_show_lists_108_tools() -> None:
    shown = subprocess.run([sys.executable, "-m", "plancheck", "toolset", "show", "--tools",
                            "dora"], capture_output=True, text=True, check=False)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.startswith("toolset dora: 108 tools")
    assert len(plancheck.load_toolset("dora").tools) == 108


def test_same_tools_as_the_servers(source_tools: dict[str, SourceTool]) -> None:
    assert len(source_tools) == 108
    assert set(plancheck.load_toolset("dora").tools) == set(source_tools)


def test_outputs_are_the_keys_each_body_returns(source_tools: dict[str, SourceTool]) -> None:
    toolset = plancheck.load_toolset("dora")
    wrong = {}
    for name, source in source_tools.items():
        documented = set(toolset.tools[name].output_names)
        if documented != source.returned_keys:
            wrong[name] = (sorted(documented - source.returned_keys),
                           sorted(source.returned_keys - documented))
    assert not wrong, f"(documented but not returned, returned but not documented): {wrong}"
    # The reader must see real bodies, not shrug: every tool returns something, with keys.
    assert all(source.returned_keys for source in source_tools.values())


def test_inputs_are_the_signatures(source_tools: dict[str, SourceTool]) -> None:
    toolset = plancheck.load_toolset("dora")
    for name, source in source_tools.items():
        tool = toolset.tools[name]
        assert tool.input_names == tuple(p.name for p in source.params), name
        assert tool.required_input_names == {p.name for p in source.params if p.required}, name


@pytest.mark.parametrize(("annotation", "kind"), [
    ("str", "String"), ("float", "Number"), ("int", "Integer"), ("bool", "Boolean"),
    ("ListStr", "List"), ("OptListInt", "List"), ("DictStrFloat", "Object"),
])
def test_input_kinds_follow_the_annotations(source_tools: dict[str, SourceTool],
                                            annotation: str, kind: str) -> None:
    toolset = plancheck.load_toolset("dora")
    found = [(name, p.name) for name, s in source_tools.items() for p in s.params
             if p.annotation == annotation]
    assert found, annotation
    for name, param in found:
        declared = toolset.tools[name].input(param)
        assert declared is not None and declared.type == kind, (name, param)


def test_the_file_is_the_generators_output(tmp_path: Path,
                                           source_tools: dict[str, SourceTool]) -> None:
    """The committed description is exactly what scripts/make_dora_toolset.py writes."""
    import importlib.util
    import json

    script = Path(__file__).resolve().parents[2] / "scripts" / "make_dora_toolset.py"
    spec = importlib.util.spec_from_file_location("make_dora_toolset", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from plancheck.corpus.dora_toolset import DORA_PATH

    built = module.build(dora_reference_dir())
    assert json.loads(DORA_PATH.read_text(encoding="utf-8")) == built
