"""The built-in DORA toolset (``--tools dora``): DORA's 108 tools, typed by plancheck.

``dora_tools.json`` is plancheck's own description, in MCP ``tools/list`` form with plancheck's
extension fields (see :mod:`plancheck.corpus.foreign`): per tool, its inputs with their JSON
kinds and required flags, and the keys its observation holds (read from DORA's tool bodies by
``scripts/make_dora_toolset.py``; ``tests/corpus/test_dora_toolset.py`` re-checks them).
DORA spells a tool ``seg.flood``; its agents write ``seg_flood`` or ``seg_flood(a, b)``, which
:func:`plancheck.dora.trajectory.tool_name` reads as the same tool.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from plancheck.ir.nodes import Toolset

DORA_PATH = Path(__file__).with_name("dora_tools.json")
DORA_NAME = "dora"


@cache
def dora_toolset() -> Toolset:
    from plancheck.corpus.foreign import foreign_toolset

    data = json.loads(DORA_PATH.read_text(encoding="utf-8"))
    toolset, _ = foreign_toolset(data, DORA_PATH)
    return toolset
