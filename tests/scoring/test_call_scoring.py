"""``plancheck score`` with gold plans written as tool calls: the metrics defined on calls, and
an error -- never a number -- for a prediction that cannot be paired with its gold plan."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main

REAL = Path(__file__).parents[1] / "data" / "real"
GOLD = {"id": "t1", "tool_calls": [{"name": "a_tool", "arguments": {"x": "1"}},
                                   {"name": "b_tool", "arguments": {"y": "{{steps.0.output.r}}"}}]}


def jsonl(path: Path, *records: Any) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def score(capsys: pytest.CaptureFixture[str], gold: Path, *args: str
          ) -> tuple[int, dict[str, Any] | None, str]:
    code = main(["score", "--gold", str(gold), "--format", "json", *args])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


def means(document: dict[str, Any] | None) -> dict[str, float]:
    assert document is not None
    return {k: v["mean"] for k, v in document["metrics"].items()}


@pytest.mark.parametrize("gold_form", ["tool_calls", "structured_plan"])
def test_one_wrong_call_scores_zero(gold_form: str, tmp_path: Path,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    """One call `zzz` against gold `a_tool, b_tool`: the DisasterBench scorer once rated it
    execution-equivalent and 100% tool-any-order."""
    record = GOLD if gold_form == "tool_calls" else {
        "task_id": "t1", "structured_plan": GOLD["tool_calls"]}
    gold = jsonl(tmp_path / "gold.jsonl", record)
    predictions = jsonl(tmp_path / "pred.jsonl", {"task_id": "t1", "completion": json.dumps(
        [{"name": "zzz", "arguments": {}}])})
    code, document, _ = score(capsys, gold, str(predictions))
    assert code == 0 and document is not None and document["kind"] == "tool-calls"
    assert means(document) == {
        "tool_accuracy": 0.0, "argument_accuracy": 0.0, "dependency_accuracy": 0.0,
        "node_f1": 0.0, "edge_f1": 0.0, "argument_name_f1": 0.0, "argument_value_f1": 0.0,
        "t_any": 0.0, "t_ord": 0.0, "t_em": 0.0}
    main(["score", "--gold", str(gold), str(predictions)])
    text = capsys.readouterr().out
    assert "Execution-equivalent" not in text and "Exact match" not in text
    assert "Tool any order                     0.0" in text


def test_calls_in_other_shapes_and_syntaxes_are_compared(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    gold = jsonl(tmp_path / "gold.jsonl", GOLD)
    same = {"id": "t1", "task_nodes": [  # TaskBench's nodes, referring in its own syntax
        {"task": "a_tool", "arguments": {"x": "1"}},
        {"task": "b_tool", "arguments": {"y": "<node-0>.r"}}]}
    swapped = {"id": "t1", "output": [  # OpenAI Responses items
        {"type": "function_call", "name": "a_tool", "arguments": '{"x": "2"}'},
        {"type": "function_call", "name": "b_tool", "arguments": '{"y": "r"}'}]}
    code, document, _ = score(capsys, gold, str(jsonl(tmp_path / "p.jsonl", same, swapped)))
    assert code == 0
    assert means(document) == {
        "tool_accuracy": 1.0, "argument_accuracy": 0.5, "dependency_accuracy": 0.5,
        "node_f1": 1.0, "edge_f1": 0.5, "argument_name_f1": 1.0, "argument_value_f1": 0.5,
        "t_any": 1.0, "t_ord": 1.0, "t_em": 1.0}
    # A chat API's calls declare no reference syntax (issue 35): a template in a Responses
    # call's argument is the text the tool was given, not the gold's reference.
    text = {"id": "t1", "output": [
        {"type": "function_call", "name": "a_tool", "arguments": '{"x": "1"}'},
        {"type": "function_call", "name": "b_tool",
         "arguments": '{"y": "{{steps.0.output.r}}"}'}]}
    code, document, _ = score(capsys, gold, str(jsonl(tmp_path / "t.jsonl", text)))
    assert code == 0 and means(document)["dependency_accuracy"] == 0.0


def test_score_reads_references_in_the_syntax_it_is_given(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``score --reference-syntax`` as ``check``'s: a chat API's calls that write templates are
    read with them when the syntax is named (they declare none); ``none`` reads no reference
    anywhere, the gold's included."""
    gold = jsonl(tmp_path / "gold.jsonl", GOLD)
    predictions = jsonl(tmp_path / "t.jsonl", {"id": "t1", "output": [
        {"type": "function_call", "name": "a_tool", "arguments": '{"x": "1"}'},
        {"type": "function_call", "name": "b_tool",
         "arguments": '{"y": "{{steps.0.output.r}}"}'}]})
    dependency = {}
    for syntax in ("auto", "template", "none"):
        code, document, err = score(capsys, gold, "--reference-syntax", syntax, str(predictions))
        assert code == 0, err
        dependency[syntax] = means(document)["dependency_accuracy"], means(document)["t_em"]
    assert dependency == {"auto": (0.0, 1.0), "template": (1.0, 1.0), "none": (1.0, 1.0)}
    code, document, err = score(capsys, gold, "--reference-syntax", "templates",
                                str(predictions))
    assert code == 2 and document is None and "template" in err


def test_what_cannot_be_paired_gets_no_number(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    gold = jsonl(tmp_path / "gold.jsonl", GOLD)
    steps = {"id": "t1", "plan": [{"agent": "a_tool", "step": 0, "dependence": [-1],
                                   "dependence_content": None, "inputs": {}, "outputs": []}]}
    unknown = {"id": "t7", "tool_calls": GOLD["tool_calls"]}
    anonymous = {"tool_calls": GOLD["tool_calls"]}
    for record in (steps, unknown, anonymous):
        code, document, err = score(capsys, gold, str(jsonl(tmp_path / "p.jsonl", record)))
        assert (code, document) == (2, None)  # nothing paired: no metric at all
        assert ("error[PC005]" if record is steps else "error[PC004]") in err
    items = tmp_path / "items.jsonl"
    predictions = jsonl(tmp_path / "p.jsonl", steps, GOLD, {"id": "t1", "completion": "no"})
    code, document, err = score(capsys, gold, "--per-item", str(items), str(predictions))
    assert code == 1 and document is not None
    assert (document["scored"], document["unpaired"], document["unreadable"]) == (2, 1, 1)
    assert means(document)["tool_accuracy"] == 0.5  # the gold itself, and no call at all
    lines = [json.loads(line) for line in items.read_text(encoding="utf-8").splitlines()]
    assert lines[0]["metrics"] is None and lines[0]["diagnostics"][0]["code"] == "PC005"
    assert lines[2]["unreadable"] and lines[2]["metrics"]["node_f1"] == 0.0


def test_real_taskbench_predictions_pair_by_id(capsys: pytest.CaptureFixture[str]) -> None:
    """The excerpts share one record (16097613); the others have no gold plan here."""
    code, document, err = score(
        capsys, REAL / "taskbench" / "data_multimedia.excerpt.jsonl", "--tools",
        str(REAL / "taskbench" / "tool_desc.json"),
        str(REAL / "taskbench" / "MiniMax-Text-01.excerpt.jsonl"))
    assert code == 1 and document is not None
    assert (document["scored"], document["unpaired"]) == (1, 9)
    assert err.count("error[PC004]") == 9
    assert set(means(document).values()) == {1.0}  # MiniMax gets 16097613 exactly right


def test_disasterbench_gold_is_still_the_reference_scorer(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    step = {"agent": "RGB_GeoImage_Classifier", "step": 0, "dependence": [-1],
            "dependence_content": None, "inputs": {"image_path": "/d/a.png"},
            "outputs": ["predicted_category_path"]}
    gold = jsonl(tmp_path / "gold.jsonl", {"task_id": 1, "structured_plan": [step]})
    predictions = jsonl(tmp_path / "p.jsonl", {"task_id": 1, "plan": [step]})
    code, document, _ = score(capsys, gold, "--bootstrap", "0", str(predictions))
    assert code == 0 and document is not None and "kind" not in document
    assert "total" in document


# --------------------------------------------------------------------------- no tracebacks

_SETTINGS = settings(max_examples=60, deadline=None,
                     suppress_health_check=[HealthCheck.function_scoped_fixture])
_names = st.sampled_from(["a_tool", "b_tool", "zzz", "", 3, None])
_values = st.one_of(st.none(), st.booleans(), st.integers(-2, 3), st.sampled_from(
    ["1", "<node-0>", "<node-5>", "{{steps.0.output.r}}", "{{steps.0.output.r[0].x}}",
     "$v$", "API_call_0", "<output of step 1>", "{"]))
_arguments = st.one_of(st.dictionaries(st.sampled_from(["x", "y"]), _values, max_size=2),
                       st.lists(_values, max_size=2), _values)


@st.composite
def records(draw: st.DrawFn) -> Any:
    calls = draw(st.lists(st.builds(
        lambda shape, name, arguments: (
            {"type": "function", "function": {"name": name, "arguments": json.dumps(arguments)}}
            if shape == "chat" else {"type": "tool_use", "name": name, "input": arguments}
            if shape == "anthropic" else {"task": name, "arguments": arguments}),
        st.sampled_from(["chat", "anthropic", "generic"]), _names, _arguments), max_size=3))
    ident = draw(st.sampled_from([{"id": "t1"}, {"task_id": "t1"}, {"id": "t2"}, {}]))
    form = draw(st.sampled_from(["tool_calls", "task_nodes", "completion", "structured_plan"]))
    if form == "completion":
        return {**ident, "completion": "Calls:\n```json\n" + json.dumps(calls) + "\n```"}
    return {**ident, form: calls}


@_SETTINGS
@given(gold=st.lists(records(), min_size=1, max_size=2),
       predictions=st.lists(records(), max_size=3))
def test_scoring_tool_calls_never_crashes(gold: list[Any], predictions: list[Any],
                                          tmp_path_factory: pytest.TempPathFactory,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path_factory.mktemp("score")
    gold_path = jsonl(folder / "gold.jsonl", *gold)
    predictions_path = jsonl(folder / "p.jsonl", *predictions)
    code = main(["score", "--gold", str(gold_path), "--format", "json", "--bootstrap", "0",
                 str(predictions_path)])
    out, err = capsys.readouterr()
    assert code in (0, 1, 2), err
    assert "Traceback" not in out + err and "internal error" not in out + err
    if out.strip():
        document = json.loads(out)
        if document.get("kind") == "tool-calls":
            assert all(0.0 <= m["mean"] <= 1.0 for m in document["metrics"].values())
