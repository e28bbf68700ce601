"""Synthetic DSL tool pools of any size, for the compile speed test and bench.

Each pool has one type per tool in a random tree under ``Artifact`` (so subtype chains grow
with the pool), an implicit conversion on every seventh type, a polymorphic output on every
fifth tool and an optional input on every tool: every relation the Python encoding derives
something from.
"""

from __future__ import annotations

import random


def layered_pool(tools: int, seed: int = 0) -> str:
    """DSL source of a toolset named ``big`` with ``tools`` tools and as many types."""
    rng = random.Random(seed)
    lines = ["toolset big {", '  type Artifact "the root"']
    for i in range(tools):
        parent = "Artifact" if i < 4 else f"T{rng.randrange(i)}"
        conversion = f" ~> T{rng.randrange(i)}" if i > 4 and i % 7 == 0 else ""
        lines.append(f'  type T{i} <: {parent}{conversion} formats ".t{i % 13}"')
    for i in range(tools):
        polymorphic = "any " if i % 5 == 0 else ""
        lines.append(f"  tool tool{i} {{ in x: T{rng.randrange(tools)} "
                     f"in y?: T{rng.randrange(tools)} out z: {polymorphic}T{i} }}")
    lines.append("}")
    return "\n".join(lines) + "\n"


PLAN = 'plan "p" uses big { step 0 = tool1(x = "a.t1") }\n'
