"""Seeded, realistic model completions built from DisasterBench gold plans.

Each completion is a gold plan put through one *mutation* (the kind of mistake a model makes:
a look-alike tool, a wrong reference, a renamed key, ...) and rendered in one *style* (how a
model might write it down: compact JSON, a code fence, chain-of-thought prose, doubled braces,
JSON that json-repair has to mend, no plan at all, ...).

The output is fully determined by ``(gold_tasks, per_task, seed)``: every completion draws from
its own ``random.Random`` seeded with a string, so the same completion comes out on any machine
and Python version. ``tests/scoring/test_parity.py`` relies on that to regenerate the
completions whose reference verdicts ``scripts/record_reference_verdicts.py`` recorded.

The first ``len(MUTATIONS) * len(STYLES)`` completions walk through every (mutation, style)
pair once, in a seeded order; after that pairs are drawn with :data:`MUTATION_WEIGHTS` and
:data:`STYLE_WEIGHTS`, which lean towards what models actually produce (mostly well-formed
JSON, fences and prose; occasionally broken JSON).
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import random
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final

from plancheck.ir.references import format_reference

__all__ = [
    "EDGE_KINDS",
    "MUTATIONS",
    "MUTATION_WEIGHTS",
    "STYLES",
    "STYLE_WEIGHTS",
    "GeneratedCompletion",
    "generate_completions",
    "generate_edge_completions",
    "load_gold_tasks",
    "look_alike",
    "make_completion",
]


@dataclass(frozen=True, slots=True)
class GeneratedCompletion:
    """One synthetic completion and how it was made."""

    id: str
    task_id: int
    mutation: str
    style: str
    completion: str


Plan = list[dict[str, Any]]

# --------------------------------------------------------------------------------------------
# Tool names (as published in the DisasterBench tool manifest) and look-alikes
# --------------------------------------------------------------------------------------------

TOOL_NAMES: Final = (
    "Anomaly_Detection_Forest",
    "Building_damage_assessment",
    "Change_Mapping_and_Detection",
    "Crowd_Counting_in_Adverse_Weather",
    "Event_detection",
    "Flood_depth_prediction",
    "Foggy_Scenario_Object_Detection",
    "GeoChat",
    "Geospatial_Object_Segmentation",
    "High-Resolution_Image_Reconstructor",
    "Landslide_Segmentation",
    "Low-Light_Object_Detection",
    "Metadata_and_Text_Prompt_Image_Generation",
    "Multi_Spectral_Classifier",
    "Multimodal_mobility_prediction_under_events",
    "Post_Disaster_Mobility_Recovery",
    "Precipitation_Nowcasting",
    "RGB_GeoImage_Classifier",
    "Temporal_High_Resolution_Image_Generation",
    "Temporal_Image_Sequence_Classifier",
    "Toponym_Detection",
    "Urban_Anomaly_Detection",
    "Video_anomaly_detection",
    "Weather_Degraded_Image_Restoration",
    "depth_speed_model",
    "precipitation_data_convert_tool",
)

# Tools a model plausibly confuses, by name and by job. Each maps to its most tempting
# substitute; the relation need not be symmetric.
_LOOK_ALIKES: Final[Mapping[str, str]] = {
    "Anomaly_Detection_Forest": "Urban_Anomaly_Detection",
    "Urban_Anomaly_Detection": "Anomaly_Detection_Forest",
    "Video_anomaly_detection": "Urban_Anomaly_Detection",
    "Foggy_Scenario_Object_Detection": "Low-Light_Object_Detection",
    "Low-Light_Object_Detection": "Foggy_Scenario_Object_Detection",
    "Temporal_Image_Sequence_Classifier": "RGB_GeoImage_Classifier",
    "RGB_GeoImage_Classifier": "Temporal_Image_Sequence_Classifier",
    "Multi_Spectral_Classifier": "RGB_GeoImage_Classifier",
    "Building_damage_assessment": "Change_Mapping_and_Detection",
    "Change_Mapping_and_Detection": "Building_damage_assessment",
    "Geospatial_Object_Segmentation": "Landslide_Segmentation",
    "Landslide_Segmentation": "Geospatial_Object_Segmentation",
    "Temporal_High_Resolution_Image_Generation": "High-Resolution_Image_Reconstructor",
    "High-Resolution_Image_Reconstructor": "Temporal_High_Resolution_Image_Generation",
    "Metadata_and_Text_Prompt_Image_Generation": "Temporal_High_Resolution_Image_Generation",
    "Precipitation_Nowcasting": "precipitation_data_convert_tool",
    "precipitation_data_convert_tool": "Precipitation_Nowcasting",
    "Flood_depth_prediction": "depth_speed_model",
    "depth_speed_model": "Flood_depth_prediction",
    "Multimodal_mobility_prediction_under_events": "Post_Disaster_Mobility_Recovery",
    "Post_Disaster_Mobility_Recovery": "Multimodal_mobility_prediction_under_events",
    "Event_detection": "Toponym_Detection",
    "Toponym_Detection": "Event_detection",
    "Crowd_Counting_in_Adverse_Weather": "Weather_Degraded_Image_Restoration",
    "Weather_Degraded_Image_Restoration": "Crowd_Counting_in_Adverse_Weather",
    "GeoChat": "RGB_GeoImage_Classifier",
}

# Plausible tools that DisasterBench does not have.
_INVENTED_TOOLS: Final = (
    "Flood_Extent_Mapper",
    "Satellite_Image_Captioning",
    "Damage_Severity_Estimator",
    "Road_Network_Extractor",
    "Wildfire_Spread_Simulator",
    "Infrastructure_Risk_Scorer",
)


def look_alike(agent: str) -> str:
    """The tool a model is most likely to write instead of ``agent``: the hand-picked
    substitute for known tools, else the most similarly named known tool."""
    known = _LOOK_ALIKES.get(agent)
    if known is not None:
        return known
    candidates = [name for name in TOOL_NAMES if name != agent]
    return max(
        candidates,
        key=lambda name: difflib.SequenceMatcher(None, agent.lower(), name.lower()).ratio(),
    )


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------

_REFERENCE: Final = re.compile(r"<GENERATED>-(\d+)")


def _pick_step(plan: Plan, rng: random.Random) -> dict[str, Any] | None:
    return rng.choice(plan) if plan else None


def _renumber(plan: Plan, new_id: Mapping[int, int]) -> None:
    """Give step ``old`` the id ``new_id[old]`` everywhere: step, dependence,
    dependence_content keys and ``<GENERATED>-old`` references."""

    def moved(old: Any) -> Any:
        return new_id.get(old, old) if isinstance(old, int) else old

    def moved_reference(found: re.Match[str]) -> str:
        return f"<GENERATED>-{moved(int(found.group(1)))}"

    for step in plan:
        step["step"] = moved(step.get("step"))
        dependence = step.get("dependence")
        if isinstance(dependence, list):
            step["dependence"] = [moved(member) for member in dependence]
        content = step.get("dependence_content")
        if isinstance(content, dict):
            step["dependence_content"] = {
                str(moved(int(key))) if key.isdigit() else key: value
                for key, value in content.items()
            }
        inputs = step.get("inputs")
        if isinstance(inputs, dict):
            step["inputs"] = {
                key: _REFERENCE.sub(moved_reference, value) if isinstance(value, str) else value
                for key, value in inputs.items()
            }


def _depends_on(step: dict[str, Any], other: Any) -> bool:
    dependence = step.get("dependence") or []
    content = step.get("dependence_content") or {}
    references = {
        int(found.group(1))
        for value in (step.get("inputs") or {}).values()
        if isinstance(value, str)
        for found in _REFERENCE.finditer(value)
    }
    return other in dependence or str(other) in content or other in references


def _identity(plan: Plan, rng: random.Random) -> Plan:
    return plan


def _swap_agent(plan: Plan, rng: random.Random) -> Plan:
    step = _pick_step(plan, rng)
    if step is not None:
        step["agent"] = look_alike(str(step["agent"]))
    return plan


def _unknown_agent(plan: Plan, rng: random.Random) -> Plan:
    step = _pick_step(plan, rng)
    if step is not None:
        step["agent"] = rng.choice(_INVENTED_TOOLS)
    return plan


def _rename_input_key(plan: Plan, rng: random.Random) -> Plan:
    with_inputs = [step for step in plan if step.get("inputs")]
    if not with_inputs:
        return plan
    step = rng.choice(with_inputs)
    old = rng.choice(list(step["inputs"]))
    options = [f"input_{old}", old.replace("_path", "_file"), old.replace("_", ""), "path"]
    new = rng.choice([name for name in options if name != old and name not in step["inputs"]])
    step["inputs"] = {new if key == old else key: value for key, value in step["inputs"].items()}
    return plan


def _changed_path(value: str, rng: random.Random) -> str:
    if value.startswith("<GENERATED>"):
        # Drop or invent the output name of a reference.
        base = re.match(r"<GENERATED>-\d+", value)
        head = base.group() if base else value
        return head if head != value else f"{value}-<result_path>"
    choices: list[Callable[[str], str]] = [
        lambda v: "/local" + v if v.startswith("/") else "./" + v,
        lambda v: (
            re.sub(r"\.(\w+)$", lambda m: ".png" if m.group(1) != "png" else ".jpg", v)
            if re.search(r"\.\w+$", v)
            else v + ".tif"
        ),
        lambda v: re.sub(r"(\.\w+)?$", lambda m: "_v2" + (m.group(1) or ""), v, count=1),
        lambda v: v.replace("data", "dataset", 1) if "data" in v else "data/" + v,
    ]
    changed = rng.choice(choices)(value)
    return changed if changed != value else value + "_copy"


def _change_literal(plan: Plan, rng: random.Random) -> Plan:
    slots = [
        (step, key)
        for step in plan
        for key, value in (step.get("inputs") or {}).items()
        if isinstance(value, str)
    ]
    if slots:
        literal = [slot for slot in slots if not slot[0]["inputs"][slot[1]].startswith("<")]
        step, key = rng.choice(literal or slots)
        step["inputs"][key] = _changed_path(step["inputs"][key], rng)
    return plan


def _wrong_ref_step(plan: Plan, rng: random.Random) -> Plan:
    slots = [
        (step, key)
        for step in plan
        for key, value in (step.get("inputs") or {}).items()
        if isinstance(value, str) and _REFERENCE.search(value)
    ]
    if slots:
        step, key = rng.choice(slots)
        value = step["inputs"][key]
        old = int(_REFERENCE.search(value).group(1))  # type: ignore[union-attr]
        new = rng.choice([n for n in range(-1, len(plan) + 1) if n != old])
        step["inputs"][key] = _REFERENCE.sub(f"<GENERATED>-{new}", value, count=1)
    elif plan:
        # No reference to break: point a step at a step that does not exist.
        rng.choice(plan)["dependence"] = [len(plan)]
    return plan


def _drop_output(plan: Plan, rng: random.Random) -> Plan:
    with_outputs = [step for step in plan if step.get("outputs")]
    if with_outputs:
        step = rng.choice(with_outputs)
        outputs = list(step["outputs"])
        outputs.pop(rng.randrange(len(outputs)))
        step["outputs"] = outputs
    return plan


def _reorder_outputs(plan: Plan, rng: random.Random) -> Plan:
    several = [step for step in plan if len(step.get("outputs") or []) >= 2]
    if several:
        step = rng.choice(several)
        step["outputs"] = list(reversed(step["outputs"]))
    elif plan:
        # Nothing to reorder: the model lists a generic output first.
        step = rng.choice(plan)
        step["outputs"] = ["result_path", *(step.get("outputs") or [])]
    return plan


def _flip_dependence(plan: Plan, rng: random.Random) -> Plan:
    if not plan:
        return plan
    index = rng.randrange(len(plan))
    step = plan[index]
    if step.get("dependence") == [-1]:
        step["dependence"] = [index - 1] if index > 0 else [min(1, len(plan) - 1)]
    else:
        step["dependence"] = [-1]
    return plan


def _dep_content_values(plan: Plan, rng: random.Random) -> Plan:
    step = _pick_step(plan, rng)
    if step is None:
        return plan
    content = step.get("dependence_content")
    if isinstance(content, dict) and content:
        key = rng.choice(list(content))
        value = content[key]
        variants: list[Any] = [
            ["output_path"],
            value[0] if isinstance(value, list) and value else "output_path",
            [*value, "extra_output_path"] if isinstance(value, list) else [value],
        ]
        step["dependence_content"] = {**content, key: rng.choice(variants)}
    else:
        step["dependence_content"] = rng.choice([{}, {"0": ["result_path"]}])
    return plan


def _bare_int_dependence(plan: Plan, rng: random.Random) -> Plan:
    step = _pick_step(plan, rng)
    if step is not None and isinstance(step.get("dependence"), list) and step["dependence"]:
        step["dependence"] = step["dependence"][0]
    return plan


_ALIAS_OF: Final = {
    "agent": "agent_name",
    "step": "step_index",
    "dependence": "dependencies",
    "dependence_content": "dependency_content",
    "inputs": "input",
}


def _aliases(plan: Plan, rng: random.Random) -> Plan:
    chosen = [key for key in _ALIAS_OF if rng.random() < 0.6] or [rng.choice(list(_ALIAS_OF))]
    at_end = rng.random() < 0.5  # models often append the renamed keys after the others
    renamed: Plan = []
    for step in plan:
        kept = {key: value for key, value in step.items() if key not in chosen}
        moved = {_ALIAS_OF[key]: step[key] for key in step if key in chosen}
        if at_end:
            renamed.append({**kept, **moved})
        else:
            renamed.append(
                {
                    _ALIAS_OF.get(key, key) if key in chosen else key: value
                    for key, value in step.items()
                }
            )
    return renamed


_REASONS: Final = (
    "this step is needed to analyse the scene",
    "prepares the input for the next tool",
    "answers the user's question directly",
)


def _extra_key(plan: Plan, rng: random.Random) -> Plan:
    name = rng.choice(["reason", "description", "notes", "tool_type"])
    for step in plan:
        if rng.random() < 0.7:
            step[name] = rng.choice(_REASONS)
    return plan


def _extra_step(plan: Plan, rng: random.Random) -> Plan:
    last = len(plan) - 1
    produced = (plan[last].get("outputs") or ["result_path"])[0] if plan else "result_path"
    plan.append(
        {
            "agent": "GeoChat",
            "step": last + 1,
            "dependence": [last] if plan else [-1],
            "dependence_content": {str(last): [produced]} if plan else None,
            "inputs": {
                "image_path": format_reference(last, produced) if plan else "/data/image.tif",
                "user_query_path": "/data/user_queries/user_query.txt",
            },
            "outputs": ["contextual_description_path"],
        }
    )
    return plan


def _truncate(plan: Plan, rng: random.Random) -> Plan:
    return plan[: rng.randrange(len(plan))] if plan else plan


def _one_based_steps(plan: Plan, rng: random.Random) -> Plan:
    _renumber(
        plan, {step["step"]: step["step"] + 1 for step in plan if isinstance(step.get("step"), int)}
    )
    return plan


def _permute_independent(plan: Plan, rng: random.Random) -> Plan:
    swappable = [
        index
        for index in range(len(plan) - 1)
        if not _depends_on(plan[index + 1], plan[index].get("step"))
    ]
    if not swappable:
        return plan  # a pure chain: no order but the gold one is valid
    index = rng.choice(swappable)
    plan[index], plan[index + 1] = plan[index + 1], plan[index]
    # Steps are numbered by position again; references follow their steps.
    _renumber(plan, {step["step"]: position for position, step in enumerate(plan)})
    return plan


def _renumber_steps(plan: Plan, rng: random.Random) -> Plan:
    scheme: Callable[[int], int] = rng.choice(
        [lambda n: n + 10, lambda n: 2 * n, lambda n: n + 100]
    )
    _renumber(
        plan,
        {step["step"]: scheme(step["step"]) for step in plan if isinstance(step.get("step"), int)},
    )
    return plan


def _step_as_string(plan: Plan, rng: random.Random) -> Plan:
    for step in plan:
        step["step"] = str(step["step"])
    return plan


def _step_as_float(plan: Plan, rng: random.Random) -> Plan:
    for step in plan:
        step["step"] = float(step["step"])
    return plan


def _dependence_as_float(plan: Plan, rng: random.Random) -> Plan:
    for step in plan:
        if isinstance(step.get("dependence"), list):
            step["dependence"] = [float(member) for member in step["dependence"]]
    return plan


def _mixed_dependence(plan: Plan, rng: random.Random) -> Plan:
    # A number and a string in one dependence list: the reference's sort raises TypeError
    # (recorded as an "exception" by its harness) whenever a check gets that far.
    step = _pick_step(plan, rng)
    if step is not None and isinstance(step.get("dependence"), list) and step["dependence"]:
        first = step["dependence"][0]
        step["dependence"] = [first, str(first)]
    return plan


_MUTATORS: Final[Mapping[str, Callable[[Plan, random.Random], Plan]]] = {
    "identity": _identity,
    "swap_agent": _swap_agent,
    "unknown_agent": _unknown_agent,
    "rename_input_key": _rename_input_key,
    "change_literal": _change_literal,
    "wrong_ref_step": _wrong_ref_step,
    "drop_output": _drop_output,
    "reorder_outputs": _reorder_outputs,
    "flip_dependence": _flip_dependence,
    "dep_content_values": _dep_content_values,
    "bare_int_dependence": _bare_int_dependence,
    "aliases": _aliases,
    "extra_key": _extra_key,
    "extra_step": _extra_step,
    "truncate": _truncate,
    "one_based_steps": _one_based_steps,
    "permute_independent": _permute_independent,
    "renumber": _renumber_steps,
    "step_as_string": _step_as_string,
    "step_as_float": _step_as_float,
    "dependence_as_float": _dependence_as_float,
    "mixed_dependence": _mixed_dependence,
}

MUTATIONS: Final = tuple(_MUTATORS)

MUTATION_WEIGHTS: Final[Mapping[str, float]] = {
    name: {"identity": 6.0, "mixed_dependence": 0.25}.get(name, 1.0) for name in MUTATIONS
}

# --------------------------------------------------------------------------------------------
# Styles
# --------------------------------------------------------------------------------------------

_OPENINGS: Final = (
    "Let me work through the request before writing the plan.",
    "The user wants an end-to-end analysis, so I will chain the tools that fit each part.",
    "First I identify which inputs are available and which tools accept them.",
)
_STEP_SENTENCES: Final = (
    "Step {n} runs {agent}, which takes care of {what}.",
    "Next, {agent} is the right tool for {what} (step {n}).",
    "{agent} then handles {what}.",
)
_WHATS: Final = (
    "the raw imagery",
    "the intermediate result",
    "the part of the question about affected areas",
    "turning the previous output into something the user can read",
)
_CLOSINGS: Final = (
    "Each step only uses outputs that an earlier step produces.",
    "Dependencies follow the order in which the data becomes available.",
    "That covers every part of the request.",
)
_GARBAGE: Final = (
    "I'm sorry, but I can't determine which tools to use for this request without more "
    "information about the available imagery.",
    "To answer this we would first need to inspect the images (for example their resolution "
    "and acquisition dates); please provide more details.",
    "Plan: analyse the images, detect the damage and summarise the findings for the user. "
    "Note: tool selection depends on the data [see the manifest.",
    "The structured task plan is: (no valid plan could be produced)",
)


def _agents(plan: Any) -> list[str]:
    if not isinstance(plan, list):
        return []
    names = []
    for step in plan:
        if isinstance(step, dict):
            name = step.get("agent", step.get("agent_name"))
            if isinstance(name, str):
                names.append(name)
    return names


def _reasoning(plan: Any, rng: random.Random) -> str:
    parts = [rng.choice(_OPENINGS)]
    for n, agent in enumerate(_agents(plan)):
        parts.append(rng.choice(_STEP_SENTENCES).format(n=n, agent=agent, what=rng.choice(_WHATS)))
    parts.append(rng.choice(_CLOSINGS))
    return " ".join(parts)


def _python_literal(value: Any) -> str:
    return repr(value)


def _bare_keys(value: Any) -> str:
    if isinstance(value, dict):
        members = ", ".join(
            f"{key if re.fullmatch(r'[A-Za-z_][A-Za-z0-9_]*', key) else json.dumps(key)}: "
            f"{_bare_keys(item)}"
            for key, item in value.items()
        )
        return "{" + members + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_bare_keys(item) for item in value) + "]"
    return json.dumps(value)


def _python_constants(value: Any) -> str:
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(
                f"{json.dumps(key)}: {_python_constants(item)}" for key, item in value.items()
            )
            + "}"
        )
    if isinstance(value, list):
        return "[" + ", ".join(_python_constants(item) for item in value) + "]"
    if value is None or isinstance(value, bool):
        return repr(value)
    return json.dumps(value)


def _render_raw(plan: Any, rng: random.Random) -> str:
    return json.dumps(plan)


def _render_pretty(plan: Any, rng: random.Random) -> str:
    return json.dumps(plan, indent=2)


def _render_fence(plan: Any, rng: random.Random) -> str:
    body = "```json\n" + json.dumps(plan, indent=2) + "\n```"
    lead = rng.choice(["", "Here is the plan:\n\n", "Sure! The structured task plan is below.\n"])
    tail = rng.choice(["", "\n\nLet me know if you need changes."])
    return lead + body + tail


def _render_cot(plan: Any, rng: random.Random) -> str:
    separator = rng.choice(["\n", "\n\n", " "])
    plan_text = json.dumps(plan) if rng.random() < 0.7 else json.dumps(plan, indent=2)
    return _reasoning(plan, rng) + separator + "The structured task plan is: " + plan_text


def _render_wrapped(plan: Any, rng: random.Random) -> str:
    key = rng.choice(["structured_plan", "structured_plan", "plan", "task_plan"])
    wrapper = {"reasoning": _reasoning(plan, rng), key: plan}
    return json.dumps(wrapper, indent=rng.choice([None, 2]))


def _render_doubled_braces(plan: Any, rng: random.Random) -> str:
    return json.dumps(plan).replace("{", "{{").replace("}", "}}")


def _render_trailing_comma(plan: Any, rng: random.Random) -> str:
    text = json.dumps(plan, indent=2)
    if rng.random() < 0.7 and text.endswith("}\n]"):
        return text[: -len("}\n]")] + "},\n]"
    # A trailing comma inside the first outputs array instead.
    return re.sub(r'("outputs": \[[^\]]*?")(\s*\])', r"\1,\2", text, count=1)


def _render_single_quotes(plan: Any, rng: random.Random) -> str:
    return _python_literal(plan)


def _render_unquoted_keys(plan: Any, rng: random.Random) -> str:
    return _bare_keys(plan)


def _render_python_literals(plan: Any, rng: random.Random) -> str:
    return _python_constants(plan)


def _render_missing_bracket(plan: Any, rng: random.Random) -> str:
    text = json.dumps(plan) if rng.random() < 0.6 else json.dumps(plan, indent=2)
    return text[:-1] if text.endswith("]") else text


def _render_garbage(plan: Any, rng: random.Random) -> str:
    return rng.choice(_GARBAGE)


def _render_empty(plan: Any, rng: random.Random) -> str:
    return rng.choice(["", "", " \n"])


def _render_escaped(plan: Any, rng: random.Random) -> str:
    variant = rng.randrange(3)
    if variant == 0:
        return json.dumps(json.dumps(plan))  # the plan double-encoded as a JSON string
    if variant == 1:
        return json.dumps(plan, indent=2).replace("\n", "\\n")  # newlines written as \n
    # Windows-style paths: every slash inside strings becomes an (escaped) backslash.
    return json.dumps(plan).replace("/", "\\\\")


def _render_prose_brackets(plan: Any, rng: random.Random) -> str:
    lead = rng.choice(
        [
            "Plan (draft) [v2]:\n",
            "Below is the plan; see [1] for the tool list.\n",
            "Answer (JSON):\n",
        ]
    )
    tail = rng.choice(
        [
            "\nNote: step [0] feeds the later steps (as required).",
            "\n[end of plan]",
            "\n1) check inputs 2) run tools",
        ]
    )
    return lead + json.dumps(plan) + tail


def _render_nested_array(plan: Any, rng: random.Random) -> str:
    # Rollout-style output: the plan inside an outer array, sometimes after an empty attempt.
    outer = rng.choice([[plan], [[], plan], [plan, "final"]])
    return json.dumps(outer)


def _render_mixed_array(plan: Any, rng: random.Random) -> str:
    # Step objects mixed with prose strings and listed out of order.
    steps = list(plan) if isinstance(plan, list) else [plan]
    rng.shuffle(steps)
    return json.dumps(["Plan:", *steps, "Done."], indent=rng.choice([None, 2]))


_RENDERERS: Final[Mapping[str, Callable[[Any, random.Random], str]]] = {
    "raw": _render_raw,
    "pretty": _render_pretty,
    "fence": _render_fence,
    "cot": _render_cot,
    "wrapped": _render_wrapped,
    "doubled_braces": _render_doubled_braces,
    "trailing_comma": _render_trailing_comma,
    "single_quotes": _render_single_quotes,
    "unquoted_keys": _render_unquoted_keys,
    "python_literals": _render_python_literals,
    "missing_bracket": _render_missing_bracket,
    "garbage": _render_garbage,
    "empty": _render_empty,
    "escaped": _render_escaped,
    "prose_brackets": _render_prose_brackets,
    "nested_array": _render_nested_array,
    "mixed_array": _render_mixed_array,
}

STYLES: Final = tuple(_RENDERERS)

# Roughly how often each style shows up in real runs: mostly plain JSON, fences and prose;
# broken JSON of any one kind is rare.
STYLE_WEIGHTS: Final[Mapping[str, float]] = {
    "raw": 20.0,
    "pretty": 14.0,
    "fence": 20.0,
    "cot": 18.0,
    "wrapped": 6.0,
    "doubled_braces": 1.5,
    "trailing_comma": 2.0,
    "single_quotes": 0.5,
    "unquoted_keys": 0.5,
    "python_literals": 0.5,
    "missing_bracket": 0.5,
    "garbage": 3.0,
    "empty": 1.0,
    "escaped": 1.0,
    "prose_brackets": 3.0,
    "nested_array": 1.0,
    "mixed_array": 1.0,
}

# --------------------------------------------------------------------------------------------
# Generation
# --------------------------------------------------------------------------------------------


def load_gold_tasks(benchmark_jsonl: str | os.PathLike[str]) -> list[tuple[int, list[Any]]]:
    """``(task_id, structured_plan)`` for every line of a DisasterBench ``benchmark.jsonl``."""
    tasks = []
    with open(benchmark_jsonl, encoding="utf-8") as lines:
        for line in lines:
            if line.strip():
                record = json.loads(line)
                tasks.append((int(record["task_id"]), record["structured_plan"]))
    return tasks


def _schedule(seed: int) -> list[tuple[str, str]]:
    """Every (mutation, style) pair once, in a seeded order."""
    pairs = [(mutation, style) for mutation in MUTATIONS for style in STYLES]
    random.Random(f"schedule:{seed}").shuffle(pairs)
    return pairs


def _weighted(rng: random.Random, weights: Mapping[str, float]) -> str:
    names = list(weights)
    return rng.choices(names, weights=[weights[name] for name in names])[0]


def generate_completions(
    gold_tasks: Iterable[tuple[int, list[Any]]],
    *,
    per_task: int,
    seed: int,
    cover_all_pairs: bool = True,
) -> Iterator[GeneratedCompletion]:
    """Yield ``per_task`` completions for each ``(task_id, gold_plan)``, in order.

    Ids are ``"g{seed}-{task_id}-{k}"``. The gold plans are never modified. With
    ``cover_all_pairs`` (the default) the first completions walk through every
    (mutation, style) pair, as tests want; without it every pair is drawn from the weights,
    which is the realistic mix a benchmark wants.
    """
    schedule = _schedule(seed) if cover_all_pairs else []
    produced = 0
    for task_id, gold in gold_tasks:
        for k in range(per_task):
            rng = random.Random(f"completion:{seed}:{task_id}:{k}")
            if produced < len(schedule):
                mutation, style = schedule[produced]
            else:
                mutation = _weighted(rng, MUTATION_WEIGHTS)
                style = _weighted(rng, STYLE_WEIGHTS)
            produced += 1
            yield GeneratedCompletion(
                id=f"g{seed}-{task_id}-{k}",
                task_id=task_id,
                mutation=mutation,
                style=style,
                completion=_make(gold, mutation, style, rng),
            )


def _make(gold: list[Any], mutation: str, style: str, rng: random.Random) -> str:
    plan = _MUTATORS[mutation](copy.deepcopy(gold), rng)
    return _RENDERERS[style](plan, rng)


def make_completion(gold: list[Any], mutation: str, style: str, *, seed: int | str) -> str:
    """One completion of ``gold`` with the given mutation and style (see :data:`MUTATIONS`,
    :data:`STYLES`), deterministic in ``seed``."""
    if mutation not in _MUTATORS or style not in _RENDERERS:
        raise ValueError(f"unknown mutation {mutation!r} or style {style!r}")
    return _make(gold, mutation, style, random.Random(f"make:{seed}"))


# --------------------------------------------------------------------------------------------
# Edge cases for the scorer's shortcuts
# --------------------------------------------------------------------------------------------

# Each kind aims at one argument the reference-parity scorer relies on to skip work (see
# plancheck.scoring.reference): completions that only just fall inside a shortcut's class, or
# only just outside it, so that recorded reference verdicts catch any shortcut taken wrongly.
EDGE_KINDS: Final = (
    "brace_string",  # a string holding braces: the isolation regexes see objects that are not
    "deep_object",  # objects nested deeper than the regexes read, or inside arrays
    "trailing_comma",  # a comma after the last step, with prose and brackets around
    "prose_token",  # "[1] prose [plan]", balanced or not: the bracket-slice fallback
    "doubled_odd",  # doubled braces with strings holding braces, brackets or parentheses
    "bracket_prose",  # prose with (), [] and {} around a plan, balanced or not
)

_EDGE_STRINGS: Final = (
    "{x}",
    "}{",
    "{",
    "}",
    "a {b} c",
    "{{x}}",
    "[a]",
    "[",
    "]",
    "(",
    ")",
    "f(x) [1]",
    "it's",
    "agent",
    "step",
    "é {",
)
_EDGE_NESTED: Final = (
    {"deep": {"z": 1}},
    [{"a": 1}],
    {"k": [{"b": "c"}]},
    [[{"d": None}]],
    {"ok": "flat"},
    ["plain"],
)
_EDGE_PREFIXES: Final = (
    "",
    "Here is the plan:\n",
    "Plan {draft}:\n",
    "Plan (v2):\n",
    "a ( b\n",
    "x} ",
    "[1] see the tool list.\n",
    "[v2]:\n",
    "Notes [a b] - ",
    "[] ok\n",
    "See [12].",
    "```json\n",
)
_EDGE_SUFFIXES: Final = (
    "",
    "\nDone.",
    "\n```",
    " {end}",
    "\n(ok)",
    " }",
    " {",
    "\n1) check inputs 2) run tools",
    " (",
    "\nok)",
    "\nsee [1]",
    ' {"b": [1]}',
)


def _edge_string(plan: Plan, rng: random.Random) -> None:
    step = _pick_step(plan, rng)
    if step is None:
        return
    field = rng.choice(["inputs", "outputs", "agent", "extra"])
    text = rng.choice(_EDGE_STRINGS)
    if field == "inputs" and isinstance(step.get("inputs"), dict) and step["inputs"]:
        step["inputs"][rng.choice(sorted(step["inputs"]))] = text
    elif field == "outputs" and isinstance(step.get("outputs"), list):
        step["outputs"] = [*step["outputs"], text]
    elif field == "agent":
        step["agent"] = f"{step.get('agent')}{text}"
    else:
        step["note"] = text


def _edge_nested(plan: Plan, rng: random.Random) -> None:
    step = _pick_step(plan, rng)
    if step is None:
        return
    value = copy.deepcopy(rng.choice(_EDGE_NESTED))
    if rng.random() < 0.5 and isinstance(step.get("inputs"), dict):
        step["inputs"]["nested"] = value
    else:
        step["extra"] = value


def _edge_render(plan: Any, rng: random.Random) -> str:
    indent = rng.choice([None, None, 2, 1, "\t"])
    separators = rng.choice([None, (",", ":"), (" , ", " : ")])
    return json.dumps(plan, indent=indent, separators=separators)


def _make_edge(gold: list[Any], kind: str, rng: random.Random) -> tuple[str, str]:
    mutation = _weighted(rng, MUTATION_WEIGHTS)
    plan = _MUTATORS[mutation](copy.deepcopy(gold), rng)
    if isinstance(plan, list) and rng.random() < 0.08:
        plan = plan[:1]  # one-step plans take other isolation stages
    if kind == "brace_string":
        _edge_string(plan, rng)
    elif kind == "deep_object":
        _edge_nested(plan, rng)
    elif kind == "doubled_odd":
        for _ in range(rng.randint(0, 2)):
            (_edge_string if rng.random() < 0.7 else _edge_nested)(plan, rng)
        if plan and rng.random() < 0.2:
            _pick_step(plan, rng)["dependence_content"] = {}  # type: ignore[index]
        if isinstance(plan, list) and rng.random() < 0.5:
            # Steps without object members are isolated differently (runs of them).
            for step in plan[: rng.randint(1, max(1, len(plan)))]:
                if isinstance(step, dict):
                    for key, value in step.items():
                        if isinstance(value, dict):
                            step[key] = rng.choice([None, "x}", json.dumps(value)])
        text = json.dumps(plan).replace("{", "{{").replace("}", "}}")
        if rng.random() < 0.2:
            text = rng.choice(_EDGE_PREFIXES) + text
        return mutation, text
    elif rng.random() < 0.3:
        (_edge_string if rng.random() < 0.5 else _edge_nested)(plan, rng)
    text = _edge_render(plan, rng)
    if kind == "trailing_comma" and text.endswith("]"):
        text = text[:-1].rstrip() + "," + rng.choice(["", " ", "\n", "\n\n", "\r\n", "\t"]) + "]"
    prefixes: tuple[str, ...] = _EDGE_PREFIXES
    if kind == "prose_token":
        prefixes = ("[1] see the tool list.\n", "[v2]:\n", "Notes [a b] - ", "[] ok\n", "[x]\n")
    return mutation, rng.choice(prefixes) + text + rng.choice(_EDGE_SUFFIXES)


def generate_edge_completions(
    gold_tasks: Iterable[tuple[int, list[Any]]], *, count: int, seed: int
) -> Iterator[GeneratedCompletion]:
    """Yield ``count`` edge-case completions (:data:`EDGE_KINDS`, in turn) built from the
    gold plans, deterministic in ``(gold_tasks, count, seed)``; ids are
    ``"e{seed}-{n}"`` and styles ``"edge:<kind>"``. Not a realistic mix: these sit right at
    the borders of the reference-parity scorer's shortcuts."""
    tasks = list(gold_tasks)
    if not tasks:
        return
    for n in range(count):
        rng = random.Random(f"edge:{seed}:{n}")
        task_id, gold = tasks[rng.randrange(len(tasks))]
        kind = EDGE_KINDS[n % len(EDGE_KINDS)]
        mutation, text = _make_edge(gold, kind, rng)
        yield GeneratedCompletion(
            id=f"e{seed}-{n}",
            task_id=task_id,
            mutation=mutation,
            style=f"edge:{kind}",
            completion=text,
        )
