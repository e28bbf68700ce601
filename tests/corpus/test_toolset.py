"""The built-in tool pool against the official release."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

from plancheck.corpus.builtin import BUILTIN_PATH, builtin_toolset, parse_builtin_toolset
from plancheck.corpus.release import graph_flows, read_manifest, release_toolset
from plancheck.corpus.toolsets import load_toolset
from plancheck.ir.nodes import Toolset


def test_builtin_matches_manifest_names_and_keys(release: Path, toolset: Toolset) -> None:
    manifest = read_manifest(release / "tools_manifest.json")
    assert set(toolset.tools) == set(manifest)
    for name, spec in manifest.items():
        tool = toolset.tools[name]
        assert tool.input_names == tuple(spec["input"]), name
        assert tool.output_names == tuple(spec["output"]), name


def test_every_key_is_typed_with_a_declared_type(toolset: Toolset) -> None:
    assert toolset.problems() == []
    for tool in toolset.tools.values():
        assert tool.category and tool.family in toolset.families and tool.description
        for param in (*tool.inputs, *tool.outputs):
            assert param.type in toolset.types and param.type != "Artifact", (tool.name, param)


def test_builtin_flows_are_the_official_graph(release: Path, toolset: Toolset) -> None:
    graph = json.loads((release / "graph_desc.json").read_text())
    flows, diagnostics = graph_flows(graph, set(toolset.tools), toolset.aliases, "graph")
    assert {(f.source, f.target) for f in flows} == toolset.flows
    assert [d.code for d in diagnostics] == ["PC705"]
    assert "perception_data_convert_tool" in diagnostics[0].message


def test_release_directory_loads_with_alias_warning(release: Path) -> None:
    loaded, diagnostics = release_toolset(release, typed_from=builtin_toolset())
    assert len(loaded.tools) == 26
    assert ("precipitation_data_convert_tool", "Flood_depth_prediction") in loaded.flows
    assert any(d.code == "PC705" for d in diagnostics)
    via_cli_spec, _ = load_toolset(release)
    assert set(via_cli_spec.tools) == set(loaded.tools)


def test_cached_toolset_equals_a_fresh_parse(toolset: Toolset) -> None:
    fresh = parse_builtin_toolset()
    assert fresh.tools == toolset.tools
    assert fresh.types == toolset.types
    assert fresh.flows == toolset.flows
    clone = pickle.loads(pickle.dumps(fresh))
    assert clone.tools == fresh.tools and clone.lattice.ancestors == fresh.lattice.ancestors
    # Spans name this installation's DSL file, even when another checkout shares the cache.
    assert {tool.span.file for tool in toolset.tools.values()} == {str(BUILTIN_PATH)}


def test_lattice_subtyping(toolset: Toolset) -> None:
    lattice = toolset.lattice
    assert lattice.is_subtype("HighResImage", "Imagery")
    assert lattice.is_subtype("AnomalyMap", "SceneEvidence")
    assert not lattice.is_subtype("Detections", "Imagery")
    assert not lattice.is_subtype("RadarEchoSequence", "PrecipitationSeries")
    assert ".npy" in lattice.formats["RadarEchoSequence"]
