"""DORA's trajectory metrics, as pure functions over sequences of tool calls.

A *call* is a pair ``(tool, arguments)`` (a :class:`ToolCall` or any 2-tuple); a trajectory is a
sequence of calls in the order they were made. ``gold`` is DORA's T*, ``pred`` its T^pred. All
metrics lie in [0, 1]. The definitions follow the DORA paper, section 4 ("Evaluation Protocol"),
which takes the four trajectory measures from Earth-Agent (its reference [6]):

* **Tool-Any-Order** -- "order-agnostic tool-set recall": the share of the distinct tools of
  the gold trajectory that the prediction calls at all, ``|tools(G) & tools(P)| / |tools(G)|``.
* **Tool-In-Order** -- "longest common subsequence of tool identifiers, normalized by |T*|":
  ``LCS(names(G), names(P)) / |G|``.
* **Tool-Exact-Match** -- "longest matching prefix length, normalized by |T*|": the number of
  leading calls whose tools agree, ``/ |G|``.
* **Parameter Accuracy** -- "per-step argument matching, conditioned on correct tool names".
  The paper gives no formula; plancheck's reading: gold and predicted calls are paired by the
  tool-name LCS alignment (the calls whose tool names are correct, in order); a pair counts when
  its arguments are equal; the count is normalized by ``|G|`` (``conditional=True`` normalizes
  by the number of pairs instead). Normalizing by ``|G|`` keeps Parameter Accuracy <=
  Tool-In-Order, as every row of the paper's Table 4 has it. Arguments are equal when they have
  the same keys and equal values (JSON equality: ``1 == 1.0``, ``true != 1``); a reference to an
  earlier result equals another when it names the same output key of *paired* calls, so a
  prediction that inserts a step is not penalised again for the shifted step numbers. Among the
  maximal alignments, the one pairing the most argument-equal calls is used.
* **Efficiency** -- ``Eff = |T*| / max(|T^pred|, |T*|)`` (same section, item 3): 1 unless the
  prediction makes more calls than the gold trajectory.

Conventions for an empty gold trajectory (the paper leaves them open): the recall-like metrics
are 1 (nothing was missed), Efficiency is 1 for an empty prediction and 0 otherwise.

References are recognised in DORA's spelling (``"<key> from trajectory[N].obs"``, see
:mod:`plancheck.dora.references`) and in DisasterBench's (``<GENERATED>-N-<key>``); pass
``reference=`` to recognise others. :func:`calls_from_steps` turns a DisasterBench plan into
calls, so these metrics apply to DisasterBench predictions too.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, NamedTuple

METRICS = (
    "tool_any_order",
    "tool_in_order",
    "tool_exact_match",
    "parameter_accuracy",
    "efficiency",
)


class ToolCall(NamedTuple):
    tool: str
    arguments: Mapping[str, Any]


Call = ToolCall | tuple[str, Mapping[str, Any]]
# A recogniser of references: the (step, key) a value stands for, or None for a plain value.
ReferenceReader = Callable[[Any], tuple[int, str] | None]


def default_reference(value: Any) -> tuple[int, str] | None:
    """``(step, key)`` for a DORA or a DisasterBench reference string, else ``None``."""
    if not isinstance(value, str):
        return None
    # Every argument value is read once per pair of calls compared, and a batch compares the
    # same gold values thousands of times: each string is read once (the reading depends on
    # the string alone, and its result is immutable).
    try:
        return _READ[value]
    except KeyError:
        pass
    if len(_READ) >= 4096:
        _READ.clear()
    found = _READ[value] = _read_reference(value)
    return found


_READ: dict[str, tuple[int, str] | None] = {}


def clear_caches() -> None:
    """Forget how strings read (for benchmarks that must start cold in one process)."""
    _READ.clear()


def _read_reference(value: str) -> tuple[int, str] | None:
    if value.startswith("<GENERATED>"):
        from plancheck.ir.references import REFERENCE_RE

        match = REFERENCE_RE.match(value)
        return (int(match.group(1)), match.group(2)) if match else None
    if "trajectory" in value.lower():
        from plancheck.dora.references import TrajectoryReference, parse_reference

        parsed = parse_reference(value)
        if isinstance(parsed, TrajectoryReference) and parsed.key is not None:
            return parsed.step, parsed.key
    return None


def _tools(calls: Sequence[Call]) -> list[str]:
    return [call[0] for call in calls]


def tool_any_order(pred: Sequence[Call], gold: Sequence[Call]) -> float:
    """Share of the gold trajectory's distinct tools that the prediction calls."""
    wanted = set(_tools(gold))
    if not wanted:
        return 1.0
    return len(wanted & set(_tools(pred))) / len(wanted)


def lcs_length(a: Sequence[str], b: Sequence[str]) -> int:
    """The length of a longest common subsequence of two name sequences."""
    previous = [0] * (len(b) + 1)
    for x in a:
        current = [0]
        for j, y in enumerate(b):
            current.append(previous[j] + 1 if x == y else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def tool_in_order(pred: Sequence[Call], gold: Sequence[Call]) -> float:
    """LCS of the tool-name sequences over the gold trajectory's length."""
    if not gold:
        return 1.0
    return lcs_length(_tools(gold), _tools(pred)) / len(gold)


def tool_exact_match(pred: Sequence[Call], gold: Sequence[Call]) -> float:
    """Length of the longest common prefix of tool names over the gold trajectory's length."""
    if not gold:
        return 1.0
    prefix = 0
    for (predicted, *_), (expected, *_) in zip(pred, gold, strict=False):
        if predicted != expected:
            break
        prefix += 1
    return prefix / len(gold)


def efficiency(pred: Sequence[Call], gold: Sequence[Call]) -> float:
    """``|gold| / max(|pred|, |gold|)``: 1 unless the prediction makes extra calls."""
    longest = max(len(pred), len(gold))
    return 1.0 if longest == 0 else len(gold) / longest


# --------------------------------------------------------------------------- parameters


def alignment(
    pred: Sequence[Call], gold: Sequence[Call], reference: ReferenceReader = default_reference
) -> list[tuple[int, int]]:
    """Pairs ``(gold index, pred index)`` of calls with equal tool names, in order: a maximal
    such pairing (an LCS), and among those one with the most pairs whose arguments agree when
    references are compared by key only (their step numbers depend on the pairing itself)."""
    n, m = len(gold), len(pred)
    # best[i][j]: (pairs, argument-agreeing pairs) for gold[i:] and pred[j:]
    best = [[(0, 0)] * (m + 1) for _ in range(n + 1)]
    agreeing_pairs: dict[tuple[int, int], bool] = {}  # (i, j) -> arguments agree; asked twice
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            options = [best[i + 1][j], best[i][j + 1]]
            if gold[i][0] == pred[j][0]:
                agree = agreeing_pairs[(i, j)] = _arguments_equal(
                    pred[j][1], gold[i][1], None, reference
                )
                count, agreeing = best[i + 1][j + 1]
                options.append((count + 1, agreeing + int(agree)))
            best[i][j] = max(options)
    pairs: list[tuple[int, int]] = []
    i = j = 0
    while i < n and j < m:
        if gold[i][0] == pred[j][0]:
            agree = agreeing_pairs[(i, j)]
            after = best[i + 1][j + 1]
            if best[i][j] == (after[0] + 1, after[1] + int(agree)):
                pairs.append((i, j))
                i, j = i + 1, j + 1
                continue
        if best[i][j] == best[i + 1][j]:
            i += 1
        else:
            j += 1
    return pairs


def parameter_accuracy(
    pred: Sequence[Call],
    gold: Sequence[Call],
    *,
    conditional: bool = False,
    reference: ReferenceReader = default_reference,
) -> float:
    """Share of gold calls paired with a predicted call of the same tool and equal arguments
    (see the module docstring); ``conditional=True`` divides by the pairs instead of ``|gold|``.
    """
    pairs = alignment(pred, gold, reference)
    paired = {j: i for i, j in pairs}  # pred index -> gold index
    correct = sum(
        1 for i, j in pairs if _arguments_equal(pred[j][1], gold[i][1], paired, reference)
    )
    total = len(pairs) if conditional else len(gold)
    return 1.0 if total == 0 else correct / total


def _arguments_equal(
    pred: Mapping[str, Any],
    gold: Mapping[str, Any],
    paired: Mapping[int, int] | None,
    reference: ReferenceReader,
) -> bool:
    # (dict first: the ABC check costs more than the comparison it guards)
    if not (type(pred) is dict or isinstance(pred, Mapping)) or not (
        type(gold) is dict or isinstance(gold, Mapping)
    ):
        return _values_equal(pred, gold, paired, reference)
    return pred.keys() == gold.keys() and all(
        _values_equal(pred[k], gold[k], paired, reference) for k in gold
    )


def _values_equal(
    pred: Any, gold: Any, paired: Mapping[int, int] | None, reference: ReferenceReader
) -> bool:
    """JSON equality, with references compared through the pairing (by key alone when
    ``paired`` is None)."""
    gold_ref, pred_ref = reference(gold), reference(pred)
    if gold_ref is not None or pred_ref is not None:
        if gold_ref is None or pred_ref is None or gold_ref[1] != pred_ref[1]:
            return False
        return paired is None or paired.get(pred_ref[0]) == gold_ref[0]
    if isinstance(gold, bool) or isinstance(pred, bool):
        return isinstance(gold, bool) and isinstance(pred, bool) and gold == pred
    if isinstance(gold, (int, float)) and isinstance(pred, (int, float)):
        return gold == pred
    if isinstance(gold, list) and isinstance(pred, list):
        return len(gold) == len(pred) and all(
            _values_equal(p, g, paired, reference) for p, g in zip(pred, gold, strict=True)
        )
    if isinstance(gold, dict) and isinstance(pred, dict):
        return _arguments_equal(pred, gold, paired, reference)
    return type(gold) is type(pred) and bool(gold == pred)


# --------------------------------------------------------------------------- all together


def trajectory_metrics(
    pred: Sequence[Call], gold: Sequence[Call], *, reference: ReferenceReader = default_reference
) -> dict[str, float]:
    """All five metrics, keyed by the names in :data:`METRICS`."""
    return {
        "tool_any_order": tool_any_order(pred, gold),
        "tool_in_order": tool_in_order(pred, gold),
        "tool_exact_match": tool_exact_match(pred, gold),
        "parameter_accuracy": parameter_accuracy(pred, gold, reference=reference),
        "efficiency": efficiency(pred, gold),
    }


def mean_metrics(results: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The per-metric mean over many trajectories (how DORA's Table 4 reports them)."""
    rows = list(results)
    if not rows:
        return dict.fromkeys(METRICS, 0.0)
    return {name: sum(row[name] for row in rows) / len(rows) for name in METRICS}


def calls_from_steps(steps: Iterable[Any]) -> list[ToolCall]:
    """The calls of a DisasterBench plan (``agent`` and ``inputs`` of each step object);
    steps that are not objects are skipped, a missing tool is ``""``."""
    calls = []
    for step in steps:
        if not isinstance(step, Mapping):
            continue
        tool = step.get("agent", step.get("agent_name", ""))
        inputs = step.get("inputs", step.get("input", {}))
        calls.append(
            ToolCall(
                tool if isinstance(tool, str) else "", inputs if isinstance(inputs, Mapping) else {}
            )
        )
    return calls
