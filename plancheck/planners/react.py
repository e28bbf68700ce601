"""ReAct: the model reasons in Thought / Action / Observation turns and ends with the plan.

As in the reference planners, the turns are written by the model in one completion (no tool is
executed between them; the "observation" is the model's own account of what a step yields).
"""

from __future__ import annotations

from plancheck.planners.base import PlanningTask
from plancheck.planners.llm import LLMPlanner
from plancheck.planners.prompts import agents_json, examples_block, fill, replace_fields


class ReActPlanner(LLMPlanner):
    name = "react"
    default_temperature = 0.0

    def prompt(self, task: PlanningTask) -> str:
        examples = examples_block(self.prompts.examples("react")) if self.options.few_shot else ""
        # The ReAct system prompt holds literal JSON braces: its two fields are replaced
        # literally, and the tool list goes in as JSON (the reference's behaviour).
        system = replace_fields(self.prompts.text("react", "system_prompt"),
                                agents_desc=agents_json(self.toolset), examples=examples)
        request = fill(self.prompts.text("react", "user_prompt"), task_desc=task.task_desc)
        return system + "\n" + request + self.json_suffix()
