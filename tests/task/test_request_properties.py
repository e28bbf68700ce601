"""Properties of the request rules: reading any text never fails, and a request that writes
out every value a plan passes leaves nothing invented or unused."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import plancheck
from plancheck.checks.request import read_request

_PIECES = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["Step 1:", "Step 2:", "2.", "1)", "'", "\"", "`", "/", ".", "e.g.",
                     "https://", "x@y.io", "/d/a.tif", "example.wav", " then ", "\n",
                     "will be saved at", "“", "”"]))


@given(st.lists(_PIECES, max_size=30))
@settings(max_examples=200, deadline=None)
def test_reading_any_request_never_fails(pieces: list[str]) -> None:
    request = read_request("".join(pieces))
    for mention in request.mentions:
        assert mention.text and mention.text.lower() in request.text.lower()
    assert all(request.gives(quoted) for quoted in request.quoted if quoted.strip("'\"`"))


@given(data=st.data())
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_request_that_gives_every_value_finds_nothing_invented(
        data: st.DataObject, gold_tasks: list[dict[str, Any]]) -> None:
    task = data.draw(st.sampled_from(gold_tasks))
    plan = task["structured_plan"]
    values = [v for step in plan for v in (step.get("inputs") or {}).values()
              if isinstance(v, str) and not v.startswith("<GENERATED>")]
    filler = data.draw(st.sampled_from(["Use ", "The files are ", "Please read "]))
    request = filler + ", ".join(f"'{v}'" for v in values) + "."
    codes = plancheck.check(json.dumps(plan), task=request).codes
    assert "PC901" not in codes and "PC902" not in codes, (task["task_id"], codes)


def test_a_request_naming_thousands_of_files_reads_in_linear_time() -> None:
    """Whether a file is an output was decided by a search back to the sentence start for
    each file: 8,000 files in one sentence took 60 s. Now one sweep (and at most
    MAX_MENTIONS files are kept)."""
    import time

    from plancheck.checks.request import MAX_MENTIONS

    text = "Save " + " ".join(f"/d/f{i}.txt" for i in range(20_000))
    started = time.process_time()
    request = read_request(text)
    assert time.process_time() - started < 10
    assert len(request.mentions) == MAX_MENTIONS
    assert all(mention.written for mention in request.mentions)


def test_order_across_an_unreadable_step() -> None:
    """Positions skip a step that is not an object: the rule finds the steps by position."""
    step = {"agent": "RGB_GeoImage_Classifier", "dependence": [-1],
            "dependence_content": None, "outputs": ["predicted_category_path"]}
    plan = [{**step, "step": 0, "inputs": {"image_path": "/d/b.tif"}}, 5,
            {**step, "step": 2, "inputs": {"image_path": "/d/a.tif"}}]
    report = plancheck.check(plan, task="Classify /d/a.tif and then /d/b.tif.")
    order = next(d for d in report.diagnostics if d.code == "PC904")
    assert order.data == {"step": 0, "other_step": 2}


@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_request_on_any_gold_plan_is_checked_without_internal_error(
        data: st.DataObject, gold_tasks: list[dict[str, Any]]) -> None:
    """Random requests (with the gold's own files mixed in) and gold plans cut short or
    reordered: the request rules report, never fail (PC002)."""
    task = data.draw(st.sampled_from(gold_tasks))
    plan = list(task["structured_plan"])
    plan = data.draw(st.permutations(plan))[:data.draw(st.integers(0, len(plan)))]
    pieces = data.draw(st.lists(st.one_of(_PIECES, st.sampled_from(
        [task["task_desc"][:80], task["task_desc"][-80:]])), max_size=12))
    report = plancheck.check(plan, task="".join(pieces))
    assert "PC002" not in report.codes
    assert all(d.code in {"PC901", "PC902", "PC903", "PC904", "PC905"}
               for d in report.diagnostics if d.code.startswith("PC9"))


_ACTIONS = ("restore the image /d/a.jpg", "segment the objects", "describe the scene",
            "count the buildings", "write a short report")
_LINKS = (", then ", ". Then ", ", and then ", ". Finally, ", ", and finally ", ", followed by ",
          "; afterwards ")


@given(data=st.data())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_chained_request_wants_at_least_as_many_calls_as_actions(
        data: st.DataObject, gold_tasks: list[dict[str, Any]]) -> None:
    actions = data.draw(st.integers(min_value=2, max_value=len(_ACTIONS)))
    request = _ACTIONS[0].capitalize() + "".join(
        data.draw(st.sampled_from(_LINKS)) + action for action in _ACTIONS[1:actions]) + "."
    task = data.draw(st.sampled_from(gold_tasks))
    plan = task["structured_plan"]
    codes = plancheck.check(json.dumps(plan), task=request).codes
    assert ("PC903" in codes) == (len(plan) < actions), (request, len(plan), codes)


def test_a_sequence_word_with_nothing_after_it_chains_no_action() -> None:
    plan = [{"agent": "Weather_Degraded_Image_Restoration", "step": 0, "dependence": [-1],
             "dependence_content": None, "inputs": {"weather_degraded_image_path": "/d/a.jpg"},
             "outputs": ["restored_image_path"]}]
    assert "PC903" not in plancheck.check(json.dumps(plan), task="Restore /d/a.jpg, then").codes
