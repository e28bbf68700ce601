"""Chain-of-Thought (CoT) with self-consistency: reasoning, then the plan after the marker
sentence, with few-shot examples; ``samples`` answers are drawn and the plan most of them agree
on wins (agreement is the evaluator's plan equivalence; ties go to the earliest sample).

With ``--check`` the vote is held among the samples whose plan passes the checker, when there
are any.
"""

from __future__ import annotations

from typing import Any

from plancheck.planners.answer_extraction import answer_key, reference_answer
from plancheck.planners.base import PlanningTask
from plancheck.planners.llm import LLMPlanner, Proposal, user
from plancheck.planners.prompts import agents_repr, examples_block, fill
from plancheck.planners.session import ModelSession

DEFAULT_SAMPLES = 16  # the reference's --num_chain_of_thought


class ChainOfThoughtPlanner(LLMPlanner):
    name = "cot"
    default_temperature = 0.0

    def __init__(self, *args: Any, samples: int = DEFAULT_SAMPLES, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if samples < 1:
            raise ValueError("samples must be >= 1")
        self.samples = samples

    def hyperparameters(self) -> dict[str, Any]:
        return {"samples": self.samples}

    def prompt(self, task: PlanningTask) -> str:
        examples = examples_block(self.prompts.examples("cot")) if self.options.few_shot else ""
        system = fill(self.prompts.text("cot", "system_prompt"),
                      agents_desc=agents_repr(self.toolset), examples=examples)
        request = fill(self.prompts.text("cot", "user_prompt"), task_desc=task.task_desc)
        return system + "\n" + request + self.json_suffix()

    def propose(self, task: PlanningTask, session: ModelSession) -> Proposal:
        messages = user(self.prompt(task))
        replies = session.ask(messages, temperature=self.temperature, n=self.samples,
                              response_format=self.plan_format(), purpose="samples")
        texts = [r.text.strip() for r in replies]
        chosen, votes, valid = self.vote(texts)
        details = {"samples": len(texts), "votes": votes, "selected_sample": chosen,
                   "samples_with_plan": valid}
        return Proposal(texts[chosen], messages, replies[chosen].truncated, details)

    def vote(self, texts: list[str]) -> tuple[int, int, int]:
        """(index of the chosen sample, its votes, samples that hold a plan)."""
        answers = [reference_answer(t) for t in texts]
        candidates = [i for i, a in enumerate(answers) if a is not None]
        valid = len(candidates)
        if self.options.check and candidates:
            from plancheck.planners.repair_loop import check_completion

            passing = [i for i in candidates if check_completion(texts[i], self.toolset).ok]
            candidates = passing or candidates
        if not candidates:
            return 0, 0, 0  # nothing to vote on (the reference picks at random; we pick the first)
        groups: dict[str, list[int]] = {}
        for index in candidates:
            answer = answers[index]
            assert answer is not None
            groups.setdefault(answer_key(answer), []).append(index)
        winner = max(groups.values(), key=len)  # max keeps the first of equals
        return winner[0], len(winner), valid

