"""Memory and time of ``plancheck check`` on big inputs.

    python bench/bench_check_memory.py            # 50 MB inputs; exits 1 if a target is missed
    python bench/bench_check_memory.py --mb 10    # smaller, quicker

Inputs, generated in a temporary directory:

* a JSONL batch of ``--mb`` megabytes: ``{id, task_id, completion}`` records from
  ``tests.support.completions.generate_completions`` over the release's gold plans (seed
  2024, the realistic weighted mix, 5 a task), repeated until the batch is that large;
* one damaged completion of ``--mb`` megabytes: a reasoning sentence, then a plan of many
  steps written as a Python literal (single quotes, ``None``), the damage json-repair mends.

Each case runs ``python -m plancheck check`` (this interpreter: run the benchmark with the
build to measure) in a fresh process that waits for it, and reports the peak RSS of the check
(``RUSAGE_CHILDREN``), its CPU time (user + system) and the wall time. Targets (issue 15):
under 100 MB peak RSS for the batch with ``-q``, ``--statistics`` and the streaming formats;
the single completion read or refused within 10 s. The single completion is also checked with
the limit raised (``--max-size 1G``), for information: that case has no target.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # for tests.support
RSS_TARGET_MB = 100.0
TIME_TARGET_S = 10.0

_PROBE = """
import resource, subprocess, sys, time
start = time.perf_counter()
with open(sys.argv[1], "rb") as stdin, open(sys.argv[2], "wb") as stdout:
    try:
        code = subprocess.run(sys.argv[4:], stdin=stdin, stdout=stdout, check=False,
                              timeout=float(sys.argv[3])).returncode
    except subprocess.TimeoutExpired:
        code = -1  # killed (and waited for) by subprocess.run
wall = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(usage.ru_maxrss, usage.ru_utime + usage.ru_stime, wall, code)
"""


def measure(arguments: list[str], directory: Path, stdin: Path | None = None,
            timeout: float = 300.0) -> tuple[float, float, float, int]:
    """Peak RSS (MB), CPU seconds, wall seconds and exit status (-1: killed at ``timeout``
    seconds) of one check."""
    command = [sys.executable, "-m", "plancheck", "check", "--no-config", *arguments]
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(stdin or os.devnull), str(directory / "out.txt"),
         str(timeout), *command], capture_output=True, text=True, check=True, cwd=directory)
    rss, cpu, wall, code = result.stdout.split()
    return int(rss) / 1024, float(cpu), float(wall), int(code)


def make_batch(path: Path, megabytes: float) -> int:
    from plancheck.corpus.paths import release_dir
    from tests.support.completions import generate_completions, load_gold_tasks

    tasks = load_gold_tasks(release_dir() / "benchmark.jsonl")
    lines = [json.dumps({"id": made.id, "task_id": made.task_id, "completion": made.completion})
             for made in generate_completions(tasks, per_task=5, seed=2024,
                                              cover_all_pairs=False)]
    chunk = ("\n".join(lines) + "\n").encode("utf-8")
    target = int(megabytes * 1e6)
    records = 0
    with path.open("wb") as out:
        while out.tell() < target:
            room = target - out.tell()
            if room >= len(chunk):
                out.write(chunk)
                records += len(lines)
            else:
                part = chunk[:chunk.rfind(b"\n", 0, room) + 1] or chunk[:chunk.find(b"\n") + 1]
                out.write(part)
                records += part.count(b"\n")
    return records


def make_completion(path: Path, megabytes: float) -> int:
    step = {"agent": "Geospatial_Object_Segmentation", "step": 0, "dependence": [-1],
            "dependence_content": None,
            "inputs": {"image_path": "/data/satellite_images/hsr_image.tif"},
            "outputs": ["segmentation_map_image_path"]}
    steps = int(megabytes * 1e6) // (len(repr(step)) + 2) + 1
    plan = [dict(step, step=i) for i in range(steps)]
    path.write_text("Let me think about the tools first. The structured task plan is: "
                    + repr(plan), encoding="utf-8")
    return steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=50.0, help="size of each input (MB)")
    parser.add_argument("--timeout", type=float, default=300.0,
                        help="seconds after which a case is killed (exit -1)")
    parser.add_argument("--only", default="", metavar="TEXT",
                        help="run only the cases whose name contains TEXT")
    parser.add_argument("--skip-raised", action="store_true",
                        help="do not check the single completion with the limit raised")
    args = parser.parse_args()
    from plancheck.build_info import build_info

    print(f"build: {build_info().label}")
    failed = False
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        batch, completion = directory / "batch.jsonl", directory / "completion.txt"
        records = make_batch(batch, args.mb)
        steps = make_completion(completion, args.mb)
        print(f"batch: {batch.stat().st_size / 1e6:.1f} MB, {records:,} records; completion: "
              f"{completion.stat().st_size / 1e6:.1f} MB, {steps:,} steps")
        print(f"{'case':<44} {'peak RSS':>10} {'CPU':>8} {'wall':>8} {'exit':>5}  target")
        cases: list[tuple[str, list[str], Path | None, str]] = [
            (f"batch {flags}", [*flags.split(), "batch.jsonl"], None, "rss")
            for flags in ("-q", "--statistics", "--format jsonl", "--format concise",
                          "--format github", "--format text", "--format json",
                          "--format sarif")
        ]
        cases.append(("batch on stdin, -q", ["-q", "-"], batch, "rss"))
        cases.append(("completion, default limit (16M)", ["completion.txt"], None, "time"))
        cases.append(("completion on stdin, default limit", ["-"], completion, "time"))
        if not args.skip_raised:
            cases.append(("completion, --max-size 1G (read)", ["--max-size", "1G", "-q",
                                                                "completion.txt"], None, ""))
        for name, arguments, stdin, target in cases:
            if args.only not in name:
                continue
            rss, cpu, wall, code = measure(arguments, directory, stdin, args.timeout)
            verdict = ""
            if target == "rss":
                verdict = f"< {RSS_TARGET_MB:.0f} MB " + ("ok" if rss < RSS_TARGET_MB
                                                         else "MISSED")
                failed |= rss >= RSS_TARGET_MB
            elif target == "time":
                verdict = f"< {TIME_TARGET_S:.0f} s " + ("ok" if wall < TIME_TARGET_S
                                                         else "MISSED")
                failed |= wall >= TIME_TARGET_S
            print(f"{name:<44} {rss:>7.1f} MB {cpu:>6.1f} s {wall:>6.1f} s {code:>5}  {verdict}",
                  flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
