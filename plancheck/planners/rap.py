"""Reasoning via Planning (RAP): Monte Carlo tree search over sub-question / sub-answer steps.

A node is the reasoning so far. Expanding it asks the model for ``subquestions`` (16) next
sub-questions ("Question 4.d: ..."), each scored for usefulness r0 by the model (Yes = 1, No = 0,
otherwise 0.5); evaluating a node samples ``confidence_samples`` (32) answers to its last
sub-question and takes the most common plan among them, whose share is the self-consistency r1.
The node's reward is ``r0**alpha * r1**(1-alpha)``. A node is terminal when its sub-question
starts "Now we can answer the question:" (forced at the last allowed depth) or at ``max_depth``.
The defaults are the reference's (``config/args.py``): 5 rollouts, depth 5, 16 sub-questions,
32 confidence samples, ``w_exp`` 1, alpha 0.5, r1 default 1. The answer is the last sub-answer
of the best-scoring trajectory.
"""

from __future__ import annotations

import math
import re
from typing import Any

from plancheck.planners.answer_extraction import answer_key, reference_answer
from plancheck.planners.base import PlanningTask
from plancheck.planners.llm import LLMPlanner, Proposal, user
from plancheck.planners.mcts import MCTS
from plancheck.planners.prompts import agents_repr, fill
from plancheck.planners.session import ModelSession

FINAL_QUESTION = "Now we can answer the question: "
_ANSWER_SEGMENT_RE = re.compile(r"(Answer\s+\d+(?:\.\d+)*:.*?)(?=Question|\Z)", re.DOTALL)
_YES_NO_RE = re.compile(r"\b(Yes|No)\b", re.IGNORECASE)


def usefulness(text: str) -> float:
    """r0 from a "Is the question useful?" answer: 1 for Yes, 0 for No, 0.5 when unclear.

    Like the reference, the first yes/no word is found case-insensitively but only a
    capitalised "Yes"/"No" counts; "yes" is unclear.
    """
    match = _YES_NO_RE.search(text)
    if match is None:
        return 0.5
    word = text[match.start():]
    if word.startswith("Yes"):
        return 1.0
    if word.startswith("No"):
        return 0.0
    return 0.5


class ReasoningNode:
    """A state of the sub-question decomposition (hashed by identity)."""

    def __init__(self, rap: ReasoningViaPlanning, session: ModelSession, prompt: str,
                 question_prompt: str, depth: int, r0: float) -> None:
        self.rap = rap
        self.session = session
        self.prompt = prompt
        self.question_prompt = question_prompt
        self.depth = depth
        self.r0 = r0
        self.r1 = rap.r1_default  # until the node is evaluated
        self._visited = False
        self._children: list[ReasoningNode] | None = None

    @property
    def visited(self) -> bool:
        return self._visited

    @property
    def reward(self) -> float:
        if self.r0 < 0 or self.r1 < 0:
            return min(self.r0, self.r1)
        alpha = self.rap.alpha
        return float(self.r0**alpha * self.r1 ** (1 - alpha))

    @property
    def is_terminal(self) -> bool:
        asked = self.prompt.split(f"Question {self.rap.index}:")[-1]
        return "Now we can answer" in asked or self.reward < -1 \
            or self.depth >= self.rap.max_depth

    def find_children(self) -> list[ReasoningNode]:
        if self._children is None:
            self._visited = True
            self.prompt, self.r1 = self.rap.answer(self.session, self.prompt, self.depth)
            if self.is_terminal:
                self._children = []
            else:
                self._children = [
                    ReasoningNode(self.rap, self.session, prompt, question_prompt,
                                  self.depth + 1, r0)
                    for prompt, question_prompt, r0 in self.rap.subquestions(
                        self.session, self.prompt, self.question_prompt, self.depth)
                ]
        return self._children


class ReasoningViaPlanning(LLMPlanner):
    name = "rap"
    default_temperature = 0.5

    def __init__(self, *args: Any, rollouts: int = 5, max_depth: int = 5, subquestions: int = 16,
                 confidence_samples: int = 32, w_exp: float = 1.0, alpha: float = 0.5,
                 r1_default: float = 1.0, max_answer_rounds: int = 32, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if min(rollouts, max_depth, subquestions, confidence_samples, max_answer_rounds) < 1:
            raise ValueError("RAP rollouts, depth, sample counts and rounds must be >= 1")
        self.rollouts = rollouts
        self.max_depth = max_depth
        self.n_subquestions = subquestions
        self.confidence_samples = confidence_samples
        self.w_exp = w_exp
        self.alpha = alpha
        self.r1_default = r1_default
        self.max_answer_rounds = max_answer_rounds
        self._truncated_answers: set[str] = set()  # of the task being planned
        index = self.prompts.section("rap").get("prompt_index", 4)
        self.index = int(index) if isinstance(index, int | str) and str(index).isdigit() else 4

    def hyperparameters(self) -> dict[str, Any]:
        return {"rollouts": self.rollouts, "max_depth": self.max_depth,
                "subquestions": self.n_subquestions,
                "confidence_samples": self.confidence_samples, "w_exp": self.w_exp,
                "alpha": self.alpha, "r1_default": self.r1_default,
                "max_answer_rounds": self.max_answer_rounds, "prompt_index": self.index,
                "mcts": {"prior": True, "aggr_reward": "mean", "aggr_child": "max",
                         "discount": 1.0}}

    # -- the model's two jobs --------------------------------------------------------------

    def answer(self, session: ModelSession, prompt: str, depth: int) -> tuple[str, float]:
        """Answer the node's last sub-question: (prompt with the answer, r1)."""
        if f"Question {self.index}." not in prompt:
            return prompt, 0.0  # the root has no sub-question to answer
        lead = f"Answer {self.index}.{depth - 1}:"
        asked = prompt + "\n" + lead + " "
        groups: dict[str, list[str]] = {}
        answered = 0
        for round_ in range(self.max_answer_rounds):
            # Each round asks for new samples of the same prompt: without first_sample the
            # response cache would answer every round with the first round's samples.
            replies = session.ask(user(asked), temperature=self.temperature,
                                  n=self.confidence_samples,
                                  stop=[f"Question {self.index}.{depth}:"], purpose="answer",
                                  first_sample=round_ * self.confidence_samples)
            for reply in replies:
                if not reply.text:
                    continue
                text = reply.text.split(lead, 1)[-1]
                text = text.split(f"Question {self.index}.{depth - 1}:", 1)[-1].strip()
                if reply.truncated and text:
                    self._truncated_answers.add(text)  # cut at max_tokens
                plan = reference_answer(text)
                if plan is None:
                    continue
                answered += 1
                groups.setdefault(answer_key(plan), []).append(text)
            if groups:
                break
        if not groups:
            return asked, 0.0  # no usable answer: the reference scores such a node 0
        best = max(groups.values(), key=len)
        return asked + best[0], len(best) / max(answered, 1)

    def subquestions(self, session: ModelSession, prompt: str, question_prompt: str,
                     depth: int) -> list[tuple[str, str, float]]:
        """The children of a node: (prompt, usefulness prompt, r0) per distinct sub-question."""
        lead = f"Question {self.index}.{depth}: "
        asked = prompt.rstrip() + "\n" + lead
        if depth + 1 >= self.max_depth:
            asked += " " + FINAL_QUESTION
        replies = session.ask(user(asked), temperature=self.temperature, n=self.n_subquestions,
                              stop=["Answer ", f"Answer {self.index}.{depth}:"],
                              purpose="subquestion")
        questions = list(dict.fromkeys(r.text.split(lead)[-1].strip() for r in replies))
        children = []
        for question in questions:
            # r0 is asked per sub-question, in order (the reference collects these answers in
            # completion order, which can pair a score with the wrong sub-question).
            probe = (question_prompt + f"New Question {self.index}.{depth}: "
                     + question.replace(FINAL_QUESTION, "") + "\nIs the question useful? ")
            verdict = session.ask_one(user(probe), temperature=self.temperature,
                                      purpose="usefulness")
            children.append((asked + question,
                             question_prompt.rstrip() + "\n" + lead + question,
                             usefulness(verdict.text)))
        return children

    # -- the search -------------------------------------------------------------------------

    def propose(self, task: PlanningTask, session: ModelSession) -> Proposal:
        self._truncated_answers = set()
        agents = agents_repr(self.toolset)
        question = f"\nQuestion {self.index}: {task.task_desc.strip()}\n"
        prompt = fill(self.prompts.text("rap", "subquestion_subanswer"), agents_list=agents)
        usefulness_prompt = fill(self.prompts.text("rap", "subquestion_usefulness"),
                                 agents_list=agents)
        root = ReasoningNode(self, session, prompt + question, usefulness_prompt + question,
                             depth=1, r0=0.0)
        search: MCTS[ReasoningNode] = MCTS(w_exp=self.w_exp, prior=True, aggr_reward="mean",
                                           aggr_child="max")
        best: str | None = None
        best_reward = -math.inf
        trajectories: list[str] = []
        head = f"Question {self.index}: "
        for _ in range(self.rollouts):
            search.rollout(root)
            node, value = search.max_mean_terminal(root)
            trajectory = head + node.prompt.split(head)[-1]
            trajectories.append(trajectory)
            if value > best_reward:
                best, best_reward = trajectory, value
        chosen = best or (trajectories[-1] if trajectories else root.prompt)
        segments = _ANSWER_SEGMENT_RE.findall(chosen)
        final = segments[-1].strip() if segments else chosen
        details = {"rollouts": self.rollouts, "best_reward": None if best is None
                   else round(best_reward, 6), "nodes": len(search.children)}
        # Truncated when the answer it ends with was one the model cut at max_tokens.
        truncated = any(final.endswith(text) for text in self._truncated_answers)
        return Proposal(final, user(root.prompt), truncated, details)
