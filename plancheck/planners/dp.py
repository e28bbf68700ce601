"""Direct Planning (DP): one request, the plan only, no reasoning and no examples."""

from __future__ import annotations

from plancheck.planners.base import PlanningTask
from plancheck.planners.llm import LLMPlanner
from plancheck.planners.prompts import agents_repr, examples_block, fill


class DirectPlanner(LLMPlanner):
    name = "dp"
    default_temperature = 0.0

    def prompt(self, task: PlanningTask) -> str:
        examples = examples_block(self.prompts.examples("dp")) if self.options.few_shot else ""
        system = fill(self.prompts.text("dp", "system_prompt"),
                      agents_desc=agents_repr(self.toolset), examples=examples)
        request = fill(self.prompts.text("dp", "user_prompt"), task_desc=task.task_desc)
        return system + "\n" + request + self.json_suffix()
