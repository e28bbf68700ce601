"""What a batch of scored predictions adds up to, in constant memory: the rates of the reference's
metrics and execution equivalence, FPoF counts, static validity and lint counts, and the means of
the F1s and trajectory metrics, with bootstrap intervals when rendered (:meth:`Summary.to_dict`)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Final

from plancheck.scoring.bootstrap import DEFAULT_RESAMPLES, Estimate, estimate_mean, estimate_rate
from plancheck.scoring.fpof import fpof_category
from plancheck.scoring.gold import GoldIndex
from plancheck.scoring.item_scorer import ScoredItem

__all__ = ["RATE_METRICS", "Summary"]

RATE_METRICS: Final = ("em", "tool_acc", "param_acc", "dep_acc", "exec_equiv")

# What the summary counts of an item: em, tool_acc, param_acc, dep_acc, exec_equiv,
# fpof_type, malformed, static_valid (None: not checked), lint codes.
_Outcome = tuple[bool, bool, bool, bool, bool | None, str | None, bool, bool | None,
                 tuple[str, ...]]


@dataclass(slots=True)
class Summary:
    """Counts over scored predictions (constant memory: no item is kept; means are kept as
    histograms of values rounded to 4 decimals, at most 10,001 levels each)."""

    name: str = "all"
    n: int = 0
    unmatched: int = 0
    f1: dict[str, Counter[float]] = field(default_factory=dict)
    trajectory: dict[str, Counter[float]] = field(default_factory=dict)
    seen_tasks: set[str] = field(default_factory=set)
    # Items by everything the counts need of them (_Outcome): one dict increment per item;
    # the rates, FPoF counts and lint counts are added up from it when asked for. Few
    # combinations occur, so it stays small.
    _outcomes: dict[_Outcome, int] = field(default_factory=dict)
    # Items by their F1s and trajectory metrics, in first-seen order, not yet added to the
    # histograms: one dict increment per item rather than a rounding and an increment per
    # metric (few rows are distinct). Folded into the histograms in order (:meth:`_fold`),
    # which leaves each histogram's levels in the order items first showed them.
    _rows: dict[tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]], int] = field(
        default_factory=dict
    )

    def add(self, item: ScoredItem) -> None:
        if not item.scored:
            self.unmatched += 1
            return
        self.n += 1
        outcome = (item.em, item.tool_acc, item.param_acc, item.dep_acc, item.exec_equiv,
                   item.fpof_type, item.malformed, item.static_valid, item.lint_codes)
        outcomes = self._outcomes
        outcomes[outcome] = outcomes.get(outcome, 0) + 1
        if item.task_key is not None:
            self.seen_tasks.add(item.task_key)
        if item.f1 or item.trajectory:
            row = (item.f1, item.trajectory)
            rows = self._rows
            count = rows.get(row)
            if count is not None:
                rows[row] = count + 1
            elif _has_nan(row) or len(rows) >= _MAX_ROWS:
                # (NaN equals nothing: each such item is a level of its own, as tallied.)
                self._fold()
                self._tally(row, 1)
            else:
                rows[row] = 1

    def copy(self, *, name: str) -> Summary:
        """The same counts under another name, copied (each can go on counting)."""
        return Summary(
            name,
            self.n,
            self.unmatched,
            {metric: Counter(levels) for metric, levels in self.f1.items()},
            {metric: Counter(levels) for metric, levels in self.trajectory.items()},
            set(self.seen_tasks),
            dict(self._outcomes),
            dict(self._rows),
        )

    def _fold(self) -> None:
        """Add the rows kept so far to the histograms."""
        for row, count in self._rows.items():
            self._tally(row, count)
        self._rows.clear()

    def _tally(
        self, row: tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]], count: int
    ) -> None:
        f1, trajectory = row
        if f1:
            from plancheck.scoring.metrics import TASKBENCH_METRICS

            _tally(self.f1, zip(TASKBENCH_METRICS, f1, strict=False), count)
        if trajectory:
            _tally(self.trajectory, trajectory, count)

    @property
    def rates(self) -> Counter[str]:
        """How many items had each rate metric true (and ``gap``: tool_acc without em)."""
        rates: Counter[str] = Counter(dict.fromkeys((*RATE_METRICS, "gap"), 0))
        for (em, tool, param, dep, exec_equiv, *_), count in self._outcomes.items():
            rates["em"] += em * count
            rates["tool_acc"] += tool * count
            rates["param_acc"] += param * count
            rates["dep_acc"] += dep * count
            rates["exec_equiv"] += bool(exec_equiv) * count
            rates["gap"] += (tool and not em) * count
        return rates

    @property
    def equivalence_n(self) -> int:
        """How many items have execution equivalence computed (the rate's denominator)."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[4] is not None)

    @property
    def fpof(self) -> Counter[str]:
        """How many items failed first in each way (FPoF fine type)."""
        counts: Counter[str] = Counter()
        for outcome, count in self._outcomes.items():
            if outcome[5] is not None:
                counts[outcome[5]] += count
        return counts

    @property
    def malformed(self) -> int:
        """How many records held no readable prediction."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[6])

    @property
    def static_n(self) -> int:
        """How many items were checked statically."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[7] is not None)

    @property
    def static_valid(self) -> int:
        """How many items checked clean statically."""
        return sum(count for outcome, count in self._outcomes.items() if outcome[7])

    @property
    def lint(self) -> Counter[str]:
        """How many items each lint code was reported on."""
        counts: Counter[str] = Counter()
        for outcome, count in self._outcomes.items():
            if outcome[7] is not None:
                for code in outcome[8]:
                    counts[code] += count
        return counts

    def to_dict(
        self, gold: GoldIndex | None = None, *, resamples: int = DEFAULT_RESAMPLES, seed: int = 0
    ) -> dict[str, Any]:
        def rate(name: str, k: int, n: int) -> dict[str, Any]:
            # Keyed by the metric, not by the file's name: the interval of the same counts must
            # not change with how a path is spelt (and `report --ci` gives the same).
            return estimate_rate(k, n, resamples=resamples, seed=seed, name=name).to_dict()

        rates = self.rates
        fpof = self.fpof  # (each of these counts is added up from the tally when asked for)
        failures = sum(fpof.values())
        categories: Counter[str] = Counter()
        for kind, count in fpof.items():
            categories[fpof_category(kind) or "?"] += count
        document: dict[str, Any] = {
            "name": self.name,
            "predictions": self.n,
            "malformed": self.malformed,
            "unmatched": self.unmatched,
            "metrics": {name: rate(name, rates[name], self.n) for name in (*RATE_METRICS, "gap")},
        }
        equivalence_n = self.equivalence_n
        if self.n and not equivalence_n:
            document["metrics"]["exec_equiv"] = None  # not computed (--parity-only)
        elif equivalence_n != self.n:
            document["metrics"]["exec_equiv"] = rate(
                "exec_equiv", rates["exec_equiv"], equivalence_n
            )
        document |= {
            "fpof": {
                "failures": failures,
                "types": {
                    kind: {"count": count, **rate(f"fpof:{kind}", count, failures)}
                    for kind, count in fpof.most_common()
                },
                "categories": {
                    cat: {"count": count, **rate(f"cat:{cat}", count, failures)}
                    for cat, count in categories.most_common()
                },
            },
        }
        if gold is not None and gold.single is None:
            document["missing_tasks"] = sum(1 for task in gold.tasks if task not in self.seen_tasks)
        static_n = self.static_n
        if static_n:
            document["static"] = {
                "valid": rate("static_valid", self.static_valid, static_n),
                "lint_rates": {
                    code: {"count": count, **rate(f"lint:{code}", count, static_n)}
                    for code, count in sorted(self.lint.items())
                },
            }
        self._fold()
        if self.f1:
            from plancheck.scoring.metrics import TASKBENCH_METRICS

            document["taskbench"] = {
                name: _mean(self.f1[name], resamples, seed, name)
                for name in TASKBENCH_METRICS
                if name in self.f1
            }
        if self.trajectory:
            document["trajectory"] = {
                name: _mean(values, resamples, seed, f"traj:{name}")
                for name, values in sorted(self.trajectory.items())
            }
        return document


_MAX_ROWS: Final = 4096


def _has_nan(row: tuple[tuple[float | None, ...], tuple[tuple[str, float], ...]]) -> bool:
    f1, trajectory = row
    return any(v is not None and math.isnan(v) for v in f1) or any(
        math.isnan(v) for _, v in trajectory
    )


def _tally(
    histograms: dict[str, Counter[float]],
    values: Iterable[tuple[str, float | None]],
    count: int = 1,
) -> None:
    """Add ``count`` items of each value, rounded to 4 decimals, to its metric's histogram
    (None: skipped)."""
    for name, value in values:
        if value is None:
            continue
        histogram = histograms.get(name)
        if histogram is None:
            histogram = histograms[name] = Counter()
        histogram[round(value, 4)] += count


def _mean(histogram: Counter[float], resamples: int, seed: int, name: str) -> dict[str, Any]:
    estimate: Estimate = estimate_mean(histogram, resamples=resamples, seed=seed, name=name)
    return estimate.to_dict()
