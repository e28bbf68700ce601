"""What the typed checker buys without any model: exact match of model-style completions
before and after plancheck's own minimum-edit repair (``plancheck fix``).

    python bench/bench_repair_gain.py [--limit N]

For each of the 6,089 completions in ``parity/cases.jsonl`` (gold plans passed through
realistic mistakes and output styles), the completion is scored with the reference-parity
scorer; if plancheck reports errors, the Z3 repair is applied (it never sees the gold plan) and
the repaired plan is scored again. Printed: EM before and after, per mutation kind, and over
the tasks whose gold plan the checker finds well formed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter, defaultdict

import plancheck
from plancheck.corpus.paths import parity_cases_path, release_dir
from plancheck.corpus.release import read_tasks
from plancheck.scoring.reference import prepare_gold, score_completion
from plancheck.smt.repair import repair_plan


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    toolset = plancheck.load_toolset()
    tasks = list(read_tasks(release_dir()))
    gold = {t.task_id: prepare_gold(t.structured_plan) for t in tasks}
    # A repair that mends a defective gold plan's defect loses its "exact match"; such tasks
    # are found by the checker itself and reported separately.
    defective = {t.task_id for t in tasks if not plancheck.check(t.structured_plan, toolset).ok}
    well_formed: Counter[str] = Counter()
    before: Counter[str] = Counter()
    after: Counter[str] = Counter()
    total: Counter[str] = Counter()
    outcomes: dict[str, Counter[str]] = defaultdict(Counter)
    started = time.perf_counter()
    with parity_cases_path().open(encoding="utf-8") as handle:
        for number, line in enumerate(handle):
            if args.limit and number >= args.limit:
                break
            case = json.loads(line)
            kind = case["mutation"]
            total[kind] += 1
            verdict = score_completion(case["completion"], gold[case["task_id"]])
            before[kind] += verdict.em
            report = plancheck.check(case["completion"], toolset)
            final = verdict.em
            if report.plan is not None and not report.ok:
                result = repair_plan(report.plan, toolset)
                outcomes[kind][result.status] += 1
                if result.plan is not None and result.status == "repaired":
                    final = score_completion(json.dumps(result.plan), gold[case["task_id"]]).em
            after[kind] += final
            if case["task_id"] not in defective:
                well_formed["n"] += 1
                well_formed["before"] += verdict.em
                well_formed["after"] += final
    elapsed = time.perf_counter() - started
    print(f"{'mutation':<22}{'n':>6}{'EM before':>11}{'EM after':>10}   repair outcomes")
    for kind in sorted(total):
        print(f"{kind:<22}{total[kind]:>6}{100 * before[kind] / total[kind]:>10.1f}%"
              f"{100 * after[kind] / total[kind]:>9.1f}%   {dict(outcomes[kind])}")
    n = sum(total.values())
    print(f"{'all':<22}{n:>6}{100 * sum(before.values()) / n:>10.1f}%"
          f"{100 * sum(after.values()) / n:>9.1f}%   ({elapsed:.0f} s)")
    m = well_formed["n"]
    print(f"{'well-formed gold only':<22}{m:>6}{100 * well_formed['before'] / m:>10.1f}%"
          f"{100 * well_formed['after'] / m:>9.1f}%   (tasks with a defective gold plan: "
          f"{sorted(defective)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
