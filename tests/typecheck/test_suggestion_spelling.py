"""A suggested reference is written in the syntax and numbering the plan uses: a plan of
tool calls with ``{{steps.k.output.x}}`` or DORA's ``<x> from trajectory[k].obs`` is not told
to write DisasterBench's ``<GENERATED>-k-<x>`` (issue 24's bug list)."""

from __future__ import annotations

from typing import Any

import pytest

import plancheck

RESTORE = "Weather_Degraded_Image_Restoration"
DETECT = "Foggy_Scenario_Object_Detection"
COUNT = "Crowd_Counting_in_Adverse_Weather"


def _calls(spell: Any, first: int) -> list[dict[str, Any]]:
    """Restore, detect on the restored image, then count on the detections (a type error:
    the counter takes an image). ``spell(number, key)`` writes a reference; calls are
    counted from ``first``."""
    return [
        {"name": RESTORE, "arguments": {"weather_degraded_image_path": "frames/f1.jpg"}},
        {"name": DETECT, "arguments": {"image_path": spell(first, "restored_image_path")}},
        {"name": COUNT, "arguments": {"image_path": spell(first + 1, "detected_objects_path")}},
    ]


SPELLINGS = {
    "template": lambda n, k: f"{{{{steps.{n}.output.{k}}}}}",
    "template, spaced": lambda n, k: f"{{{{ step[{n}].result.{k} }}}}",
    "dora": lambda n, k: f"<{k}> from trajectory[{n}].obs",
    "generated": lambda n, k: f"<GENERATED>-{n}-<{k}>",
}


# Counted from 1 too where the syntax allows it: DisasterBench numbers steps from 0, always,
# and DORA's trajectory[N] counts from 0 unless the calls carry numbers.
CASES = [(syntax, 0) for syntax in sorted(SPELLINGS)] + [("template", 1), ("template, spaced", 1)]


@pytest.mark.parametrize(("syntax", "first"), CASES)
def test_pc301_names_the_outputs_that_fit_in_the_plans_own_spelling(syntax: str,
                                                                   first: int) -> None:
    spell = SPELLINGS[syntax]
    report = plancheck.check(_calls(spell, first))
    (wrong,) = [d for d in report.diagnostics if d.code == "PC301"]
    fits = next(h for h in wrong.help if h.startswith("outputs of earlier steps that fit"))
    assert f"`{spell(first, 'restored_image_path')}`" in fits, fits
    assert syntax == "generated" or "<GENERATED>" not in fits


@pytest.mark.parametrize(("syntax", "first"), CASES)
def test_pc208_fix_is_written_in_the_plans_own_spelling(syntax: str, first: int) -> None:
    spell = SPELLINGS[syntax]
    calls = _calls(spell, first)[:2]
    calls[1]["arguments"]["image_path"] = spell(first, "restored_img_path")
    report = plancheck.check(calls)
    (unknown,) = [d for d in report.diagnostics if d.code == "PC208"]
    (suggestion,) = unknown.suggestions
    assert [edit.value for edit in suggestion.edits] == [spell(first, "restored_image_path")]
