"""Monte Carlo tree search as RAP uses it (Hao et al., 2023; the paper's Appendix B.4).

Selection is UCT with a prior: a child never visited scores its own reward plus the exploration
bonus ``w_exp * sqrt(log N(parent))``; a visited child scores its aggregate plus
``w_exp * sqrt(log N(parent) / N(child))``, where the aggregate is the best (``"max"``) or mean
(``"mean"``) of the values backed up through it. Back-propagation walks the path from the leaf
up, accumulating rewards (discounted) and dividing by the path length so far (``"mean"``
aggregation) before adding the value to each node. The answer is the visited terminal node with
the best mean reward along its path.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import Generic, Protocol, TypeVar


class Node(Protocol):
    """What the search needs from a node (identity hashing: nodes are distinct objects)."""

    def find_children(self) -> Sequence[Node]:
        """The children, computed on first call (this is where the model is asked)."""
        ...

    @property
    def is_terminal(self) -> bool: ...

    @property
    def reward(self) -> float: ...

    @property
    def visited(self) -> bool: ...


N = TypeVar("N", bound=Node)


class MCTS(Generic[N]):
    def __init__(self, *, w_exp: float = 1.0, discount: float = 1.0, prior: bool = True,
                 aggr_reward: str = "mean", aggr_child: str = "max",
                 rng: random.Random | None = None) -> None:
        if aggr_reward not in ("mean", "sum") or aggr_child not in ("max", "mean"):
            raise ValueError("aggr_reward is 'mean' or 'sum'; aggr_child is 'max' or 'mean'")
        self.w_exp = w_exp
        self.discount = discount
        self.prior = prior
        self.aggr_reward = aggr_reward
        self.aggr_child = aggr_child
        self.rng = rng or random.Random(0)
        self.total: dict[N, float] = {}  # Q: sum of backed-up values
        self.visits: dict[N, int] = {}  # N
        self.best: dict[N, float] = {}  # M: best backed-up value
        self.children: dict[N, list[N]] = {}

    def rollout(self, root: N) -> list[N]:
        """One selection-expansion(-simulation)-backup pass; returns the path it took."""
        if self.prior:
            path = self._select_with_prior(root)
        else:
            path = self._select(root)
            self._expand(path[-1])
            self._simulate(path)
        self._back_propagate(path)
        return path

    def _expand(self, node: N) -> list[N]:
        if node not in self.children:
            self.children[node] = list(node.find_children())  # type: ignore[arg-type]
        return self.children[node]

    def _select_with_prior(self, node: N) -> list[N]:
        path = [node]
        while not node.is_terminal:
            if not self._expand(node):
                return path
            node = self._uct_select(node)
            path.append(node)
        self._expand(node)  # a terminal node is evaluated too (its reward needs the model)
        return path

    def _select(self, node: N) -> list[N]:
        path: list[N] = []
        while True:
            path.append(node)
            if node not in self.children or node.is_terminal:
                return path
            for child in self.children[node]:
                if child not in self.children:
                    path.append(child)
                    return path
            node = self._uct_select(node)

    def _simulate(self, path: list[N]) -> None:
        node = path[-1]
        while not node.is_terminal:
            children = self._expand(node)
            if not children:
                return
            node = self.rng.choice(children)
            path.append(node)

    def _uct(self, node: N, log_parent: float) -> float:
        visits = self.visits.get(node, 0)
        if visits == 0:
            # Unvisited: its own reward is the prior (without a prior, explore it first).
            return node.reward + self.w_exp * math.sqrt(log_parent) if self.prior else math.inf
        bonus = self.w_exp * math.sqrt(log_parent / visits)
        if self.aggr_child == "max":
            return self.best[node] + bonus
        return self.total[node] / visits + bonus

    def _uct_select(self, node: N) -> N:
        visits = self.visits.get(node, 0)
        log_parent = math.log(visits) if visits > 0 else 0.0
        return max(self.children[node], key=lambda child: self._uct(child, log_parent))

    def _back_propagate(self, path: list[N]) -> None:
        reward, length = 0.0, 1.0
        for node in reversed(path):
            reward = reward * self.discount + node.reward
            length = length * self.discount + 1
            value = reward / length if self.aggr_reward == "mean" else reward
            self.total[node] = self.total.get(node, 0.0) + value
            self.visits[node] = self.visits.get(node, 0) + 1
            self.best[node] = max(self.best.get(node, -math.inf), value)

    def max_mean_terminal(self, node: N, total: float = 0.0, count: int = 0
                          ) -> tuple[N, float]:
        """The visited terminal node below ``node`` with the best mean reward on its path."""
        if node.is_terminal:
            if not node.visited:
                return node, -math.inf
            return node, (total + node.reward) / (count + 1)
        children = self.children.get(node)
        if not children:
            return node, -math.inf
        return max((self.max_mean_terminal(c, total + node.reward, count + 1) for c in children),
                   key=lambda pair: pair[1])
