"""Tree-of-Thoughts (ToT): breadth-first search over partial answers with an LLM critic.

The paper's configuration (Appendix B.3, the reference's defaults): a horizon of 2 expansion
steps; at each step ``generate_samples`` (7) continuations are sampled from every active prefix,
a critic votes ``vote_samples`` (5) times for the best candidate, and the ``select`` (1)
candidates with the most votes are kept. Step 0 writes reasoning and stops before the plan
marker; the last step continues after the marker and writes the plan. When no vote can be read,
the first candidate that holds a plan is kept.
"""

from __future__ import annotations

import re
from typing import Any

from plancheck.planners.answer_extraction import has_answer
from plancheck.planners.base import PlanningTask
from plancheck.planners.llm import LLMPlanner, Proposal, user
from plancheck.planners.prompts import MARKER, agents_repr, fill
from plancheck.planners.session import ModelSession

# Step 0 must stop before the plan, so that the last step can branch on it.
_FIRST_STEP_STOP = [MARKER, "Response:", "Instruction:"]
_PLAN_LEAD = f"\n\n{MARKER} "
_LAST_STEP_VOTE_NOTE = (
    " Only choose a candidate whose plan is complete and follows the required structure."
)
_VOTE_PATTERNS = [
    re.compile(p, re.IGNORECASE)
    for p in (
        r"best\s+choice\s+is\s*:?\s*\**\s*(\d+)",
        r"best\s+(?:choice|candidate|option)\s*[:=]?\s*(\d+)",
        r"(?:choose|pick|select)\s+(?:choice|candidate|option)?\s*(\d+)",
        r"(?:choice|candidate|option)\s*(\d+)\s+(?:is|wins)",
    )
]


def parse_vote(text: str, choices: int) -> int | None:
    """The 0-based index of the candidate a critic answer votes for, or ``None``."""
    if not text or choices < 1:
        return None
    for pattern in _VOTE_PATTERNS:
        for match in pattern.finditer(text):
            value = int(match.group(1))
            if 1 <= value <= choices:
                return value - 1
    for line in reversed(text.strip().splitlines()):
        bare = re.fullmatch(r"\s*(\d+)\s*\.?\s*", line)
        if bare and 1 <= int(bare.group(1)) <= choices:
            return int(bare.group(1)) - 1
    return None


class TreeOfThoughtsPlanner(LLMPlanner):
    name = "tot"
    default_temperature = 0.5

    def __init__(self, *args: Any, steps: int = 2, generate_samples: int = 7,
                 vote_samples: int = 5, select: int = 1, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if min(steps, generate_samples, vote_samples, select) < 1:
            raise ValueError("ToT steps, samples, votes and select must be >= 1")
        self.steps = steps
        self.generate_samples = generate_samples
        self.vote_samples = vote_samples
        self.select = select

    def hyperparameters(self) -> dict[str, Any]:
        return {"steps": self.steps, "generate_samples": self.generate_samples,
                "vote_samples": self.vote_samples, "select": self.select}

    def propose(self, task: PlanningTask, session: ModelSession) -> Proposal:
        base = fill(self.prompts.text("tot", "generate_prompt"),
                    agents_desc=agents_repr(self.toolset), user_question=task.task_desc).rstrip()
        truncated: dict[str, bool] = {}
        frontier = [""]
        search: list[dict[str, Any]] = []
        for step in range(self.steps):
            last = step == self.steps - 1
            candidates = [c for prefix in frontier
                          for c in self._expand(session, base, prefix, step, last, truncated)]
            votes = self._vote(session, task.task_desc, candidates, last)
            ranked = sorted(range(len(candidates)), key=lambda i: votes[i], reverse=True)
            kept = [candidates[i] for i in ranked[: self.select]]
            if candidates and not any(votes):
                kept = next(([c] for c in candidates if has_answer(c)), kept)
            search.append({"step": step, "candidates": len(candidates), "votes": votes})
            frontier = kept
        final = next((y for y in frontier if has_answer(y)), frontier[0] if frontier else "")
        return Proposal(final, user(base + final), truncated.get(final, False),
                        {"search": search})

    def _expand(self, session: ModelSession, base: str, prefix: str, step: int, last: bool,
                truncated: dict[str, bool]) -> list[str]:
        prompt = base + prefix.strip()
        if last:
            prompt += _PLAN_LEAD
        replies = session.ask(user(prompt), temperature=self.temperature,
                              n=self.generate_samples,
                              stop=_FIRST_STEP_STOP if step == 0 else None,
                              purpose=f"generate-{step}")
        out: list[str] = []
        for reply in replies:
            if last:
                text = reply.text.strip()
                if not text:
                    continue
                # Keep the reasoning prefix and what follows the (last) marker the model wrote.
                candidate = prefix.strip() + _PLAN_LEAD + text.split(MARKER)[-1].strip()
            else:
                candidate = prefix + reply.text
            truncated[candidate] = reply.truncated
            out.append(candidate)
        return out

    def _vote(self, session: ModelSession, instruction: str, candidates: list[str],
              last: bool) -> list[int]:
        votes = [0] * len(candidates)
        if not candidates:
            return votes
        prompt = self.prompts.text("tot", "vote_prompt")  # used verbatim, as the reference does
        if last:
            prompt += _LAST_STEP_VOTE_NOTE
        prompt += f"\nTools: {agents_repr(self.toolset)}\nInstruction: {instruction}\nCandidates:\n"
        for number, candidate in enumerate(candidates, 1):
            prompt += f"Choice {number}: \n{candidate}\n"
        replies = session.ask(user(prompt), temperature=self.temperature, n=self.vote_samples,
                              purpose="vote")
        for reply in replies:
            index = parse_vote(reply.text, len(candidates))
            if index is not None:
                votes[index] += 1
        return votes
