"""The model-free planner: text matching for the tools, types for the wiring, Z3 for the gaps.

1. Extract the file paths the task text mentions, each with the words just before it.
2. Rank the tools by TF-IDF similarity between the task text and the toolset's own
   descriptions (:mod:`plancheck.planners.textmatch`).
3. Give every path to the tool input it describes best (path and context words against the
   input's name and doc, weighted by the tool's rank), if the path's extension can hold the
   input's type. Several paths given to one input make several calls of that tool.
4. Add highly ranked tools that take no path but can consume a chosen tool's result.
5. Wire every input that got no path: the result of an earlier call of a compatible type
   (declared flows first, then the latest call); else a workflow from the paths synthesised
   by Z3 (:func:`plancheck.smt.synthesis.synthesize`); else the path that fits it best.
6. Order the calls by their data flow, then by where the text mentions them, and make the
   plan check clean with the minimum-edit repair (Z3) if anything is still off.

Nothing here reads gold plans or knows a task; every number below is a property of this
method, the same for every task.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass, field
from typing import Any

from plancheck.ir.nodes import Param, Toolset, ToolSignature
from plancheck.ir.references import format_reference, reference_parts
from plancheck.planners.base import PlanningTask, PlanResult
from plancheck.planners.textmatch import TfIdf, tokens

_PATH = re.compile(
    r"""(?<![\w/.-])((?:~|\.{1,2})?/?(?:[\w.\-]+/)*[\w.\-]*\w\.[A-Za-z0-9]{1,6})(?![\w/])""")
CONTEXT_WORDS = 14
TOOL_WEIGHT = 0.6  # how much the tool's rank counts when a path picks an input
EXTRA_TOOL_SHARE = 0.75  # a tool with no path joins when it ranks this close to the best one
MAX_SYNTH_STEPS = 3
CLOSE_ENOUGH = 0.85  # a path fills an open input of a chosen call within this share of its best


@dataclass(frozen=True, slots=True)
class Mention:
    path: str
    start: int
    context: list[str]


@dataclass(slots=True)
class _Call:
    tool: ToolSignature
    order: float  # where the text mentions it
    paths: dict[str, str] = field(default_factory=dict)
    sources: dict[str, tuple[_Call, str]] = field(default_factory=dict)


def extract_paths(text: str) -> list[Mention]:
    found: list[Mention] = []
    seen: set[str] = set()
    for match in _PATH.finditer(text):
        path = match.group(1).rstrip(".")
        if "/" not in path and not re.search(r"\.[A-Za-z]{2,5}$", path):
            continue
        if path in seen or re.fullmatch(r"[\d.]+", path):
            continue
        seen.add(path)
        before = tokens(text[max(0, match.start() - 200): match.start()])[-CONTEXT_WORDS:]
        found.append(Mention(path, match.start(), before))
    return found


class SolverPlanner:
    """Plans without a model: see the module docstring."""

    name = "solver"

    def __init__(self, toolset: Toolset | None = None, **options: Any) -> None:
        if toolset is None:
            from plancheck.corpus.builtin import builtin_toolset

            toolset = builtin_toolset()
        self.toolset = toolset
        self.timeout_ms = int(options.get("timeout_ms", 3000))
        self.tools = [toolset.tools[n] for n in sorted(toolset.tools)]
        documents = {t.name: self._tool_words(t) for t in self.tools}
        params = {(t.name, p.name): self._param_words(t, p) for t in self.tools for p in t.inputs}
        self.idf = TfIdf([*documents.values(), *params.values()])
        self.tool_vectors = {n: self.idf.vector(w) for n, w in documents.items()}
        self.param_vectors = {k: self.idf.vector(w) for k, w in params.items()}

    @staticmethod
    def _tool_words(tool: ToolSignature) -> list[str]:
        words = tokens(tool.name) * 3 + tokens(tool.category) * 2 + tokens(tool.description)
        for param in (*tool.inputs, *tool.outputs):
            words += tokens(param.name) + tokens(param.doc)
        return words

    @staticmethod
    def _param_words(tool: ToolSignature, param: Param) -> list[str]:
        return tokens(param.name) * 2 + tokens(param.doc) + tokens(param.type) + tokens(tool.name)

    # ------------------------------------------------------------------ planning

    def plan(self, task: PlanningTask) -> PlanResult:
        started = time.perf_counter()
        try:
            steps, details = self._plan(task.task_desc)
            completion: str | None = json.dumps(steps, ensure_ascii=False)
            error = None
        except Exception as failure:  # a planner failure is recorded, never raised
            completion, details = None, {}
            error = f"{type(failure).__name__}: {failure}"
        return PlanResult(task.task_id, self.name, completion, calls=0,
                          latency_s=time.perf_counter() - started, error=error, details=details)

    def rank_tools(self, text: str) -> dict[str, float]:
        vector = self.idf.vector(tokens(_PATH.sub(" ", text)))
        return {name: vector.cosine(v) for name, v in self.tool_vectors.items()}

    def _plan(self, text: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        ranks = self.rank_tools(text)
        best = max(ranks.values(), default=0.0) or 1.0
        mentions = extract_paths(text)
        calls = self._calls_for_paths(mentions, ranks, best)
        self._add_consumers(calls, ranks, best, text)
        if not calls:
            top = max(self.tools, key=lambda t: (ranks[t.name], t.name))
            calls.append(_Call(top, 0.0))
        for call in sorted(calls, key=lambda c: c.order):
            self._wire(call, calls, mentions, ranks)
        ordered = _topological(calls)
        steps = _to_json(ordered)
        steps, repaired = self._make_clean(steps)
        details = {"paths": [m.path for m in mentions],
                   "tools": [c.tool.name for c in ordered], "repaired": repaired}
        return steps, details

    def _calls_for_paths(self, mentions: list[Mention], ranks: dict[str, float], best: float
                         ) -> list[_Call]:
        lattice = self.toolset.lattice
        from plancheck.typecheck.types import literal_extension

        calls: list[_Call] = []
        for mention in mentions:
            context = self.idf.vector(tokens(mention.path) * 2 + mention.context)
            extension = literal_extension(mention.path)
            scored = []
            for tool in self.tools:
                for param in tool.inputs:
                    fits = lattice.literal_fits(extension, param.type) if extension else None
                    if fits is False:
                        continue
                    score = context.cosine(self.param_vectors[(tool.name, param.name)]) + \
                        TOOL_WEIGHT * ranks[tool.name] / best
                    scored.append((score, tool.name, param.name))
            if not scored:
                continue
            scored.sort(reverse=True)
            top = scored[0][0]
            # Fill a gap of a call already made when that is nearly as good a reading of the
            # path as the best one; a second call of a tool needs the best reading.
            target, param_name = None, scored[0][2]
            for score, tool_name, name in scored:
                if score < CLOSE_ENOUGH * top:
                    break
                gap = next((c for c in calls if c.tool.name == tool_name and name not in c.paths),
                           None)
                if gap is not None:
                    target, param_name = gap, name
                    break
            if target is None:
                target = _Call(self.toolset.tools[scored[0][1]], mention.start)
                calls.append(target)
            target.paths[param_name] = mention.path
        return calls

    def _add_consumers(self, calls: list[_Call], ranks: dict[str, float], best: float,
                       text: str) -> None:
        """Tools that rank high but got no path join when they can read a chosen result."""
        chosen = {c.tool.name for c in calls}
        for tool in sorted(self.tools, key=lambda t: -ranks[t.name]):
            if tool.name in chosen or ranks[tool.name] < EXTRA_TOOL_SHARE * best:
                continue
            feeds = any(_fits_any(c.tool, p, self.toolset) for c in calls
                        for p in tool.inputs if p.required)
            if feeds:
                calls.append(_Call(tool, _first_mention(text, tool)))
                chosen.add(tool.name)

    def _wire(self, call: _Call, calls: list[_Call], mentions: list[Mention],
              ranks: dict[str, float]) -> None:
        for param in call.tool.inputs:
            if not param.required or param.name in call.paths or param.name in call.sources:
                continue
            producer = self._producer(call, param, calls)
            if producer is not None:
                call.sources[param.name] = producer
                continue
            bridged = self._bridge(call, param, calls, mentions)
            if bridged is not None:
                call.sources[param.name] = bridged
                continue
            path = self._closest_path(param, call.tool, mentions)
            if path is not None:
                call.paths[param.name] = path

    def _producer(self, call: _Call, param: Param, calls: list[_Call]
                  ) -> tuple[_Call, str] | None:
        options = []
        for other in calls:
            if other is call or _reads(other, call):
                continue
            for output in other.tool.outputs:
                if self.toolset.lattice.compat(output, param.type).value != "ok":
                    continue
                declared = (other.tool.name, call.tool.name) in self.toolset.flows
                earlier = other.order <= call.order
                options.append(((declared, earlier, other.order if earlier else -other.order),
                                other, output.name))
        if not options:
            return None
        options.sort(key=lambda o: o[0], reverse=True)
        _, other, key = options[0]
        # The limit on predecessors: read from a call this one already reads, if any.
        limit = self.toolset.max_predecessors
        current = {id(c) for c, _k in call.sources.values()}
        if limit is not None and len(current | {id(other)}) > limit:
            same = [o for o in options if id(o[1]) in current]
            if not same:
                return None
            _, other, key = same[0]
        return other, key

    def _bridge(self, call: _Call, param: Param, calls: list[_Call], mentions: list[Mention]
                ) -> tuple[_Call, str] | None:
        """Z3 synthesis: a short workflow from the mentioned paths to this input's type."""
        from plancheck.smt.repair import SolverTimeout
        from plancheck.smt.synthesis import SynthesisError, TypedInput, synthesize

        inputs = [TypedInput(m.path) for m in mentions]
        if not inputs:
            return None
        try:
            found = next(iter(synthesize(inputs, param.type, self.toolset,
                                         max_steps=MAX_SYNTH_STEPS, limit=1,
                                         timeout_ms=self.timeout_ms)), None)
        except (SynthesisError, SolverTimeout):
            return None
        if not found:
            return None
        made: list[_Call] = []
        for step in found:
            tool = self.toolset.tools[step["agent"]]
            new = _Call(tool, call.order - 0.5 + len(made) * 0.01)
            for key, value in step["inputs"].items():
                parts = reference_parts(value)
                if parts is not None:
                    new.sources[key] = (made[parts[0]], parts[1])
                else:
                    new.paths[key] = value
            made.append(new)
        calls.extend(made)
        last = made[-1]
        output = next(o for o in last.tool.outputs
                      if self.toolset.lattice.compat(o, param.type).value == "ok")
        return last, output.name

    def _closest_path(self, param: Param, tool: ToolSignature, mentions: list[Mention]
                      ) -> str | None:
        from plancheck.typecheck.types import literal_extension

        vector = self.param_vectors[(tool.name, param.name)]
        scored = []
        for mention in mentions:
            extension = literal_extension(mention.path)
            if extension and self.toolset.lattice.literal_fits(extension, param.type) is False:
                continue
            context = self.idf.vector(tokens(mention.path) * 2 + mention.context)
            scored.append((context.cosine(vector), -mention.start, mention.path))
        return max(scored)[2] if scored else None

    def _make_clean(self, steps: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], bool]:
        from plancheck.api import check

        report = check(steps, self.toolset, name="<solver>")
        if report.ok or report.plan is None:
            return steps, False
        from plancheck.smt.explain import repair_plan

        result = repair_plan(report.plan, self.toolset, timeout_ms=self.timeout_ms)
        if result.ok and result.plan is not None:
            return result.plan, True
        return steps, False


def _fits_any(producer: ToolSignature, param: Param, toolset: Toolset) -> bool:
    return any(toolset.lattice.compat(o, param.type).value == "ok" for o in producer.outputs)


def _reads(call: _Call, target: _Call) -> bool:
    """Does ``call`` read ``target``'s results, directly or through other calls?"""
    stack = [c for c, _k in call.sources.values()]
    seen: set[int] = set()
    while stack:
        current = stack.pop()
        if current is target:
            return True
        if id(current) in seen:
            continue
        seen.add(id(current))
        stack.extend(c for c, _k in current.sources.values())
    return False


def _first_mention(text: str, tool: ToolSignature) -> float:
    words = set(tokens(tool.name)) | set(tokens(tool.category))
    lowered = tokens(text)
    for index, word in enumerate(lowered):
        if word in words:
            return index * len(text) / max(len(lowered), 1)
    return float(len(text))


def _topological(calls: list[_Call]) -> list[_Call]:
    ordered: list[_Call] = []
    placed: set[int] = set()
    pending = sorted(calls, key=lambda c: c.order)
    while pending:
        ready = next((c for c in pending
                      if all(id(s) in placed for s, _k in c.sources.values())), pending[0])
        ordered.append(ready)
        placed.add(id(ready))
        pending.remove(ready)
    return ordered


def _to_json(calls: list[_Call]) -> list[dict[str, Any]]:
    position = {id(c): i for i, c in enumerate(calls)}
    steps = []
    for i, call in enumerate(calls):
        inputs: dict[str, Any] = {}
        content: dict[str, list[str]] = {}
        for param in call.tool.inputs:
            if param.name in call.paths:
                inputs[param.name] = call.paths[param.name]
            elif param.name in call.sources:
                producer, key = call.sources[param.name]
                number = position[id(producer)]
                inputs[param.name] = format_reference(number, key)
                keys = content.setdefault(str(number), [])
                if key not in keys:
                    keys.append(key)
        steps.append({
            "agent": call.tool.name,
            "step": i,
            "dependence": sorted(int(k) for k in content) or [-1],
            "dependence_content": content or None,
            "inputs": inputs,
            "outputs": list(call.tool.output_names),
        })
    return steps


