"""What ``plancheck score`` remembers changes no result.

The batch scorer keeps what a prediction's plan determines (static results, canonical forms,
FPoF entries, and the TaskBench F1s and trajectory metrics, by gold plan), the summary tallies
rows of metrics before it builds its histograms, the bootstrap remembers its tables and
estimates, and the trajectory metrics remember how each string reads as a reference. Each
must give exactly what computing afresh gives."""

from __future__ import annotations

import contextlib
import io
import json
import math
import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from plancheck.dora.paper_metrics import _read_reference, default_reference
from plancheck.ir.nodes import Toolset
from plancheck.scoring import bootstrap
from plancheck.scoring.batch import (
    ItemScorer,
    RawRecord,
    ScoredItem,
    ScoreOptions,
    Summary,
    clear_caches,
)
from plancheck.scoring.bootstrap import estimate_mean, estimate_rate
from plancheck.scoring.gold import GoldIndex
from tests.support.completions import STYLES, generate_completions, make_completion

TASKBENCH = ("node_f1", "edge_f1", "arg_name_f1", "arg_value_f1")


@pytest.fixture(scope="module")
def pool(gold_tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Completions of a few tasks in every style, and the same predictions written again in
    other styles (different texts, equal plans: what the caches are keyed by)."""
    tasks = [(t["task_id"], t["structured_plan"]) for t in gold_tasks[:12]]
    records = [
        {"id": c.id, "task_id": c.task_id, "completion": c.completion}
        for c in generate_completions(tasks, per_task=6, seed=5)
    ]
    for n, (task_id, plan) in enumerate(tasks):
        for mutation in ("identity", "swap_agent", "drop_output"):
            for style in STYLES[n % 3 :: 3]:
                records.append({
                    "id": f"again-{task_id}-{mutation}-{style}",
                    "task_id": task_id,
                    "completion": make_completion(plan, mutation, style, seed=n),
                })
    records.append({"id": "not text", "task_id": tasks[0][0], "completion": 7})
    return records


def _alone(gold: GoldIndex, toolset: Toolset, record: dict[str, Any]) -> ScoredItem:
    return ItemScorer(gold, toolset, ScoreOptions(cache_size=0)).score(
        RawRecord("p", 0, value=record)
    )


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(data=st.data(), cache_size=st.sampled_from([1, 3, 1024]))
def test_a_batch_with_repeats_scores_each_record_as_alone(
    benchmark_path: Any, toolset: Toolset, pool: list[dict[str, Any]], data: st.DataObject,
    cache_size: int,
) -> None:
    gold = GoldIndex.load(str(benchmark_path))
    picks = data.draw(st.lists(st.integers(0, len(pool) - 1), min_size=1, max_size=50))
    scorer = ItemScorer(gold, toolset, ScoreOptions(cache_size=cache_size))
    for n in picks:
        record = pool[n]
        assert scorer.score(RawRecord("p", 0, value=record)) == _alone(gold, toolset, record)


def test_the_whole_pool_twice_in_one_batch(
    benchmark_path: Any, toolset: Toolset, pool: list[dict[str, Any]]
) -> None:
    gold = GoldIndex.load(str(benchmark_path))
    scorer = ItemScorer(gold, toolset, ScoreOptions())
    order = list(range(len(pool))) * 2
    random.Random(3).shuffle(order)
    alone = [_alone(gold, toolset, record) for record in pool]
    for n in order:
        assert scorer.score(RawRecord("p", 0, value=pool[n])) == alone[n]


def _per_item_lines(benchmark_path: Any, folder: Path, records: list[dict[str, Any]],
                    *extra: str) -> list[str]:
    """The per-item lines of ``plancheck score`` over ``records``, in a process that forgot
    what earlier batches taught it."""
    predictions, items = folder / "predictions.jsonl", folder / "items.jsonl"
    predictions.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    clear_caches()
    with contextlib.redirect_stdout(io.StringIO()):
        main(["score", "--gold", str(benchmark_path), "--per-item", str(items), "--format",
              "json", *extra, str(predictions)])
    return items.read_text(encoding="utf-8").splitlines()


@pytest.mark.parametrize("extra", [(), ("--parity-only",)])
def test_score_writes_each_line_of_a_batch_with_repeats_as_alone(
    benchmark_path: Any, tmp_path: Path, pool: list[dict[str, Any]], extra: tuple[str, ...]
) -> None:
    """What a batch remembers (gold steps' facts, FPoF entries, how argument values read as
    references, ...) changes no per-item line: each is the line the record gets alone."""
    picks = random.Random(7).sample(range(len(pool)), 12)
    batch = [pool[n] for n in picks] * 2
    random.Random(8).shuffle(batch)
    lines = _per_item_lines(benchmark_path, tmp_path, batch, *extra)
    assert len(lines) == len(batch)
    for record, line in zip(batch, lines, strict=True):
        assert _per_item_lines(benchmark_path, tmp_path, [record], *extra) == [line]


# --------------------------------------------------------------------------- the summary


def _histograms(items: list[ScoredItem]) -> tuple[dict[str, Counter[float]], ...]:
    """Each item's metrics rounded and counted, one item at a time."""
    f1: dict[str, Counter[float]] = {}
    trajectory: dict[str, Counter[float]] = {}
    for item in items:
        for name, value in zip(TASKBENCH, item.f1, strict=False):
            if value is not None:
                f1.setdefault(name, Counter())[round(value, 4)] += 1
        for name, value in item.trajectory:
            trajectory.setdefault(name, Counter())[round(value, 4)] += 1
    return f1, trajectory


def _ordered(histograms: dict[str, Counter[float]]) -> list[tuple[str, list[tuple[float, int]]]]:
    # Order matters: the bootstrap draws its weights level by level, in this order.
    return [(name, list(h.items())) for name, h in histograms.items()]


def _same_levels(a: dict[str, Counter[float]], b: dict[str, Counter[float]]) -> bool:
    """Equal, level by level and in order (NaN levels equal when both are NaN)."""
    if list(a) != list(b):
        return False
    for name, histogram in a.items():
        left, right = list(histogram.items()), list(b[name].items())
        if len(left) != len(right):
            return False
        for (x, m), (y, n) in zip(left, right, strict=True):
            if m != n or not (x == y or (math.isnan(x) and math.isnan(y))):
                return False
    return True


values = st.one_of(st.none(), st.sampled_from([0.0, 0.25, 1 / 3, 0.5, 2 / 3, 1.0]),
                   st.floats(0, 1), st.just(math.nan))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(st.tuples(st.tuples(values, values, values, values),
                               st.lists(st.tuples(st.sampled_from(["a", "b"]),
                                                  values.filter(lambda v: v is not None)),
                                        max_size=2)),
                     min_size=1, max_size=12),
       picks=st.lists(st.integers(0, 11), max_size=60))
def test_summary_rows_fold_into_the_histograms_in_order(
    rows: list[tuple[tuple[Any, ...], list[tuple[str, float]]]], picks: list[int]
) -> None:
    items = [ScoredItem(None, f1=f1, trajectory=tuple(trajectory))
             for f1, trajectory in (rows[n % len(rows)] for n in picks)]
    summary = Summary()
    for item in items:
        summary.add(item)
    summary.to_dict(resamples=0)  # folds what is kept
    f1, trajectory = _histograms(items)
    assert _same_levels(summary.f1, f1)
    assert _same_levels(summary.trajectory, trajectory)


def test_more_distinct_rows_than_kept_fold_early_in_order() -> None:
    rng = random.Random(1)
    items = [ScoredItem(None, f1=(rng.random(), 1.0, None, rng.choice([0.5, 1.0])),
                        trajectory=(("x", rng.random()),))
             for _ in range(10_000)]
    items += items[:50]  # repeats of rows folded already
    summary = Summary()
    for item in items:
        summary.add(item)
    document = summary.to_dict(resamples=50)
    f1, trajectory = _histograms(items)
    assert _ordered(summary.f1) == _ordered(f1)
    assert _ordered(summary.trajectory) == _ordered(trajectory)
    assert document["taskbench"]["node_f1"]["n"] == len(items)


def test_a_copied_summary_counts_what_adding_every_item_again_counts() -> None:
    """``plancheck score`` with one file copies its summary as the total."""
    rng = random.Random(2)
    items = [ScoredItem(None, em=rng.random() < 0.5, static_valid=rng.choice([None, True]),
                        fpof_type=rng.choice([None, "early_stop", "agent_mismatch"]),
                        task_key=str(rng.randint(1, 5)), lint_codes=("PC101",) * rng.randint(0, 1),
                        f1=(rng.random(), 1.0, None, 0.5), trajectory=(("x", rng.random()),))
             for _ in range(300)]
    items.append(ScoredItem(None, scored=False))
    original, total = Summary(name="a.jsonl"), Summary(name="all")
    for item in items:
        original.add(item)
        total.add(item)
    copied = original.copy(name="all")
    assert original.to_dict(resamples=50)["name"] == "a.jsonl"
    assert copied.to_dict(resamples=50) == total.to_dict(resamples=50)


# --------------------------------------------------------------------------- the bootstrap


def _mean_afresh(histogram: dict[float, int], resamples: int, seed: int, name: str
                 ) -> tuple[float | None, float | None]:
    """The bootstrap of a mean as one resample at a time, each replicate summed level by
    level, from tables built anew (the definition the remembered version must equal)."""
    levels = [(float(v), c) for v, c in histogram.items() if c > 0]
    n = sum(c for _, c in levels)
    mean = math.fsum(v * c for v, c in levels) / n
    rng = random.Random(f"bootstrap:{seed}:{name}")
    weights = []
    for _, count in levels:
        sd = math.sqrt(count)
        low = max(0, math.floor(count - 12.0 * sd) - 1)
        high = math.ceil(count + 12.0 * sd) + 10
        logs = [k * math.log(count) - count - math.lgamma(k + 1) for k in range(low, high + 1)]
        peak = max(logs)
        cumulative, total = [], 0.0
        for value in logs:
            total += math.exp(value - peak)
            cumulative.append(total)
        weights.append(rng.choices(range(low, high + 1), cum_weights=cumulative, k=resamples))
    replicates = []
    for r in range(resamples):
        total_weight = sum(w[r] for w in weights)
        if total_weight:
            replicates.append(math.fsum(v * w[r] for (v, _), w in zip(levels, weights,
                                                                       strict=True))
                              / total_weight)
    ordered = sorted(replicates or [mean])
    last = len(ordered) - 1

    def at(q: float) -> float:
        below = math.floor(q * last)
        above = min(below + 1, last)
        weight = q * last - below
        return ordered[below] * (1 - weight) + ordered[above] * weight

    return at(0.025), at(0.975)


@settings(max_examples=60, deadline=None)
@given(histogram=st.dictionaries(st.floats(0, 1), st.integers(1, 40), min_size=3, max_size=8),
       seed=st.integers(0, 3), name=st.sampled_from(["node_f1", "traj:efficiency"]))
def test_remembered_bootstrap_means_are_the_resampled_ones(
    histogram: dict[float, int], seed: int, name: str
) -> None:
    expected = _mean_afresh(histogram, 200, seed, name)
    first = estimate_mean(histogram, resamples=200, seed=seed, name=name)
    assert (first.low, first.high) == expected
    assert estimate_mean(histogram, resamples=200, seed=seed, name=name) == first  # remembered
    bootstrap.clear_caches()
    assert estimate_mean(histogram, resamples=200, seed=seed, name=name) == first


@given(k=st.integers(0, 300), n=st.integers(1, 300), seed=st.integers(0, 3))
def test_remembered_rates_are_the_resampled_ones(k: int, n: int, seed: int) -> None:
    k = min(k, n)
    first = estimate_rate(k, n, resamples=100, seed=seed, name="em")
    bootstrap.clear_caches()
    assert estimate_rate(k, n, resamples=100, seed=seed, name="em") == first
    assert estimate_rate(k, n, resamples=100, seed=seed, name="em") == first


@settings(max_examples=200, deadline=None)
@given(n=st.integers(2, 20_000), data=st.data())
def test_binomial_tables_sum_the_log_pmf_in_order(n: int, data: st.DataObject) -> None:
    """The rates' tables, by their definition: a running total of each point's probability
    (relative to the likeliest), the log-pmf computed term by term in this order."""
    p = data.draw(st.integers(1, n - 1)) / n
    sd = math.sqrt(n * p * (1 - p))
    low = max(0, math.floor(n * p - 12.0 * sd) - 1)
    high = min(n, math.ceil(n * p + 12.0 * sd) + 1)
    log_n, log_p, log_q = math.lgamma(n + 1), math.log(p), math.log1p(-p)
    logs = [log_n - math.lgamma(k + 1) - math.lgamma(n - k + 1) + k * log_p + (n - k) * log_q
            for k in range(low, high + 1)]
    peak = max(logs)
    cumulative, total = [], 0.0
    for value in logs:
        total += math.exp(value - peak)
        cumulative.append(total)
    assert bootstrap._binomial_table(n, p) == (list(range(low, high + 1)), cumulative)


# --------------------------------------------------------------------------- references


@given(st.lists(st.one_of(
    st.text(max_size=20),
    st.builds(lambda n, key: f"<GENERATED>-{n}-<{key}>", st.integers(-2, 30),
              st.text(max_size=8)),
    st.builds(lambda key, n: f"<{key}> from trajectory[{n}].obs", st.text(max_size=8),
              st.integers(0, 9)),
    st.integers(), st.none())))
def test_references_read_once_read_as_afresh(values: list[Any]) -> None:
    for value in values * 2:
        expected = _read_reference(value) if isinstance(value, str) else None
        assert default_reference(value) == expected
