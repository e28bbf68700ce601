"""Peak memory of every command on its largest accepted input and on an endless one.

    python bench/bench_memory.py [--mb 15]

For each command that reads files (``score`` gold and predictions, ``check --gold``,
``check --tools``, ``toolset show``, ``fmt``, ``fix``, ``compile``, ``check``): one run on an
input of ``--mb`` megabytes (under the default 16M ``--max-size``: accepted; a plan holds at
most 10,000 steps, so its steps are padded to fill the size), one on ``/dev/zero`` (refused).
Three inputs test the step and field limits: ``dense`` (10,000 steps of ten dangling
references: 200,000 fields, each a diagnostic, the costliest plan accepted), ``tiny steps``
and ``DSL`` (``--mb`` of one-call steps: refused with PC006 before they are lowered). Two test
issue 33's DSL findings: ``DSL literal`` (one string literal of ``--mb``) and ``--policy
(rules)`` (``--mb`` of one-line policy rules: refused past 10,000 rules). Each runs
in a fresh process under a 2 GB address-space cap; printed: exit status, peak RSS of the child
(``RUSAGE_CHILDREN``), CPU and wall time, and the peak as a multiple of the input's size. No
pass or fail: the numbers say whether memory is bounded by a small multiple of the largest
accepted input (issue 25).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "flood_plan.json"
CAP = 2 << 30


def _inputs(directory: Path, megabytes: float) -> dict[str, Path]:
    """A plan file, a JSONL batch, a gold file and an MCP pool, each about ``megabytes``."""
    size = int(megabytes * (1 << 20))
    steps = json.loads(EXAMPLE.read_text(encoding="utf-8"))
    record = json.dumps({"task_id": 1, "plan": steps}) + "\n"
    batch = directory / "predictions.jsonl"
    batch.write_text(record * (size // len(record)), encoding="utf-8")
    gold = directory / "gold.jsonl"
    line = json.dumps({"task_id": 1, "structured_plan": steps}) + "\n"
    gold.write_text(line + "".join(json.dumps({"task_id": i, "structured_plan": steps}) + "\n"
                                   for i in range(2, size // len(line))), encoding="utf-8")
    # The largest plan accepted: 10,000 steps (the step limit), each padded to fill the size.
    plan = directory / "plan.json"
    padded = dict(steps[0], inputs=dict(steps[0]["inputs"], note=""))
    pad = max(0, size // 10_000 - len(json.dumps(padded)) - 2)
    one = json.dumps(dict(padded, inputs=dict(padded["inputs"], note="x" * pad)))
    plan.write_text("[" + ",".join([one] * min(10_000, size // (len(one) + 1))) + "]",
                    encoding="utf-8")
    # The costliest plan accepted: 10,000 steps of ten dangling references (a diagnostic a
    # field, 200,000 fields: the field limit), whatever --mb says.
    dense = directory / "dense.json"
    dense.write_text(json.dumps([
        {"agent": "Flood_depth_prediction", "step": i, "dependence": [i - 1] if i else [],
         "dependence_content": {}, "outputs": ["o"],
         "inputs": {f"a{j}": f"<GENERATED>-{max(i - 1, 0)}-<x{j}>" for j in range(10)}}
        for i in range(10_000)]), encoding="utf-8")
    # Tiny steps filling the size: refused (PC006) for holding more than 10,000 steps.
    tiny = directory / "tiny.json"
    tiny.write_text("[" + ",".join(['{"tool":"a"}'] * (size // 13)) + "]", encoding="utf-8")
    dsl = directory / "tiny.wf"
    dsl.write_text("plan uses disasterbench {\n" + "".join(
        f"  step {i} = A()\n" for i in range(size // 20)) + "}\n", encoding="utf-8")
    pool = directory / "pool.json"
    tool = {"name": "t", "inputSchema": {"type": "object", "properties": {
        "p": {"type": "string", "description": "x" * 200}}}}
    tools = [dict(tool, name=f"t{i}") for i in range(size // 300)]
    pool.write_text(json.dumps({"tools": tools}), encoding="utf-8")
    # One string literal filling the size (issue 33: 15 MB took 5.8 GB), and a policy of
    # one-line rules filling it (refused past 10,000 rules: 300,000 took 3.5 GB and 72 s).
    literal = directory / "literal.wf"
    literal.write_text("plan uses disasterbench {\n  step 0 = GeoChat(image_path = \"a.png\", "
                       f"question = {json.dumps('flood ' * (size // 6))})\n}}\n",
                       encoding="utf-8")
    rule = "  require GeoChat before Flood_depth_prediction\n"
    rules = directory / "rules.wf"
    rules.write_text("policy p {\n" + rule * (size // len(rule)) + "}\n", encoding="utf-8")
    return {"plan": plan, "batch": batch, "gold": gold, "pool": pool, "dense": dense,
            "tiny": tiny, "dsl": dsl, "literal": literal, "rules": rules}


def _commands(files: dict[str, Path], endless: bool) -> dict[str, list[str]]:
    zero = "/dev/zero"
    pick = (lambda key: zero) if endless else (lambda key: str(files[key]))
    return {
        "score (gold)": ["score", "--gold", pick("gold"), str(EXAMPLE)],
        "score (predictions)": ["score", "--gold", str(files["gold"]) if not endless
                                else str(EXAMPLE), pick("batch")],
        "check --tools": ["check", "--tools", pick("pool"), str(EXAMPLE)],
        "toolset show": ["toolset", "show", "--tools", pick("pool")],
        "fmt": ["fmt", "--to", "json", pick("plan")],
        "fix": ["fix", pick("plan")],
        "compile": ["compile", "--to", "python", pick("plan")],
        "check": ["check", pick("plan")],
        "check (dense)": ["check", pick("dense")],
        "check (tiny steps)": ["check", pick("tiny")],
        "check (DSL)": ["check", pick("dsl")],
        "check (DSL literal)": ["check", pick("literal")],
        "check --policy (rules)": ["check", str(ROOT / "examples" / "policy_plan.json"),
                                   "--policy", pick("rules")],
    }


def _measure(arguments: list[str], cwd: Path) -> tuple[int, float, float, float]:
    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (CAP, CAP))

    code = ("import resource, subprocess, sys\n"
            "done = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
            "stderr=subprocess.DEVNULL)\n"
            "usage = resource.getrusage(resource.RUSAGE_CHILDREN)\n"
            "print(done.returncode, usage.ru_maxrss, usage.ru_utime + usage.ru_stime)\n")
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", code, sys.executable, "-m", "plancheck",
                           *arguments], capture_output=True, text=True, cwd=cwd, timeout=600,
                          check=False,
                          preexec_fn=cap, env={**os.environ, "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - start
    status, rss_kb, cpu = done.stdout.split()
    return int(status), int(rss_kb) / 1024, float(cpu), wall


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mb", type=float, default=15.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        files = _inputs(directory, args.mb)
        print(f"{'command':<22} {'input':<10} {'exit':>4} {'peak RSS':>10} {'x input':>8} "
              f"{'CPU s':>6} {'wall s':>6}")
        for endless in (False, True):
            for name, arguments in _commands(files, endless).items():
                status, rss, cpu, wall = _measure(arguments, directory)
                megabytes = 0.0 if endless else max(  # the largest input the command reads
                    Path(a).stat().st_size for a in arguments if Path(a).is_file()) / (1 << 20)
                label = "/dev/zero" if endless else f"{megabytes:.1f} MB"
                ratio = "" if endless else f"{rss / megabytes:7.1f}x"
                print(f"{name:<22} {label:<10} {status:>4} {rss:>8.0f} MB {ratio:>8} "
                      f"{cpu:>6.1f} {wall:>6.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
