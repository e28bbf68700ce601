"""DORA's trajectory metrics, as its released ``evaluation.py`` computes them.

A trajectory is a list of steps ``{"call": tool, "args": {...}, "obs": ...}``. Steps that are
not objects or have no call are dropped, and so are ``tool.loop`` / ``tool.reduce`` wrappers
(the calls they expand to follow them). Tool names are compared after
:func:`~plancheck.dora.normalize.normalize_tool_name`. With ``G`` the gold names and ``P`` the
predicted ones:

* ``t_any`` -- share of the distinct gold tools that ``P`` calls at all;
* ``t_ord`` -- ``LCS(G, P) / |G|``;
* ``t_em``  -- longest common *prefix* ``/ |G|``;
* ``par_acc`` -- steps paired by *position*: a pair with the same tool earns the share of the
  gold step's arguments the predicted step matches (all of it when the gold step has none);
  the sum is divided by ``|G|`` (:func:`step_credit`). Numbers match within the scalar
  tolerance, paths by their role in the pipeline, a gold reference any non-null value;
* ``eff`` -- ``|G| / max(|P|, |G|)``.

With an empty gold trajectory every metric is 1 for an empty prediction and 0 otherwise.
"""

from __future__ import annotations

import json
import math
import posixpath
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from plancheck.dora.answers import TAU_A, TAU_R
from plancheck.dora.errors import DoraInputError
from plancheck.dora.normalize import normalize_text, normalize_tool_name
from plancheck.dora.paper_metrics import lcs_length  # the one LCS, compiled there

METRICS = ("t_any", "t_ord", "t_em", "par_acc", "eff")
WRAPPERS = frozenset({"tool.loop", "tool.reduce"})

# "<key> from trajectory[N].obs": a gold argument the agent fills in from an earlier result.
_TRAJECTORY_REFERENCE = re.compile(r"^<\w+>\s+from\s+trajectory\[\d+\]\.obs$")
_EXTENSION = re.compile(r"\.\w{1,6}$")
_PATH_PREFIXES = ("/", "D:", "C:", "./", "../", "~")
# Run-specific hash segments in generated file names ("mask_3fa9c2d1_flood.png").
_HASH_SEGMENT = re.compile(r"_[0-9a-f]{6,10}(?=_|$)")

Step = Mapping[str, Any]
OutputMap = dict[str, tuple[int, str]]


def flatten(trajectory: Iterable[Any]) -> list[Step]:
    """The steps that are calls: objects with a call that is not a loop/reduce wrapper."""
    steps: list[Step] = []
    for step in trajectory:
        if not isinstance(step, dict):
            continue
        call = step.get("call", "")
        if normalize_tool_name(call) in WRAPPERS:
            continue
        if call:
            steps.append(step)
    return steps


def tool_sequence(steps: Sequence[Step]) -> list[str]:
    names = (normalize_tool_name(step.get("call", "")) for step in steps)
    return [name for name in names if name]


def tool_any_order(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not gold:
        return 0.0 if pred else 1.0
    wanted = set(gold)
    return len(wanted & set(pred)) / len(wanted)


def tool_in_order(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not gold:
        return 0.0 if pred else 1.0
    return lcs_length(gold, pred) / len(gold)


def tool_exact_match(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not gold:
        return 0.0 if pred else 1.0
    prefix = 0
    for expected, got in zip(gold, pred, strict=False):
        if expected != got:
            break
        prefix += 1
    return prefix / len(gold)


def efficiency(pred: Sequence[str], gold: Sequence[str]) -> float:
    if not gold:
        return 0.0 if pred else 1.0
    return len(gold) / max(len(pred), len(gold))


def is_file_path(value: Any) -> bool:
    """DORA's heuristic: a separator and an extension, or a path-like start."""
    if not isinstance(value, str) or len(value) < 4:
        return False
    separated = "/" in value or "\\" in value
    return (separated and bool(_EXTENSION.search(value))) or value.startswith(_PATH_PREFIXES)


def _observations(step: Step) -> list[dict[str, Any]]:
    """The objects a step's ``obs`` holds: direct objects (gold), ``{"text": json}`` items and
    JSON strings (predictions); unreadable items are skipped."""
    found = []
    items = step.get("obs", [])
    for item in items if isinstance(items, list) else [items]:
        decoded: Any = None
        if isinstance(item, dict):
            text = item.get("text", "")
            decoded = _loads(text) if text else item
        elif isinstance(item, str):
            decoded = _loads(item)
        if isinstance(decoded, dict):
            found.append(decoded)
    return found


def _loads(text: Any) -> Any:
    try:
        return json.loads(text)
    except (ValueError, TypeError):
        return None


def output_map(steps: Sequence[Step]) -> OutputMap:
    """Each file path a step produced (in its observation, or as an ``output*`` argument)
    -> (step index, key); a later step producing the same path wins."""
    produced: OutputMap = {}
    for index, step in enumerate(steps):
        for observation in _observations(step):
            for key, value in observation.items():
                if is_file_path(str(value)):
                    produced[str(value)] = (index, key)
        args = step.get("args", {})
        if isinstance(args, dict):
            for key, value in args.items():
                if key.startswith("output") and is_file_path(str(value)):
                    produced[str(value)] = (index, key)
    return produced


def _canonical_stem(basename: str) -> str:
    name, extension = posixpath.splitext(basename)
    previous = None
    while previous != name:
        previous, name = name, _HASH_SEGMENT.sub("", name)
    return name + extension


class _Pairing:
    """The two flattened trajectories and what their steps produced, for path arguments."""

    def __init__(self, pred: Sequence[Step], gold: Sequence[Step]) -> None:
        self.pred, self.gold = pred, gold
        self.pred_outputs, self.gold_outputs = output_map(pred), output_map(gold)

    def _same_tool_at(self, index: int) -> bool:
        """Both trajectories have a step ``index`` and call the same tool there."""
        return index < min(len(self.pred), len(self.gold)) and normalize_tool_name(
            self.gold[index].get("call", "")
        ) == normalize_tool_name(self.pred[index].get("call", ""))

    def paths_match(self, gold: str, pred: str) -> bool:
        """Paths name the same *role*: equal; both raw inputs (produced by no step); both
        produced by the same step index; or one produced by a step whose tool is the same at
        that index in the other trajectory; else equal basenames or hash-free stems."""
        if normalize_text(pred) == normalize_text(gold):
            return True
        gold_source, pred_source = self.gold_outputs.get(gold), self.pred_outputs.get(pred)
        if gold_source is None and pred_source is None:
            return True
        if gold_source is not None and pred_source is not None:
            if gold_source[0] == pred_source[0]:
                return True
        elif gold_source is not None:
            if self._same_tool_at(gold_source[0]):
                return True
        elif pred_source is not None and self._same_tool_at(pred_source[0]):
            return True
        gold_base = posixpath.basename(gold.replace("\\", "/"))
        pred_base = posixpath.basename(pred.replace("\\", "/"))
        if gold_base and gold_base == pred_base:
            return True
        gold_stem = _canonical_stem(gold_base)
        return bool(gold_stem) and gold_stem == _canonical_stem(pred_base)

    def values_match(self, gold: Any, pred: Any) -> bool:
        """Numbers within the scalar tolerance; paths by role; other strings normalised;
        booleans by ``==``; lists and objects element by element (same length / keys)."""
        if isinstance(gold, str) and _TRAJECTORY_REFERENCE.match(gold):
            return pred is not None
        if isinstance(gold, (int, float)) and not isinstance(gold, bool):
            try:
                p, g = float(pred), float(gold)
            except (TypeError, ValueError):
                return False
            if math.isnan(p) and math.isnan(g):
                return True
            return abs(p - g) <= TAU_A + TAU_R * abs(g)
        if isinstance(gold, str):
            if is_file_path(gold) or is_file_path(str(pred)):
                return self.paths_match(gold, str(pred))
            return normalize_text(pred) == normalize_text(gold)
        if isinstance(gold, bool):
            return bool(pred == gold)
        if isinstance(gold, list):
            if not isinstance(pred, list) or len(pred) != len(gold):
                return False
            return all(self.values_match(g, p) for g, p in zip(gold, pred, strict=True))
        if isinstance(gold, dict):
            if not isinstance(pred, dict) or set(gold) != set(pred):
                return False
            return all(self.values_match(gold[k], pred[k]) for k in gold)
        return str(pred) == str(gold)


def _args(step: Step) -> dict[str, Any]:
    args = step.get("args", {})
    return args if isinstance(args, dict) else {}


def step_credit(pairing: _Pairing, index: int) -> float:
    """The credit of gold step ``index`` against the predicted step at the same index."""
    gold_step = pairing.gold[index]
    if index >= len(pairing.pred):
        return 0.0
    pred_step = pairing.pred[index]
    if normalize_tool_name(gold_step.get("call", "")) != normalize_tool_name(
        pred_step.get("call", "")
    ):
        return 0.0
    wanted, given = _args(gold_step), _args(pred_step)
    if not wanted:
        return 1.0
    hits = sum(1 for k, v in wanted.items() if k in given and pairing.values_match(v, given[k]))
    return hits / len(wanted)


def parameter_accuracy(pred: Sequence[Step], gold: Sequence[Step]) -> float:
    """Over flattened trajectories: the mean of :func:`step_credit` over gold steps."""
    if not gold:
        return 0.0 if pred else 1.0
    pairing = _Pairing(pred, gold)
    total = 0.0
    for index in range(len(gold)):
        total += step_credit(pairing, index)
    return total / len(gold)


def trajectory_metrics(pred: Any, gold: Any) -> dict[str, float]:
    """DORA's five trajectory metrics of ``pred`` against ``gold`` (lists of steps).

    Raises :class:`DoraInputError` where DORA's evaluator raises (a trajectory that is not a
    list, a call that is not a string, ...)."""
    try:
        pred_steps, gold_steps = flatten(pred), flatten(gold)
        pred_names, gold_names = tool_sequence(pred_steps), tool_sequence(gold_steps)
        return {
            "t_any": tool_any_order(pred_names, gold_names),
            "t_ord": tool_in_order(pred_names, gold_names),
            "t_em": tool_exact_match(pred_names, gold_names),
            "par_acc": parameter_accuracy(pred_steps, gold_steps),
            "eff": efficiency(pred_names, gold_names),
        }
    except (TypeError, ValueError, AttributeError, OverflowError, RecursionError) as error:
        raise DoraInputError(f"DORA cannot score this trajectory: {error}") from error
