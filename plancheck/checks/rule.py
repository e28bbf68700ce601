"""A rule of the checker: a registered object with its phase, its codes, the facts it needs,
and hooks the checker calls as it walks the plan's steps once.

The hooks, each called with the phase's rank set on the findings (so what a hook reports is
ordered with its phase):

* :meth:`Rule.start`, once the facts of every step are known, before the first step;
* :meth:`Rule.clean`, on a step read from JSON (a candidate, see
  :mod:`plancheck.checks.view`): whether the rule's check of the step could find nothing it
  cannot report from the JSON. The step is settled (never lowered) when every rule says so;
* :meth:`Rule.step`, on each step in the order listed: ``view.settled`` says whether it is
  settled (work from ``view.bindings`` and ``view.fields``) or not (work from ``view.ir``,
  its IR);
* :meth:`Rule.lowered`, instead of :meth:`Rule.step` for a rule with nothing to do on a
  settled step: called on each step that is not settled;
* :meth:`Rule.finish`, after the last step.

A rule keeps nothing itself (one object serves every plan): what it carries from step to step
goes in ``context.state`` under its name. A rule whose :meth:`Rule.step` only uses what the
view gives in both ways (``view.call_key()``, the number, the tool) needs no :meth:`clean`;
``view.step()`` gives the IR of any step, lowering a settled one on demand.
"""

from __future__ import annotations

from plancheck.checks.context import CheckContext
from plancheck.checks.phases import rank
from plancheck.checks.view import StepView

__all__ = ["Rule"]

# The facts a rule may need built for it (see CheckContext): the data flow.
FACTS = frozenset({"flow"})
# The options that switch rules on: none (always on), the type checks, symbolic execution,
# and unreachable results (only with symbolic execution, PC503 being off by default).
OPTIONS = ("", "types", "interpret", "unreachable")


class Rule:
    """The base of every rule: override the hooks named in ``hooks``."""

    __slots__ = ("codes", "hooks", "name", "needs", "option", "phase", "rank")

    def __init__(self, name: str, phase: str, codes: tuple[str, ...], *,
                 hooks: tuple[str, ...] = ("step",), needs: tuple[str, ...] = (),
                 option: str = "") -> None:
        assert set(hooks) <= {"start", "clean", "step", "lowered", "finish"}, hooks
        assert not {"step", "lowered"} <= set(hooks), "step or lowered, not both"
        assert set(needs) <= FACTS, needs
        assert option in OPTIONS, option
        self.name = name
        self.phase = phase
        self.rank = rank(phase)
        self.codes = codes
        self.hooks = hooks
        self.needs = needs
        self.option = option

    def start(self, context: CheckContext) -> None:
        """Before the first step."""

    def clean(self, view: StepView, context: CheckContext) -> bool:
        """Whether the check of a candidate step finds nothing it cannot report from the
        JSON."""
        return True

    def step(self, view: StepView, context: CheckContext) -> None:
        """Check one step."""

    def lowered(self, view: StepView, context: CheckContext) -> None:
        """Check one step that is not settled (``view.ir`` is its IR)."""

    def finish(self, context: CheckContext) -> None:
        """After the last step."""
