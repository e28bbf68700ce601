"""A rule of the checker: a registered object with its phase, its codes, the facts it needs,
and hooks the checker calls as it walks the plan's steps once.

The hooks, each called with the phase's rank set on the findings (so what a hook reports is
ordered with its phase):

* :meth:`Rule.start`, once the facts of every step are known, before the first step;
* :meth:`Rule.clean`, on the steps read from JSON (the candidates, see
  :mod:`plancheck.checks.view`): it unsettles each the rule's check may find something in that
  it cannot report from the JSON. A step is settled (never lowered) when no rule unsettles it;
* :meth:`Rule.step`, on each step in the order listed, settled or not (for a rule that needs
  only what the view gives both ways: ``view.call_key()``, the number, the tool);
* or instead, for a rule that works from the JSON of a settled step: :meth:`Rule.settled` on
  each run of consecutive settled steps (work from ``view.reads``, ``view.literals`` and
  ``view.fields``) and :meth:`Rule.lowered` on each step that is not settled (work from
  ``view.ir``, its IR), either left out when the rule has nothing to do on such a step. The
  walk calls the one that fits, so a hook never asks which kind of step it has;
* :meth:`Rule.finish`, after the last step.

The walk hands :meth:`Rule.clean` and :meth:`Rule.settled` all the steps they apply to at once
rather than one call a step: in plain Python a call and its set-up cost as much as a clean
step's check, and a three-step plan would make some thirty of them. So within a run of settled
steps each rule sees every step before the next rule starts (findings still come out in phase
order, then step order, as :class:`~plancheck.diagnostics.findings.Findings` sorts them): what
a rule does on a settled step may read that step's view and facts, and its own state, never
what another rule does on the same run.

A rule keeps nothing itself (one object serves every plan): what it carries from step to step
goes in ``context.state`` under its name. A rule whose :meth:`Rule.step` only uses what the
view gives in both ways needs no :meth:`clean`; ``view.step()`` gives the IR of any step,
lowering a settled one on demand.
"""

from __future__ import annotations

# (A dependency of its own: mypyc takes an ``if TYPE_CHECKING`` fallback for unreachable code
# and the compiled module raised on import.)
from mypy_extensions import mypyc_attr

from plancheck.checks.context import CheckContext
from plancheck.checks.phases import PHASE_ORDER, rank
from plancheck.checks.view import StepView
from plancheck.diagnostics.codes import CodeInfo, register

__all__ = ["Rule"]

# The facts a rule may need built for it (see CheckContext): the data flow.
FACTS = frozenset({"flow"})
# The options that switch rules on: none (always on), the type checks, symbolic execution,
# unreachable results (only with symbolic execution, PC503 being off by default), and the
# user's request (the PC9xx rules, run only on a plan given its request: checks/request_check.py).
OPTIONS = ("", "types", "interpret", "unreachable", "request")
HOOKS = frozenset({"start", "clean", "step", "settled", "lowered", "finish"})


@mypyc_attr(allow_interpreted_subclasses=True)  # a plugin's rule, or a rule run uncompiled
class Rule:
    """The base of every rule: override the hooks named in ``hooks``. ``codes``: the codes it
    reports, each a code of :data:`plancheck.diagnostics.codes.CODES` or the whole entry of a
    code the rule declares itself (a :class:`~plancheck.diagnostics.codes.CodeInfo`: its name,
    severity and text, written once, there)."""

    __slots__ = ("codes", "hooks", "name", "needs", "option", "phase", "rank")

    def __init__(self, name: str, phase: str, codes: tuple[str | CodeInfo, ...], *,
                 hooks: tuple[str, ...] = ("step",), needs: tuple[str, ...] = (),
                 option: str = "") -> None:
        if phase not in PHASE_ORDER:  # (a plugin's rule: said to its author, not asserted)
            raise ValueError(f"rule `{name}` names an unknown phase `{phase}` (the phases: "
                             + ", ".join(f"`{p}`" for p in PHASE_ORDER[1:]) + ")")
        assert set(hooks) <= HOOKS, hooks
        assert "step" not in hooks or not {"settled", "lowered"} & set(hooks), \
            "step, or settled and lowered"
        assert set(needs) <= FACTS, needs
        assert option in OPTIONS, option
        self.name = name
        self.phase = phase
        self.rank = rank(phase)
        for code in codes:
            if isinstance(code, CodeInfo):
                register(code)
        self.codes = tuple(c.code if isinstance(c, CodeInfo) else c for c in codes)
        self.hooks = hooks
        self.needs = needs
        self.option = option

    def start(self, context: CheckContext) -> None:
        """Before the first step."""

    def clean(self, views: list[StepView], context: CheckContext) -> None:
        """Of the candidate steps ``views`` (in the order listed; each ``view.settled`` until
        a rule says otherwise), unsettle each whose check may find something the rule cannot
        report from the JSON (``view.settled = False``). Skip those already unsettled: the
        checks of the rules before may be what this one's relies on (that the inputs are the
        tool's, say)."""

    def step(self, view: StepView, context: CheckContext) -> None:
        """Check one step, settled or not."""

    def settled(self, views: list[StepView], context: CheckContext) -> None:
        """Check a run of consecutive settled steps, in order (``view.reads``,
        ``view.literals``, ``view.fields``: each one's JSON as read). Unless overridden:
        :meth:`step` on each (what a rule with a step hook does)."""
        for view in views:
            self.step(view, context)

    def lowered(self, view: StepView, context: CheckContext) -> None:
        """Check one step that is not settled (``view.ir`` is its IR). Unless overridden:
        :meth:`step`."""
        self.step(view, context)

    def finish(self, context: CheckContext) -> None:
        """After the last step."""
