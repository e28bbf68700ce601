"""``plancheck score`` against DORA's ``scripts/evaluate.py`` on many generated run directories.

    python bench/bench_dora_differential.py --runs 2000 [--seed-offset 0]

The test suite (``tests/dora/test_run_differential.py``) runs 330 directories; this runs
more, with the same generator (``tests/support/dora_runs.py``) and the same comparison, and
prints how many directories DORA scored, how many plancheck scored differently (with the
first few differences), and the CPU time of each side.
"""

from __future__ import annotations

import argparse
import resource
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from plancheck.corpus.paths import dora_reference_dir
from tests.support.dora_runs import differences, dora_verdicts, write_run


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--seed-offset", type=int, default=0)
    args = parser.parse_args()
    reference = dora_reference_dir()
    with tempfile.TemporaryDirectory() as temporary:
        root = Path(temporary)
        made = []
        for seed in range(args.seed_offset, args.seed_offset + args.runs):
            tasks, run = write_run(seed, root / str(seed))
            made.append((tasks, run, root / str(seed) / "eval.json"))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        verdicts = dora_verdicts(reference, [[str(t), str(r), str(e)] for t, r, e in made],
                                 root / "stub")
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        dora_cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
        start = time.process_time()
        found: list[str] = []
        scored = 0
        for index, ((tasks, run, eval_json), verdict) in enumerate(zip(made, verdicts,
                                                                      strict=True)):
            if verdict is None:
                scored += 1
                found.extend(differences(index, tasks, run, eval_json,
                                         root / f"{index}.jsonl"))
        ours_cpu = time.process_time() - start
    print(f"{args.runs} run directories, {scored} scored by DORA's scripts/evaluate.py; "
          f"{len(found)} differences in plancheck score / report")
    print(f"CPU: DORA {dora_cpu:.1f} s (one process), plancheck {ours_cpu:.1f} s "
          f"(score twice and report, in process)")
    for line in found[:5]:
        print(" ", line[:400])
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
