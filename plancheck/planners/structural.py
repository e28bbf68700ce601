"""The paper's four structural baselines: planners that use no language model (Appendix K).

They isolate how far the workflow graph alone gets: each is handed more structure than a model
ever sees (the gold plan's length, and for two of them the gold tools), and each fills the
inputs it cannot know with invented paths. The paper reports 0% exact match for all four.

* ``shortest_path``: the shortest tool chain over the workflow graph from the gold plan's first
  tool to its last, padded with random successors (or cut) to the gold length;
* ``oracle_random``: the gold plan itself with every user-supplied input replaced by a random
  path (references to earlier steps are kept);
* ``dag_greedy_tfidf``: at each step the tool most similar to the task text (cosine of word
  counts against the tool's description) among the graph successors of the previous tool, for
  as many steps as the gold plan has;
* ``dag_beam_tfidf``: the same scoring with a beam search (width 3, 8 candidates per step,
  limited to the 15 tools most similar to the task).

Every step after the first depends on the previous one and each of its inputs is, by a coin
flip, a reference to a random output of that step or a random path. Randomness is seeded per
task (``seed`` and the task id), so results do not depend on the order or concurrency in which
tasks run (the reference draws from one stream across all tasks in file order).
"""

from __future__ import annotations

import json
import math
import random
import re
import time
from collections import deque
from collections.abc import Iterable
from typing import Any

from plancheck.ir.nodes import Toolset
from plancheck.ir.references import format_reference
from plancheck.planners.base import PlanningTask, PlanResult
from plancheck.planners.postprocess import LENIENT_REFERENCE_RE
from plancheck.planners.prompts import manifest

STRUCTURAL_METHODS = ("shortest_path", "oracle_random", "dag_greedy_tfidf", "dag_beam_tfidf")
_WORD_RE = re.compile(r"[A-Za-z0-9_]+")


def _word_counts(text: str) -> dict[str, float]:
    counts: dict[str, float] = {}
    for word in _WORD_RE.findall(text.lower()):
        counts[word] = counts.get(word, 0.0) + 1.0
    return counts


def _cosine(a: dict[str, float], b: dict[str, float]) -> float:
    if not a or not b:
        return 0.0
    dot = sum(v * b[k] for k, v in a.items() if k in b)
    norm = math.sqrt(sum(v * v for v in a.values())) * math.sqrt(sum(v * v for v in b.values()))
    return dot / norm if norm > 0 else 0.0


class StructuralPlanner:
    """One of the four structural baselines. ``gold`` maps task ids (as strings) to gold plans:
    these baselines are oracles by design (the runner reads the gold plans from the tasks file)."""

    def __init__(self, kind: str, toolset: Toolset, gold: dict[str, list[Any]], *,
                 seed: int = 42, beam_width: int = 3, topk_per_step: int = 8,
                 global_topk: int | None = 15) -> None:
        if kind not in STRUCTURAL_METHODS:
            raise ValueError(f"unknown structural baseline {kind!r}")
        self.name = kind
        self.toolset = toolset
        self.gold = gold
        self.seed = seed
        self.beam_width = max(1, beam_width)
        self.topk_per_step = max(1, topk_per_step)
        self.global_topk = global_topk if global_topk and global_topk > 0 else None
        self.manifest = manifest(toolset)
        self.agents = sorted(toolset.tools)
        self.successors: dict[str, list[str]] = {a: [] for a in self.agents}
        predecessors: dict[str, set[str]] = {a: set() for a in self.agents}
        for source, target in sorted(toolset.flows):
            if source in self.successors and target in predecessors:
                self.successors[source].append(target)
                predecessors[target].add(source)
        self.starts = [a for a in self.agents if not predecessors[a]] or list(self.agents)
        self.vectors = {name: _word_counts(json.dumps(spec, ensure_ascii=False))
                        for name, spec in self.manifest.items()}

    def hyperparameters(self) -> dict[str, Any]:
        return {"seed": self.seed, "beam_width": self.beam_width,
                "topk_per_step": self.topk_per_step, "global_topk": self.global_topk}

    def plan(self, task: PlanningTask) -> PlanResult:
        started = time.monotonic()
        result = PlanResult(task.task_id, self.name, None)
        gold = self.gold.get(str(task.task_id))
        if not gold:
            result.error = f"the {self.name} baseline needs the gold plan of task {task.task_id}"
            return result
        rng = random.Random(f"{self.seed}:{task.task_id}")
        gold_steps = [s for s in gold if isinstance(s, dict)]
        if self.name == "oracle_random":
            plan = self._oracle_random(gold_steps, rng)
        elif self.name == "shortest_path":
            plan = self._chain_plan(self._shortest_path_chain(gold_steps, rng), rng)
        elif self.name == "dag_greedy_tfidf":
            plan = self._chain_plan(self._greedy_chain(task.task_desc, len(gold_steps)), rng)
        else:
            plan = self._chain_plan(self._beam_chain(task.task_desc, len(gold_steps), rng), rng)
        result.completion = json.dumps(plan, ensure_ascii=False)
        result.latency_s = round(time.monotonic() - started, 6)
        result.cost_usd = 0.0
        return result

    # -- plans from chains -----------------------------------------------------------------

    def _chain_plan(self, chain: list[str], rng: random.Random) -> list[dict[str, Any]]:
        plan: list[dict[str, Any]] = []
        previous: str | None = None
        for index, agent in enumerate(chain):
            spec = self.manifest.get(agent, {})
            inputs: dict[str, Any] = {}
            if index == 0:
                dependence: list[int] = [-1]
                content: dict[str, list[str]] | None = None
                for key in spec.get("input", {}):
                    inputs[key] = f"/tmp/greedy_rand_{rng.randint(0, 10**6)}_{key}.dat"
            else:
                dependence = [index - 1]
                produced = list(self.manifest.get(previous or "", {}).get("output", {})) \
                    or ["output_path"]
                content = {str(index - 1): produced}
                for key in spec.get("input", {}):
                    if rng.random() < 0.5:
                        inputs[key] = format_reference(index - 1, rng.choice(produced))
                    else:
                        inputs[key] = f"/tmp/greedy_rand_{rng.randint(0, 10**6)}_{key}.dat"
            plan.append({"agent": agent, "step": index, "dependence": dependence,
                         "dependence_content": content, "inputs": inputs,
                         "outputs": list(spec.get("output", {}))})
            previous = agent
        return plan

    @staticmethod
    def _oracle_random(gold: list[dict[str, Any]], rng: random.Random) -> list[dict[str, Any]]:
        plan: list[dict[str, Any]] = json.loads(json.dumps(gold, ensure_ascii=False))
        for step in plan:
            inputs = step.get("inputs")
            if not isinstance(inputs, dict):
                continue
            step["inputs"] = {
                key: value if isinstance(value, str) and LENIENT_REFERENCE_RE.match(value.strip())
                else f"/tmp/rand_{rng.randint(0, 10**9)}_{key}.dat"
                for key, value in inputs.items()
            }
        return plan

    # -- chains of tools -------------------------------------------------------------------

    def _score(self, task_desc: str) -> dict[str, float]:
        task = _word_counts(task_desc)
        return {agent: _cosine(task, self.vectors.get(agent, {})) for agent in self.agents}

    def _greedy_chain(self, task_desc: str, length: int) -> list[str]:
        scores = self._score(task_desc)
        chain: list[str] = []
        for index in range(length):
            candidates: Iterable[str] = (
                self.starts if index == 0 else (self.successors.get(chain[-1]) or self.agents)
            )
            chain.append(max(candidates, key=lambda a: (scores[a], a)))
        return chain

    def _beam_chain(self, task_desc: str, length: int, rng: random.Random) -> list[str]:
        if length <= 0:
            return []
        scores = self._score(task_desc)
        allowed = set(self.agents)
        if self.global_topk is not None:
            top = sorted(self.agents, key=lambda a: (scores[a], a), reverse=True)
            allowed = set(top[: self.global_topk]) | set(self.starts)

        def best_of(pool: Iterable[str]) -> list[str]:
            return sorted(pool, key=lambda a: (scores[a], a), reverse=True)[: self.topk_per_step]

        first = [a for a in self.starts if a in allowed] or sorted(allowed)
        beam = [(scores[a], [a]) for a in best_of(first)[: self.beam_width]]
        for _ in range(1, length):
            grown: list[tuple[float, list[str]]] = []
            for total, chain in beam:
                pool = [a for a in self.successors.get(chain[-1], []) if a in allowed]
                for agent in best_of(pool or allowed):
                    grown.append((total + scores[agent], [*chain, agent]))
            if not grown:
                break
            # Random tie-breaking among equal scores, seeded, as in the reference.
            keyed = [(total, rng.random(), chain) for total, chain in grown]
            keyed.sort(key=lambda item: (item[0], item[1]), reverse=True)
            beam = [(total, chain) for total, _, chain in keyed[: self.beam_width]]
        return beam[0][1] if beam else [rng.choice(self.agents)]

    def _shortest_path_chain(self, gold: list[dict[str, Any]], rng: random.Random
                             ) -> list[str]:
        length = len(gold)
        if length == 0:
            return []
        first, last = gold[0].get("agent"), gold[-1].get("agent")
        if not isinstance(first, str) or not isinstance(last, str):
            return []
        chain = self._bfs(first, last)
        while len(chain) < length:
            following = self.successors.get(chain[-1]) or self.agents
            chain.append(rng.choice(following))
        return chain[:length]

    def _bfs(self, first: str, last: str) -> list[str]:
        if first not in self.successors or last not in self.successors:
            return [first, last]
        if first == last:
            return [first]
        parent: dict[str, str | None] = {first: None}
        queue = deque([first])
        while queue:
            node = queue.popleft()
            if node == last:
                break
            for nxt in self.successors[node]:  # sorted: ties resolve the same way every run
                if nxt not in parent:
                    parent[nxt] = node
                    queue.append(nxt)
        if last not in parent:
            return [first, last]
        path: list[str] = []
        cursor: str | None = last
        while cursor is not None:
            path.append(cursor)
            cursor = parent[cursor]
        return path[::-1]
