"""Every field list a reader of plans, gold files, predictions and scores looks up, defined once.

The lists differ on purpose (a gold file's plan may sit in ``gt_solution``, a prediction's never
does), so each keeps its own name; what they share is this module, so a new field is added in
one place and every reader that should see it imports the same tuple. Order matters where a
reader takes the first key present.
"""

from __future__ import annotations

from typing import Final

__all__ = [
    "ANSWER_KEYS", "CALL_ARGUMENT_KEYS", "CALL_CONTAINER_KEYS", "CALL_NAME_KEYS",
    "CHAT_CONTAINER_KEYS", "COMPLETION_FIELDS", "CONTENT_KEYS", "DORA_RUN_RECORDS",
    "DORA_TASK_FILES", "DSL_SUFFIXES", "GOLD_PLAN_FIELDS", "ID_KEYS", "JSONL_SUFFIXES",
    "PLAN_FIELDS",
    "PLAN_WRAPPER_KEYS", "RAW_FIELD", "RECORD_PLAN_FIELDS", "RECORD_TOOL_KEYS",
    "RUN_CONFIG_FIELDS", "SCORED_FIELDS",
    "TRAJECTORY_ARGUMENT_KEYS", "TRAJECTORY_NAME_KEYS", "TRAJECTORY_SYNTAXES",
    "TRAJECTORY_WRAPPER_KEYS",
]

# -- plans ---------------------------------------------------------------------------------------
# Where a record (a line of a predictions file, a task with its answer) keeps the plan to check.
RECORD_PLAN_FIELDS: Final = ("structured_plan", "plan", "completion", "model_answer")
# The keys of an object wrapping a DisasterBench plan's step list.
PLAN_WRAPPER_KEYS: Final = ("structured_plan", "plan", "structured_task_plan", "task_plan",
                            "answer")
# Where a gold record keeps its plan.
GOLD_PLAN_FIELDS: Final = ("structured_plan", "plan", "gt_solution")

# -- scoring input records -----------------------------------------------------------------------
# A record's raw completion text, its parsed plan, and the raw text a selector kept.
COMPLETION_FIELDS: Final = ("completion",)
PLAN_FIELDS: Final = ("plan", "structured_plan", "model_answer")
RAW_FIELD: Final = "raw_selected_completion"

# -- ids -----------------------------------------------------------------------------------------
# The keys an item's id is read from, first present wins.
ID_KEYS: Final = ("task_id", "id", "sample_id", "question_id")

# -- tool calls ----------------------------------------------------------------------------------
# Where a record keeps its plan or its model's answer, for scoring tool calls (else the record
# itself is searched).
CONTENT_KEYS: Final = ("structured_plan", "plan", "gold_plan", "completion", "model_answer",
                       "prediction", "answer", "response")
# What a record carrying its own tools may hold that would be an answer to check.
ANSWER_KEYS: Final = ("ground_truth", "tool_calls", "calls", "answer", "output", "prediction",
                      "trajectory", "steps")
# The call readers' keys: a call's tool name and its arguments (first present wins), and the
# members whose value holds calls.
CALL_NAME_KEYS: Final = ("name", "tool", "tool_name", "api", "task", "function", "action")
CALL_ARGUMENT_KEYS: Final = ("arguments", "args", "parameters", "params", "param", "input",
                             "inputs", "action_input")
CALL_CONTAINER_KEYS: Final = ("tool_calls", "calls", "trajectory", "gold_trajectory",
                              "task_nodes", "calling", "ground_truth", "result", "messages",
                              "choices", "message", "content", "output", "function_call",
                              "candidates", "contents", "parts")
# The containers of chat transcripts (of the keys above): what they hold is written in some
# call shape's format (calls, results, text, images), never BFCL's decoded output.
CHAT_CONTAINER_KEYS: Final = frozenset({"messages", "choices", "message", "content", "output",
                                        "candidates", "contents", "parts"})
# DORA trajectories rank names differently (a step's ``tool`` before a ``name``).
TRAJECTORY_NAME_KEYS: Final = ("tool", "name", "tool_name", "function", "action")
TRAJECTORY_ARGUMENT_KEYS: Final = ("arguments", "args", "input", "inputs", "parameters",
                                   "params", "action_input")
TRAJECTORY_WRAPPER_KEYS: Final = ("trajectory", "gold_trajectory", "tool_calls", "calls")
# The reference syntaxes (names of the reference-syntax registry) a DORA-style trajectory's
# reading reads: DORA's `<key> from trajectory[N].obs` and DisasterBench's `<GENERATED>`.
TRAJECTORY_SYNTAXES: Final = frozenset({"dora", "generated"})

# -- files --------------------------------------------------------------------------------------
# The suffixes that make a file a JSONL batch (one JSON document a line), and a workflow DSL file.
JSONL_SUFFIXES: Final = (".jsonl", ".ndjson")
DSL_SUFFIXES: Final = (".wf",)

# -- DORA's files --------------------------------------------------------------------------------
# DORA's five dimensions and the names its files carry (`scripts/evaluate.py`'s `TASKS`): gold
# is `<tasks>/<task>.json` and a run `<run>/<task>/benchmark.jsonl` for each `task` below;
# DORA reads no other file of either directory.
DORA_TASK_FILES: Final = {
    "t1": "t1_perception_and_assessment",
    "t2": "t2_spatial_relation_analysis",
    "t3": "t3_operational_planning",
    "t4": "t4_multi_temporal_reasoning",
    "t5": "t5_multi_modal_report_synthesis",
}
DORA_RUN_RECORDS: Final = "benchmark.jsonl"

# -- what plancheck itself writes ----------------------------------------------------------------
# The fields of the per-item lines `plancheck score` writes, by the kind of gold plan: any one
# of these sets, in a record holding no plan, marks a file of scores.
SCORED_FIELDS: Final = (
    frozenset({"em", "tool_acc", "fpof_type", "diagnostics"}),  # DisasterBench
    frozenset({"source", "metrics", "unreadable", "diagnostics"}),  # tool calls
    frozenset({"benchmark", "question_id", "status", "t_any"}),  # DORA
)
# The members under which a record holds the tools it is asked about (BFCL's `function`).
RECORD_TOOL_KEYS: Final = ("function", "functions", "tools")
# The fields of the `config.json` that `plancheck plan --out DIR` writes beside its predictions.
RUN_CONFIG_FIELDS: Final = frozenset({"method", "hyperparameters", "toolset",
                                      "plancheck_version"})
