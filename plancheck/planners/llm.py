"""What every LLM planning method shares: calling the model through a per-task session,
the optional reference post-processing, the optional checker loop, and the result record.

A method implements :meth:`LLMPlanner.propose`, which returns the text the method ends with and
the conversation a repair round continues; everything after that is common.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from plancheck.planners.base import DEFAULT_MAX_REQUESTS, PlanningTask, PlanResult
from plancheck.planners.prompts import PromptBook, agents_json, fill
from plancheck.planners.session import FormatPolicy, Messages, ModelSession

if TYPE_CHECKING:
    from plancheck.ir.nodes import Toolset
    from plancheck.planners.client import ChatClient
    from plancheck.planners.repair_loop import Attempt


@dataclass(frozen=True)
class LLMOptions:
    """Settings shared by all LLM methods (``plancheck plan`` flags)."""

    temperature: float | None = None  # None: the paper's per-method temperature
    max_tokens: int | None = None  # None: the client's default
    few_shot: bool = True
    postprocess: str = "none"  # "none" | "reference"
    check: bool = False
    max_repairs: int = 3
    schema: bool = False
    max_requests: int | None = DEFAULT_MAX_REQUESTS  # per task; None: no budget


@dataclass
class Proposal:
    """What a method ends with, before post-processing and checking."""

    completion: str
    context: Messages  # the conversation that produced it; repair rounds continue it
    truncated: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def user(content: str) -> Messages:
    """The reference sends each prompt as one user message (system and user text joined)."""
    return [{"role": "user", "content": content}]


class LLMPlanner:
    """Base of the five paradigms. One instance per worker thread (the client is not shared)."""

    name: ClassVar[str] = ""
    default_temperature: ClassVar[float] = 0.0

    def __init__(
        self,
        client: ChatClient,
        toolset: Toolset,
        prompts: PromptBook,
        options: LLMOptions | None = None,
        policy: FormatPolicy | None = None,
    ) -> None:
        self.client = client
        self.toolset = toolset
        self.prompts = prompts
        self.options = options or LLMOptions()
        self.policy = policy or FormatPolicy()
        self._outputs_by_tool = {n: list(t.output_names) for n, t in toolset.tools.items()}
        self._response_format: dict[str, Any] | None = None
        if self.options.schema:
            from plancheck.planners.schema import response_format

            self._response_format = response_format(toolset)

    def close(self) -> None:
        self.client.close()

    # -- what methods use ------------------------------------------------------------------

    @property
    def temperature(self) -> float:
        chosen = self.options.temperature
        return self.default_temperature if chosen is None else chosen

    def plan_format(self) -> dict[str, Any] | None:
        """The response_format for calls whose whole answer is a plan (``--schema``)."""
        return self._response_format

    def json_suffix(self) -> str:
        """Appended to prompts that ask for a plan under ``--schema``."""
        if not self.options.schema:
            return ""
        return fill(self.prompts.text("plancheck", "json_mode_suffix"))

    def prompt(self, task: PlanningTask) -> str:
        raise NotImplementedError

    def propose(self, task: PlanningTask, session: ModelSession) -> Proposal:
        """One request with the method's prompt (DP and ReAct; the search methods override)."""
        messages = user(self.prompt(task))
        reply = session.ask_one(messages, temperature=self.temperature,
                                response_format=self.plan_format())
        return Proposal(reply.text.strip(), messages, reply.truncated)

    def hyperparameters(self) -> dict[str, Any]:
        """The method's own settings, for ``config.json``."""
        return {}

    # -- the common tail --------------------------------------------------------------------

    def plan(self, task: PlanningTask) -> PlanResult:
        from plancheck.planners.client import ClientError

        session = ModelSession(self.client, self.policy, max_tokens=self.options.max_tokens,
                               max_requests=self.options.max_requests)
        result = PlanResult(task.task_id, self.name, None)
        truncated: dict[str, bool] = {}
        attempts: list[Attempt] = []
        raw: str | None = None
        try:
            proposal = self.propose(task, session)
            raw = result.completion = proposal.completion
            truncated[raw] = proposal.truncated
            result.details.update(proposal.details)
            if self.options.postprocess == "reference":
                result.completion = self._reference_postprocess(task, session, raw, truncated)
            if self.options.check:
                result.completion = self._check_loop(session, proposal, result.completion,
                                                     truncated, attempts)
        except ClientError as error:
            result.error = f"{type(error).__name__}: {error}"
            if attempts:
                from plancheck.planners.repair_loop import RepairResult

                result.completion = RepairResult(attempts).completion
        result.attempts = [a.to_record() for a in attempts]
        result.calls = session.calls
        result.prompt_tokens = session.prompt_tokens
        result.completion_tokens = session.completion_tokens
        result.latency_s = round(session.latency_s, 4)
        result.truncated = bool(result.completion is not None
                                and truncated.get(result.completion, False))
        if raw is not None and raw != result.completion:
            result.details["raw_completion"] = raw
        result.details["requests"] = session.requests
        result.details["request_budget"] = self.options.max_requests
        result.details["truncated_completions"] = session.truncated_completions
        result.details["call_log"] = session.call_log
        if self.options.schema:
            result.details["response_format"] = self.policy.level
        return result

    def _postprocess_text(self, text: str) -> str:
        from plancheck.planners.answer_extraction import reference_answer
        from plancheck.planners.postprocess import METHODS_WITH_POSTPROCESS, postprocess

        answer = reference_answer(text) if self.name in METHODS_WITH_POSTPROCESS else None
        if answer is None:
            return text
        return json.dumps(postprocess(self.name, answer, self._outputs_by_tool),
                          ensure_ascii=False)

    def _reference_postprocess(self, task: PlanningTask, session: ModelSession, raw: str,
                               truncated: dict[str, bool]) -> str:
        from plancheck.planners.answer_extraction import reference_answer
        from plancheck.planners.postprocess import (
            METHODS_WITH_FORMAT_RETRY,
            METHODS_WITH_POSTPROCESS,
            is_canonical,
            postprocess,
        )

        if self.name not in METHODS_WITH_POSTPROCESS:
            return raw
        answer = reference_answer(raw)
        if answer is None and self.name == "dp":
            return raw  # the reference gives up on a DP answer without any JSON array
        post = postprocess(self.name, answer, self._outputs_by_tool) if answer is not None \
            else None
        if post is not None and is_canonical(post):
            return self._remember(json.dumps(post, ensure_ascii=False), raw, truncated)
        if self.name in METHODS_WITH_FORMAT_RETRY:
            # One request to reformat (only the format) before giving up, as the reference does.
            prompt = fill(self.prompts.text("plancheck", "format_repair_prompt"),
                          task_desc=task.task_desc, agents_json=agents_json(self.toolset),
                          previous=raw)
            reply = session.ask_one(user(prompt), temperature=self.temperature,
                                    purpose="format-retry")
            retried = reference_answer(reply.text)
            if retried:
                post2 = postprocess(self.name, retried, self._outputs_by_tool)
                if is_canonical(post2):
                    truncated[json.dumps(post2, ensure_ascii=False)] = reply.truncated
                    return json.dumps(post2, ensure_ascii=False)
        if post is None:
            return raw
        return self._remember(json.dumps(post, ensure_ascii=False), raw, truncated)

    @staticmethod
    def _remember(text: str, source: str, truncated: dict[str, bool]) -> str:
        truncated.setdefault(text, truncated.get(source, False))
        return text

    def _check_loop(self, session: ModelSession, proposal: Proposal, completion: str,
                    truncated: dict[str, bool], attempts: list[Attempt]) -> str:
        from plancheck.planners.repair_loop import repair

        def generate(feedback: str) -> str:
            # Only the last failed attempt stays in context: the method's own conversation,
            # that attempt as the assistant's turn, and the feedback on it.
            messages = [*proposal.context,
                        {"role": "assistant", "content": attempts[-1].completion},
                        {"role": "user", "content": feedback + self.json_suffix()}]
            reply = session.ask_one(messages, temperature=self.temperature,
                                    response_format=self.plan_format(), purpose="repair")
            text = reply.text
            if self.options.postprocess == "reference":
                text = self._postprocess_text(text)
            truncated.setdefault(text, reply.truncated)
            return text

        outcome = repair(generate, completion, self.toolset, self.options.max_repairs,
                         template=self.prompts.text("plancheck", "repair_prompt"),
                         on_attempt=attempts.append)
        return outcome.completion
