"""Peak memory within 10x the input plus 100 MB on the largest inputs of each kind (issue 33):
a 15 MB ``.wf`` holding one string literal took 5.8 GB (Python's ``re`` kept hundreds of bytes
of backtracking state per character of the literal's token), a 15.6 MB policy of 300,000 rules
3.5 GB and 72 s. Each command runs in a child under an address-space cap, and its peak is what
the child measures of itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.security.capped import MB, last_json, run_capped

RUN = ("import json, os, contextlib\nfrom plancheck.cli import main\n"
       "with open('out.txt', 'w+', encoding='utf-8') as out:\n"
       "    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):\n"
       "        code = main({arguments!r})\n"
       "    out.seek(max(0, out.tell() - 8000))\n"
       "    tail = out.buffer.read().decode('utf-8', 'replace')\n"
       "print(json.dumps([code, tail]))\n")


def _within(path: Path, arguments: list[str], cwd: Path) -> tuple[int, str]:
    size = path.stat().st_size
    budget = 10 * size + 100 * MB
    done = run_capped(RUN.format(arguments=arguments), cpu_seconds=120, timeout=300,
                      memory_bytes=2 * budget + 600 * MB, cwd=cwd)
    code, output = last_json(done)
    assert done.peak_bytes <= budget, (done.peak_bytes / MB, size / MB)
    return code, output


def test_a_15_mb_string_literal(tmp_path: Path) -> None:
    plan = tmp_path / "plan.wf"
    literal = "flood " * (15 * MB // 6)
    plan.write_text("plan uses disasterbench {\n  step 0 = GeoChat(image_path = \"scene.png\", "
                    f"question = {json.dumps(literal)})\n}}\n", encoding="utf-8")
    code, output = _within(plan, ["check", "--format", "json", str(plan)], tmp_path)
    assert code in (0, 1) and '"PC0' not in output.split('"code"')[0], output


def test_a_15_mb_policy_of_300000_rules(tmp_path: Path) -> None:
    policy = tmp_path / "p.wf"
    policy.write_text("policy p {\n" + "  require GeoChat before Flood_depth_prediction\n"
                      * 300_000 + "}\n", encoding="utf-8")
    plan = Path(__file__).resolve().parents[2] / "examples" / "policy_plan.json"
    code, output = _within(policy, ["check", str(plan), "--policy", str(policy)], tmp_path)
    assert code == 2 and "PC006" in output and "policy rules" in output, output


@pytest.mark.slow
def test_a_policy_at_the_rule_limit_is_checked(tmp_path: Path) -> None:
    policy = tmp_path / "p.wf"
    policy.write_text("policy p {\n" + "".join(
        f"  warn at most {i} GeoChat\n" for i in range(1, 10_001)) + "}\n", encoding="utf-8")
    plan = Path(__file__).resolve().parents[2] / "examples" / "policy_plan.json"
    code, output = _within(policy, ["check", str(plan), "--policy", str(policy)], tmp_path)
    assert code in (0, 1), output


def test_a_15_mb_hyphenated_name(tmp_path: Path) -> None:
    plan = tmp_path / "plan.wf"  # a tool name `a-a-a-...`: 2 MB of it took 213 MB
    plan.write_text("plan uses disasterbench {\n  step 0 = " + "a-" * (15 * MB // 2)
                    + "a(x = 1)\n}\n", encoding="utf-8")
    code, output = _within(plan, ["check", "--format", "json", str(plan)], tmp_path)
    assert code == 1, output  # an unknown tool, named without a "did you mean"
