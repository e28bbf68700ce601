"""Scoring tool-call plans: gold and predictions in the shapes agent loops and corpora write.

DisasterBench's reference metrics (exact match, FPoF, execution equivalence) are defined on its
own step schema; computed on tool calls they are meaningless (one call ``zzz`` against gold
``a_tool, b_tool`` came out execution-equivalent). When the gold file holds tool calls, a
prediction is read with the same call frontend as ``check`` and compared call by call, with the
metrics that are defined on calls:

* ``tool_accuracy`` -- the same tools in the same order;
* ``argument_accuracy`` -- and every call's arguments equal (literals as JSON values,
  references by the call and output they name);
* ``dependency_accuracy`` -- the same (consumer call, producer call) pairs;
* TaskBench's F1s: ``node_f1`` (tools), ``edge_f1`` (producer tool, consumer tool),
  ``argument_name_f1`` (tool, argument) and ``argument_value_f1`` (tool, argument, value), over
  multisets; ``None`` when neither plan has anything of the kind;
* DORA's trajectory metrics on the tool sequences: ``t_any``, ``t_ord``, ``t_em`` (not its
  efficiency, a length ratio that rates one wrong call against two gold calls 100%).

A prediction is paired with the gold record of the same id (``task_id``/``id``/
``sample_id``/``question_id``), or with the one gold plan when the gold file holds one plan.
What cannot be paired -- a prediction with no id or an id the gold lacks, a prediction written
as DisasterBench steps -- gets an error (``PC004``, ``PC005``) and no number. A prediction in
which no call can be found is scored as making no calls, and counted as unreadable.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from plancheck.compiler.callshapes import bind_plan, calls_in_text, lower_calls
from plancheck.diagnostics.model import Diagnostic, make
from plancheck.diagnostics.span import Span
from plancheck.dora.metrics import tool_any_order, tool_exact_match, tool_in_order
from plancheck.formats.records import CONTENT_KEYS, ID_KEYS
from plancheck.ir.nodes import Literal, MalformedReference, Plan, Reference, Step, Toolset

METRICS = ("tool_accuracy", "argument_accuracy", "dependency_accuracy", "node_f1", "edge_f1",
           "argument_name_f1", "argument_value_f1", "t_any", "t_ord", "t_em")
LABELS = {
    "tool_accuracy": "Tool accuracy", "argument_accuracy": "Argument accuracy",
    "dependency_accuracy": "Dependency accuracy", "node_f1": "TaskBench node f1",
    "edge_f1": "TaskBench edge f1", "argument_name_f1": "TaskBench argument-name f1",
    "argument_value_f1": "TaskBench argument-value f1", "t_any": "Tool any order",
    "t_ord": "Tool in order", "t_em": "Tool exact match (prefix)",
}


@dataclass(frozen=True, slots=True)
class Calls:
    """One plan of tool calls, as read: its id, and the plan (``None``: no call found)."""

    id: str | None
    plan: Plan | None
    steps_shaped: bool = False  # written as DisasterBench steps, not tool calls
    where: Span = field(default_factory=lambda: Span("<input>"))


@dataclass(slots=True)
class ScoredCalls:
    id: str | None
    source: str
    metrics: dict[str, float | None] | None  # None: not paired, not scored
    problem: Diagnostic | None = None
    unreadable: bool = False

    def line(self) -> str:
        """The per-item line: the metrics (``null`` when not scored) and the diagnostics."""
        from plancheck.scoring.compact import compact_entry

        return json.dumps({"id": self.id, "source": self.source, "metrics": self.metrics,
                           "unreadable": self.unreadable,
                           "diagnostics": [compact_entry(self.problem)] if self.problem else []},
                          ensure_ascii=False)


# --------------------------------------------------------------------------- reading


def read_calls(value: Any, where: Span) -> Calls:
    """The tool-call plan of one record (or document)."""
    from plancheck.formats.sniff import is_plan_steps

    ident = _id_of(value)
    content = value
    if isinstance(value, dict):
        content = next((value[k] for k in CONTENT_KEYS if k in value), value)
    if isinstance(content, str):
        content = _from_text(content)
    if content is None:
        return Calls(ident, None, where=where)
    if is_plan_steps(content):
        return Calls(ident, None, steps_shaped=True, where=where)
    lowered = lower_calls(content, where)
    if lowered is None or lowered[0] is None:
        return Calls(ident, None, where=where)
    return Calls(ident, lowered[0], where=where)


def _from_text(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):  # ValueError: also an integer of 4,301+ digits
        found = calls_in_text(text)
        return found[0] if found is not None else None


def _id_of(value: Any) -> str | None:
    if not isinstance(value, dict):
        return None
    for key in ID_KEYS:
        ident = value.get(key)
        if isinstance(ident, (str, int)) and not isinstance(ident, bool):
            return str(ident)
    return None


def documents(text: str, file: str) -> Iterator[tuple[Any, Span]]:
    """The records of a JSONL file, or the one document of a JSON file (a list of records
    when every item has an id)."""
    stripped = text.strip()
    try:
        whole = json.loads(stripped) if stripped else None
    except (ValueError, RecursionError):  # ValueError: also an integer of 4,301+ digits
        whole = None
        for number, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    record = json.loads(line)
                except (ValueError, RecursionError):  # ValueError: also an integer of 4,301+ digits
                    record = line  # a raw completion
                yield record, Span(file, number, 1, number, len(line) + 1, "")
        return
    if isinstance(whole, list) and whole and all(_id_of(item) is not None for item in whole):
        for i, item in enumerate(whole):
            yield item, Span(file, pointer=f"/{i}")
        return
    yield whole, Span(file, pointer="")


def call_gold(text: str, file: str) -> list[Calls] | None:
    """The gold plans of a gold file when they are tool calls (``None``: they are not, and the
    DisasterBench scorer reads the file)."""
    plans = [read_calls(value, where) for value, where in documents(text, file)]
    if not plans or any(p.steps_shaped for p in plans) or all(p.plan is None for p in plans):
        return None
    return plans


# --------------------------------------------------------------------------- comparing


def _bound(plan: Plan, toolset: Toolset | None) -> Plan:
    """Positional arguments named and "the result" resolved, when the pool knows every tool
    (otherwise both sides stay as written, which compares alike)."""
    if toolset is None or not all(s.tool and toolset.tool(s.tool) for s in plan.steps):
        return plan
    return bind_plan(plan, toolset)[0]


def _value(binding: Any, tools: list[str | None]) -> tuple[Any, ...]:
    if isinstance(binding, Reference):
        producer = tools[binding.step] if 0 <= binding.step < len(tools) else None
        return ("reference", binding.step, producer, binding.key, binding.path)
    if isinstance(binding, MalformedReference):
        return ("malformed", binding.raw)
    assert isinstance(binding, Literal)
    return ("literal", json.dumps(binding.value, sort_keys=True, ensure_ascii=False))


@dataclass(frozen=True, slots=True)
class _Shape:
    tools: list[str]
    arguments: list[dict[str, tuple[Any, ...]]]
    edges: Counter[tuple[int, int]]

    @classmethod
    def of(cls, steps: Iterable[Step]) -> _Shape:
        steps = list(steps)
        tools: list[str | None] = [s.tool for s in steps]
        arguments = [{a.name: _value(a.value, tools) for a in s.args} for s in steps]
        edges: Counter[tuple[int, int]] = Counter()
        for s in steps:
            producers = {r.step for a in s.args for r in a.references()}
            edges.update((p, s.position) for p in producers)
        return cls([t or "" for t in tools], arguments, edges)


def _f1(predicted: Counter[Any], gold: Counter[Any]) -> float | None:
    total = sum(predicted.values()) + sum(gold.values())
    if total == 0:
        return None
    return 2.0 * sum((predicted & gold).values()) / total


def compare(predicted: Plan | None, gold: Plan) -> dict[str, float | None]:
    """The metrics of one prediction against its gold plan (see the module docstring)."""
    g = _Shape.of(gold.steps)
    p = _Shape.of(predicted.steps if predicted is not None else ())

    def named(shape: _Shape) -> Counter[Any]:
        return Counter((t, n) for t, a in zip(shape.tools, shape.arguments, strict=True)
                       for n in a)

    def valued(shape: _Shape) -> Counter[Any]:
        # A reference's value is what it reads (tool, output), not where that call stands.
        return Counter((t, n, v[:1] + v[2:] if v[0] == "reference" else v)
                       for t, a in zip(shape.tools, shape.arguments, strict=True)
                       for n, v in a.items())

    def tool_edges(shape: _Shape) -> Counter[Any]:
        return Counter({(shape.tools[a], shape.tools[b]): k for (a, b), k in shape.edges.items()
                        if 0 <= a < len(shape.tools)})

    same_tools = p.tools == g.tools
    return {
        "tool_accuracy": float(same_tools),
        "argument_accuracy": float(same_tools and p.arguments == g.arguments),
        "dependency_accuracy": float(p.edges == g.edges),
        "node_f1": _f1(Counter(p.tools), Counter(g.tools)),
        "edge_f1": _f1(tool_edges(p), tool_edges(g)),
        "argument_name_f1": _f1(named(p), named(g)),
        "argument_value_f1": _f1(valued(p), valued(g)),
        "t_any": tool_any_order(p.tools, g.tools),
        "t_ord": tool_in_order(p.tools, g.tools),
        "t_em": tool_exact_match(p.tools, g.tools),
    }


# --------------------------------------------------------------------------- pairing


def score_calls(gold: list[Calls], predictions: Iterable[tuple[Any, Span]], source: str,
                toolset: Toolset | None = None) -> Iterator[ScoredCalls]:
    """Each prediction paired with its gold plan and compared, or the reason it cannot be."""
    single = gold[0] if len(gold) == 1 and gold[0].id is None else None
    by_id = {g.id: g for g in gold if g.id is not None and g.plan is not None}
    for value, where in predictions:
        predicted = read_calls(value, where)
        target = single if single is not None else by_id.get(predicted.id or "")
        if target is None or target.plan is None:
            yield ScoredCalls(predicted.id, source, None, _no_gold(predicted, where))
            continue
        if predicted.steps_shaped:
            yield ScoredCalls(predicted.id, source, None, make(
                "PC005", "the prediction is written as DisasterBench plan steps, the gold plan "
                "as tool calls: they cannot be compared", primary=where,
                help=["score DisasterBench plans against the benchmark's gold plans, and tool "
                      "calls against tool calls"], data={"id": predicted.id}))
            continue
        plan = _bound(predicted.plan, toolset) if predicted.plan is not None else None
        yield ScoredCalls(predicted.id, source, compare(plan, _bound(target.plan, toolset)),
                          unreadable=predicted.plan is None)


def _no_gold(predicted: Calls, where: Span) -> Diagnostic:
    if predicted.id is None:
        message = "the prediction names no id (task_id, id, ...), so no gold plan is paired " \
            "with it"
    else:
        message = f"no gold plan has the id `{predicted.id}`"
    return make("PC004", message, primary=where, data={"id": predicted.id})


def summarise(items: list[ScoredCalls]) -> dict[str, Any]:
    """Each metric's mean over the paired predictions where it applies, with how many."""
    scored = [i for i in items if i.metrics is not None]
    metrics: dict[str, dict[str, float | int]] = {}
    for name in METRICS:
        values = [v for i in scored if i.metrics is not None
                  and (v := i.metrics.get(name)) is not None]
        if values:
            metrics[name] = {"mean": sum(values) / len(values), "n": len(values)}
    return {"scored": len(scored), "unpaired": len(items) - len(scored),
            "unreadable": sum(1 for i in scored if i.unreadable), "metrics": metrics}


def render(summary: Mapping[str, Any], name: str) -> str:
    lines = [f"{name}: {summary['scored']} predictions scored against tool-call gold plans "
             f"({summary['unreadable']} with no call found, {summary['unpaired']} not paired)",
             "", f"{'Metric':<30}  {'%':>6}  n", f"{'-' * 30}  {'-' * 6}  ---"]
    for key, entry in summary["metrics"].items():
        lines.append(f"{LABELS[key]:<30}  {100 * entry['mean']:6.1f}  {entry['n']}")
    return "\n".join(lines)
