"""The diagnostics of each real corpus of ``tests/data/real``, counted by code and pinned (as
miniwdl pins its corpora's lint counts): a change that makes plancheck report more or fewer of
a code on real inputs fails here, and is either a fix (update the pin, saying why in the
commit) or a regression. Each corpus is checked against its own pool (see PROVENANCE.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from plancheck.cli import main

REAL = Path(__file__).resolve().parents[1] / "data" / "real"

# corpus -> (its pool, or None; plans read; diagnostics by code)
PINNED: dict[str, tuple[str | None, int, dict[str, int]]] = {
    "taskbench/MiniMax-Text-01.excerpt.jsonl": ("taskbench/tool_desc.json", 10,
                                                {"PC202": 3, "PC301": 5}),
    "taskbench/data_multimedia.excerpt.jsonl": ("taskbench/tool_desc.json", 11,
                                                {"PC108": 1, "PC302": 1}),
    "sealtools/test_in_domain.jsonl": ("sealtools/tool.jsonl", 50,
                                       {"PC301": 11, "PC302": 3, "PC305": 7}),
    # One example call per tool, no pool `--tools` reads and no plan: PC105.
    "mcp/server-memory-examples.json": ("mcp/server-memory.json", 1, {"PC105": 1}),
    "mcp/server-filesystem-examples.json": ("mcp/server-filesystem.json", 1, {"PC105": 1}),
    # BFCL's questions carry their functions: a pool, checked by mistake (PC117).
    "bfcl/BFCL_v4_multiple.json": (None, 0, {"PC117": 1}),
    "bfcl/BFCL_v4_live_simple.json": (None, 0, {"PC117": 1}),
    "bfcl/BFCL_v4_parallel_multiple.json": (None, 0, {"PC117": 1}),
    "bfcl/BFCL_v4_live_parallel.json": (None, 0, {"PC117": 1}),
}


@pytest.mark.parametrize("corpus", list(PINNED))
def test_the_counts_of_each_code_are_pinned(corpus: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    pool, plans, by_code = PINNED[corpus]
    args = ["check", "--format", "json", str(REAL / corpus)]
    if pool is not None:
        args += ["--tools", str(REAL / pool)]
    main(args)
    summary = json.loads(capsys.readouterr().out)["summary"]
    assert (summary["plans"], summary["by_code"]) == (plans, by_code)


def test_every_corpus_with_plans_is_pinned() -> None:
    corpora = {str(p.relative_to(REAL)) for p in REAL.rglob("*")
               if p.suffix in (".jsonl", ".json") and "possible_answer" not in p.name
               and p.name not in ("tool.jsonl", "tool_desc.json")
               and not p.name.startswith(("server-", "mcp-server-"))}
    assert corpora - set(PINNED) == set()
