"""The order in which the checker's phases report what they find.

Each rule belongs to one phase. The fused checker runs every rule a step at a time, so its
findings arrive interleaved; :class:`~plancheck.diagnostics.findings.Findings` sorts them
(stably) by the rank of their phase, which restores the order of the phases run one after the
other. The rank of a phase is its place in :data:`PHASE_ORDER`: adding a phase is one entry
there, and every rank below follows from it.
"""

from __future__ import annotations

from typing import Final

# Bottom to top. Lowering comes first (a Findings' phase starts at 0, which is lowering's);
# each later phase reads what the earlier ones established about a step.
PHASE_ORDER: Final = (
    "lowering",        # PC1xx: reading the steps (reported by the lowering, not by a rule)
    "numbering",       # PC109, PC110: step numbers
    "names",           # PC201-PC204: tools, input and output keys
    "references",      # PC205-PC208: what each reference names
    "dependencies",    # PC401-PC403: dependence and dependence_content
    "types",           # PC301-PC304: types and declared flows
    "early reads",     # PC501: a result read before its step runs
    "repeated calls",  # PC504: the same call made twice
    "unused outputs",  # PC502: results no later step reads
    "unreachable",     # PC503: results that do not reach the last step
    "request",         # PC9xx: the plan against the user's request (given one)
)


def rank(phase: str) -> int:
    """The place of ``phase`` in :data:`PHASE_ORDER` (a name not in it is a bug)."""
    return PHASE_ORDER.index(phase)


LOWERING: Final = rank("lowering")
assert LOWERING == 0, "Findings start in the lowering phase"
