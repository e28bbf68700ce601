"""Bootstrap 95% confidence intervals from counts, in constant memory.

Scoring streams predictions and keeps counts, never the items, so the intervals are computed
from sufficient statistics:

* a **rate** (``k`` successes of ``n`` items): resampling ``n`` items with replacement from a
  0/1 sample draws exactly ``Binomial(n, k/n)`` successes, so each bootstrap replicate is one
  draw from that distribution (sampled from its probability table; the ordinary bootstrap,
  without touching the items);
* a **mean** of a value with few distinct levels (an F1, an efficiency): the Poisson bootstrap
  (each item weighted by an independent ``Poisson(1)`` count, so a level seen ``c`` times gets
  weight ``Poisson(c)``), the streaming variant of the bootstrap (Hanley & MacGibbon 2006;
  Chamandy et al. 2012). Two-level values reduce to a rate.

Intervals are percentile intervals of ``resamples`` replicates from a seeded generator, so the
same counts always give the same interval.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from itertools import accumulate
from operator import mul
from typing import Any, Final

__all__ = ["DEFAULT_RESAMPLES", "Estimate", "clear_caches", "estimate_mean", "estimate_rate"]

DEFAULT_RESAMPLES: Final = 1000
_TAIL_SDS: Final = 12.0  # probability mass beyond 12 standard deviations is below 1e-30


@dataclass(frozen=True, slots=True)
class Estimate:
    """A point estimate with its 95% bootstrap interval (``None`` bounds when ``n`` is 0)."""

    value: float | None
    low: float | None
    high: float | None
    n: int

    def to_dict(self, scale: float = 1.0, digits: int = 4) -> dict[str, Any]:
        def shown(x: float | None) -> float | None:
            return None if x is None else round(x * scale, digits)

        return {
            "value": shown(self.value),
            "ci_low": shown(self.low),
            "ci_high": shown(self.high),
            "n": self.n,
        }

    def format(self, scale: float = 100.0, digits: int = 1, ci: bool = True) -> str:
        if self.value is None:
            return "-"
        text = f"{self.value * scale:.{digits}f}"
        if ci and self.low is not None and self.high is not None:
            text += f" [{self.low * scale:.{digits}f}, {self.high * scale:.{digits}f}]"
        return text


def _rng(seed: int | str, name: str) -> random.Random:
    return random.Random(f"bootstrap:{seed}:{name}")


def _percentiles(replicates: list[float]) -> tuple[float, float]:
    ordered = sorted(replicates)
    last = len(ordered) - 1

    def at(q: float) -> float:
        position = q * last
        below = math.floor(position)
        above = min(below + 1, last)
        weight = position - below
        return ordered[below] * (1 - weight) + ordered[above] * weight

    return at(0.025), at(0.975)


def _table(support: list[int], logs: list[float]) -> tuple[list[int], list[float]]:
    """The support and cumulative weights of a distribution given by its log-probabilities
    there (scaled by the largest: only ratios matter)."""
    peak = max(logs)
    # accumulate adds in order, exactly as a running total would (its first sum is the first
    # weight, as 0.0 + weight is).
    return support, list(accumulate([math.exp(value - peak) for value in logs]))


def _binomial_draws(n: int, p: float, count: int, rng: random.Random) -> list[int]:
    if p <= 0.0 or p >= 1.0:
        return [round(n * p)] * count
    support, cumulative = _binomial_table(n, p)
    return rng.choices(support, cum_weights=cumulative, k=count)


# The tables depend on the distribution alone, and a summary asks for the same one many
# times (every rate over the same n with the same count; every histogram level seen as many
# times as another): each is built once. Small, and bounded.
@lru_cache(maxsize=512)
def _binomial_table(n: int, p: float) -> tuple[list[int], list[float]]:
    sd = math.sqrt(n * p * (1 - p))
    low = max(0, math.floor(n * p - _TAIL_SDS * sd) - 1)
    high = min(n, math.ceil(n * p + _TAIL_SDS * sd) + 1)
    log_n = math.lgamma(n + 1)
    log_p, log_q = math.log(p), math.log1p(-p)
    lgamma = math.lgamma
    support = list(range(low, high + 1))
    # (The log-pmf written out in the comprehension: a call per point costs more than it.)
    logs = [log_n - lgamma(k + 1) - lgamma(n - k + 1) + k * log_p + (n - k) * log_q
            for k in support]
    return _table(support, logs)


def _poisson_draws(mean: float, count: int, rng: random.Random) -> list[int]:
    support, cumulative = _poisson_table(mean)
    return rng.choices(support, cum_weights=cumulative, k=count)


@lru_cache(maxsize=512)
def _poisson_table(mean: float) -> tuple[list[int], list[float]]:
    sd = math.sqrt(mean)
    low = max(0, math.floor(mean - _TAIL_SDS * sd) - 1)
    high = math.ceil(mean + _TAIL_SDS * sd) + 10
    log_mean = math.log(mean)
    lgamma = math.lgamma
    support = list(range(low, high + 1))
    logs = [k * log_mean - mean - lgamma(k + 1) for k in support]  # the log-pmf, as above
    return _table(support, logs)


def estimate_rate(
    successes: int,
    n: int,
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | str = 0,
    name: str = "",
) -> Estimate:
    """The rate ``successes / n`` with a bootstrap 95% interval."""
    if n <= 0:
        return Estimate(None, None, None, 0)
    if resamples <= 0:
        return Estimate(successes / n, None, None, n)
    return _rate(successes, n, resamples, seed, name)


# Estimates are immutable and a pure function of their arguments; ``plancheck score`` asks
# for each one twice with a single prediction file (the file's summary and the total have the
# same counts), so the second is remembered rather than resampled.
@lru_cache(maxsize=256)
def _rate(successes: int, n: int, resamples: int, seed: int | str, name: str) -> Estimate:
    rate = successes / n
    draws = _binomial_draws(n, rate, resamples, _rng(seed, name))
    low, high = _percentiles([k / n for k in draws])
    return Estimate(rate, low, high, n)


def estimate_mean(
    histogram: Mapping[float, int],
    *,
    resamples: int = DEFAULT_RESAMPLES,
    seed: int | str = 0,
    name: str = "",
) -> Estimate:
    """The mean of values given as ``{value: how many items have it}``, with a bootstrap 95%
    interval."""
    levels = [(float(v), c) for v, c in histogram.items() if c > 0]
    n = sum(c for _, c in levels)
    if n == 0:
        return Estimate(None, None, None, 0)
    mean = math.fsum(v * c for v, c in levels) / n
    if resamples <= 0:
        return Estimate(mean, None, None, n)
    if len(levels) == 1:
        return Estimate(mean, mean, mean, n)
    return _mean(tuple(levels), n, mean, resamples, seed, name)


@lru_cache(maxsize=64)
def _mean(levels: tuple[tuple[float, int], ...], n: int, mean: float, resamples: int,
          seed: int | str, name: str) -> Estimate:
    if len(levels) == 2:
        (a, _), (b, count_b) = sorted(levels)
        rate = estimate_rate(count_b, n, resamples=resamples, seed=seed, name=name)
        assert rate.low is not None and rate.high is not None
        return Estimate(mean, a + (b - a) * rate.low, a + (b - a) * rate.high, n)
    rng = _rng(seed, name)
    weights = [_poisson_draws(float(c), resamples, rng) for _, c in levels]
    values = [v for v, _ in levels]
    replicates = []
    # One replicate per resample: its weights across the levels (fsum is exactly rounded,
    # so the order of its terms does not change the sum).
    for row in zip(*weights, strict=True):
        total = sum(row)
        if total:
            replicates.append(math.fsum(map(mul, values, row)) / total)
    low, high = _percentiles(replicates or [mean])
    return Estimate(mean, low, high, n)


def clear_caches() -> None:
    """Forget remembered estimates and tables (a benchmark that scores the same counts
    again, in one process, must pay for them as a new process would)."""
    for cached in (_rate, _mean, _binomial_table, _poisson_table):
        cached.cache_clear()
