"""Linting the 233 official gold plans: the defective ones and only those get errors."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from plancheck.compiler.driver import check_paths
from plancheck.ir.nodes import Toolset

# task_id -> the codes of the errors that name its actual defect (see the README).
DEFECTIVE = {
    2: {"PC205"},  # `<GENERATED>-0`: the reference lacks its output key
    3: {"PC208"},  # reads segmentation_map_image_path from the restoration step (step 0)
    53: {"PC301"},  # crowd counting fed a list of detections instead of an image
    119: {"PC110"},  # two steps numbered 1
    191: {"PC208"},  # reads a damage map from the image-generation step (step 0)
    221: {"PC301"},  # forecast radar frames fed to flood depth without the conversion step
}


def test_gold_errors_are_exactly_the_defects(benchmark_path: Path, toolset: Toolset) -> None:
    errors: dict[int, set[str]] = defaultdict(set)
    reports = list(check_paths([str(benchmark_path)], toolset))
    assert len(reports) == 233
    for report in reports:
        for diagnostic in report.errors:
            errors[int(report.record or -1)].add(diagnostic.code)
    assert dict(errors) == DEFECTIVE


def test_gold_type_errors_point_at_argument_and_producer(benchmark_path: Path,
                                                         toolset: Toolset) -> None:
    reports = {r.record: r for r in check_paths([str(benchmark_path)], toolset)}
    (diagnostic,) = reports["221"].errors
    assert "precipitation_data_convert_tool" in " ".join(diagnostic.help)
    primary, secondary = diagnostic.labels
    assert primary.primary and primary.span.pointer == "/structured_plan/1/inputs/" \
        "precipitation_data_path"
    assert secondary.span.pointer == "/structured_plan/0/agent"
    assert primary.span.start_line == 221  # the record's line in benchmark.jsonl
