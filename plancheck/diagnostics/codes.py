"""The registry of diagnostic codes: one entry per code, grouped by the phase that reports it.

``PC0xx`` driver and environment, ``PC1xx`` parsing and plan shape, ``PC2xx`` name
resolution, ``PC3xx`` types and flows, ``PC4xx`` dependencies, ``PC5xx`` symbolic execution,
``PC6xx`` comparison with a gold plan, ``PC7xx`` tool pools, ``PC8xx`` policies (rules users
write on the calls of a plan: their violations, and policy files that cannot be used),
``PC9xx`` the plan against the user's request it answers (given one).
``plancheck explain CODE`` prints an entry.
"""

from __future__ import annotations

from plancheck.diagnostics.severity import Severity
from plancheck.records import FrozenRecord

# Code families (the code's third character) and the phase that reports them.
PHASES = {
    "0": "driver",
    "1": "parse",
    "2": "names",
    "3": "types",
    "4": "dependencies",
    "5": "interpretation",
    "6": "gold comparison",
    "7": "toolset",
    "8": "policy",
    "9": "request",
}

# The paper's Table 18: fine FPoF types grouped into three top-level categories.
FPOF_CATEGORY = {
    "agent_mismatch": "Tool Mismatch",
    "parameter_error": "Parameter Binding Error",
    "dependency_error": "Parameter Binding Error",
    "dependency_content_error": "Parameter Binding Error",
    "early_stop": "Structural Error",
    "hallucinated_extra_steps": "Structural Error",
    "format_error": "Structural Error",
    "empty_output": "Structural Error",
}


class CodeInfo(FrozenRecord):
    """A registered code: its name, default severity, one-line summary and explanation, the
    FPoF type it maps to, and whether it is on by default (off-by-default codes are reported
    only when selected)."""

    __slots__ = _fields = ("code", "name", "severity", "summary", "explanation", "fpof_type",
                           "default_enabled")

    def __init__(self, code: str, name: str, severity: Severity, summary: str,
                 explanation: str, fpof_type: str | None = None,
                 default_enabled: bool = True) -> None:
        self.code = code
        self.name = name
        self.severity = severity
        self.summary = summary
        self.explanation = explanation
        self.fpof_type = fpof_type
        self.default_enabled = default_enabled

    @property
    def phase(self) -> str:
        return PHASES[self.code[2]]

    @property
    def fpof_category(self) -> str | None:
        return FPOF_CATEGORY.get(self.fpof_type) if self.fpof_type else None


def _c(
    code: str, name: str, sev: Severity, summary: str, explanation: str, fpof: str | None = None,
    *, enabled: bool = True,
) -> CodeInfo:
    return CodeInfo(code, name, sev, summary, explanation.strip(), fpof, enabled)


E, W, N = Severity.ERROR, Severity.WARNING, Severity.INFO

_ALL = [
    # ---------------------------------------------------------------- driver
    _c("PC001", "io-error", E, "A file could not be read or written.",
       "The file named on the command line does not exist, is not readable, or is not text in "
       "UTF-8. Nothing in it was checked."),
    _c("PC002", "internal-error", E, "plancheck failed on this input; please report it.",
       "An unexpected exception was raised while checking this input. The message names the "
       "exception; the rest of the batch was still checked."),
    _c("PC003", "config-error", E, "The configuration is invalid.",
       "A value in `[tool.plancheck]` of pyproject.toml or in plancheck.toml, or a command-line "
       "option, is not one plancheck understands."),
    _c("PC004", "gold-not-found", E, "No gold plan for this prediction.",
       "The prediction names a task id that the gold file does not contain, or names none."),
    _c("PC005", "unpairable-prediction", E, "The prediction cannot be compared with its gold "
       "plan.",
       "The gold plan and the prediction are written in forms no metric compares, such as "
       "DisasterBench plan steps against tool calls. The prediction is not scored: no number "
       "is made up for it."),
    _c("PC006", "input-too-large", E, "An input is larger than the size limit.",
       "A plan file, a completion or a record of a JSONL batch is larger than the limit of "
       "`plancheck check --max-size` (16M unless raised), or holds more than 10,000 steps or "
       "calls or 200,000 fields in one plan, or more than 10,000 tools or 200,000 parameters "
       "in one pool. Nothing in it was checked: reading damaged text that large could take "
       "minutes. Raise the size limit to check a larger file."),
    _c("PC007", "unscorable-input", E, "A value the scorer cannot score.",
       "DORA's evaluator raises on this input (a tool name that is not a string, a ranking "
       "of objects, an integer too large for a float, infinite coordinates, a gold "
       "`final_answer` that is not an object), so no number is given for the run: the "
       "message names the record and the value. It is the input, not a fault of plancheck: "
       "correct the record, or leave it out."),
    # ---------------------------------------------------------------- parse
    _c("PC100", "invalid-json", E, "The document is not valid JSON.",
       "The file (or record) could not be parsed as JSON, and no repair was attempted or none "
       "succeeded. The label points at the first character the parser rejected."),
    _c("PC101", "no-plan-found", E, "No plan was found in the text.",
       "A raw model completion was searched for a JSON plan (a marker sentence, a code fence, a "
       "wrapper object, or a bare array of step objects) and none was found."),
    _c("PC102", "json-repaired", N, "Damaged JSON was repaired before checking.",
       "The plan was not valid JSON; plancheck repaired it (json-repair, doubled braces, "
       "trailing commas) the way the reference evaluator does, and checked the result. Use "
       "--strict-json to treat damaged JSON as an error instead."),
    _c("PC103", "plan-extracted", N, "The plan was taken from surrounding text.",
       "The plan was found inside free text: after a marker sentence, inside a markdown code "
       "fence, or inside a wrapper object such as {\"structured_plan\": [...]}."),
    _c("PC104", "alias-key", N, "A step uses an alias for a field name.",
       "A step wrote a field under a name the reference evaluator accepts as an alias "
       "(`agent_name`, `step_index`, `dependencies`, `dependency_content`, `input`). It was read "
       "as the canonical field. Use --strict-json to make this an error."),
    _c("PC105", "not-a-plan", E, "The document is not a list of steps.",
       "A plan is a JSON array of step objects (Appendix H.3 of the DisasterBench paper)."),
    _c("PC106", "step-not-object", E, "A step is not a JSON object.",
       "Every element of a plan must be an object with the fields agent, step, dependence, "
       "dependence_content, inputs and outputs."),
    _c("PC107", "missing-field", E, "A step lacks a required field.",
       "Every step needs agent, step, dependence, dependence_content, inputs and outputs."),
    _c("PC108", "wrong-field-type", E, "A step field has the wrong JSON type.",
       "agent is a string, step an integer, dependence an array of integers, "
       "dependence_content null or an object mapping a step number to a list of output keys, "
       "inputs an object and outputs an array of strings."),
    _c("PC109", "step-numbering", E, "Step numbers are not 0, 1, ..., n-1 in order.",
       "Steps are numbered from 0 in the order they are listed. A plan whose numbering skips, "
       "starts at 1, or goes backwards cannot be aligned with references or with a gold plan."),
    _c("PC110", "duplicate-step", E, "Two steps have the same number.",
       "Each step number may appear once; references to a repeated number are ambiguous."),
    _c("PC111", "unknown-field", W, "A step has a field the schema does not define.",
       "The field is ignored by the reference evaluator (it drops extra keys before comparing) "
       "but is not part of the plan schema."),
    _c("PC112", "empty-plan", E, "The plan has no steps.",
       "An empty array is not a plan; the reference evaluator scores it as an early stop."),
    _c("PC113", "noncanonical-dependence", W, "`dependence` is not written in canonical form.",
       "The schema writes dependence as an array: [-1] when the step depends on nothing, "
       "otherwise the step numbers it depends on. A bare -1 is accepted by the reference "
       "evaluator but is not canonical."),
    _c("PC114", "syntax-error", E, "The workflow DSL source has a syntax error.",
       "The DSL parser could not continue at the marked token; the help lists what it expected."),
    _c("PC115", "duplicate-argument", E, "An argument is given twice.",
       "A tool call names the same input twice; only one binding can be kept."),
    _c("PC116", "invalid-record", E, "A JSONL record does not hold a plan.",
       "A record must be a plan array or an object with one of the fields structured_plan, "
       "plan, completion or model_answer."),
    _c("PC117", "empty-input", W, "The input holds no plan to check.",
       "A JSONL batch (one plan or record a line) without a line that is not blank; a file "
       "that holds something else than plans: the per-item lines `plancheck score` writes, "
       "the config.json of `plancheck plan --out`, a tool pool (MCP, OpenAI, TaskBench, "
       "Seal-Tools, a DisasterBench manifest) or a benchmark's tasks (BFCL's questions); or "
       "a workflow DSL file that declares no plan (nothing, or only a toolset). Nothing in it "
       "was checked or scored. An empty batch is usually a run that wrote nothing; it is "
       "reported, never passed. Per-item files are read by `plancheck report`, tool pools "
       "are linted by `plancheck toolset lint` and given to `--tools`."),
    _c("PC118", "duplicate-key", W, "A JSON object holds the same key twice.",
       "Most JSON readers keep the last value of a repeated key, so `{\"agent\": \"Nope\", "
       "\"agent\": \"GeoChat\"}` is read as GeoChat: what was checked is not all that was "
       "written, and a reader that keeps the first value (C readers such as cJSON and yyjson "
       "do) reads another plan or call. Reported with and without --strict-json, in a plan's "
       "text and in a call's arguments written as JSON text; an error under the guard "
       "profile."),
    _c("PC119", "control-character", E, "A DSL string literal holds a raw control character.",
       "A TAB, ESC or other character below U+0020 is written as is inside a string literal "
       "of a plan, toolset or policy file. JSON strings do not allow them, and a terminal "
       "acts on some (ESC starts an escape sequence), so nothing in the file is read: write "
       "the character as an escape (`\\t`, `\\u001b`)."),
    _c("PC120", "number-too-long", E, "A DSL integer literal has too many digits to read.",
       "Python reads integers of at most 4,300 digits from text (a guard against "
       "quadratic-time conversion); a longer literal in a plan, toolset or policy file is "
       "refused and nothing in the file is read. Write a long identifier as a string."),
    _c("PC121", "doubled-braces", W, "The plan is written with doubled braces `{{ }}`.",
       "A prompt template's escaped braces were copied into the answer (`[{{\"agent\": ...}}]`). "
       "The text is not JSON; plancheck reads the plan with each doubled brace collapsed, but "
       "the reference evaluator mends it with json-repair, which splits the steps apart, so "
       "the plan it scores is not the one written. Under the `guard` profile this is an "
       "error: a consumer would run something other than what was checked. Write single "
       "braces."),
    _c("PC122", "ambiguous-call", W, "A call object names two tools or holds two sets of "
       "arguments.",
       "The object is read as a call of one shape (an OpenAI `function`, an Anthropic "
       "`input`, `{name, arguments}`), but it also holds another tool name or other "
       "arguments under a key another reader takes them from (`tool`, `action`, `args`, "
       "`input`, `parameters`, ...). plancheck checks the first reading; a loop whose code "
       "reads the other key runs a call that was never checked. Under the `guard` profile "
       "this is an error: what runs must be what was judged. Keep one tool name and one set "
       "of arguments in each call."),
    # ---------------------------------------------------------------- names
    _c("PC201", "unknown-tool", E, "The step calls a tool that is not in the tool pool.",
       "The tool name is not defined by the toolset. Tool names are case-sensitive; the help "
       "suggests the closest defined names. The step's arguments are not checked further."),
    _c("PC202", "unknown-input", E, "The step passes an input the tool does not take.",
       "The input key is not one of the tool's declared inputs."),
    _c("PC203", "missing-input", E, "The step does not pass a required input.",
       "The tool declares this input as required and the step does not bind it."),
    _c("PC204", "wrong-outputs", E, "The step's outputs are not exactly the tool's outputs.",
       "`outputs` lists the output keys the tool produces, all of them, in the tool's order."),
    _c("PC205", "malformed-reference", E, "A generated-value reference cannot be read.",
       "References to earlier results are written `<GENERATED>-k-<output_key>`, where k is the "
       "number of an earlier step and output_key one of that step's outputs."),
    _c("PC206", "reference-to-missing-step", E, "A reference names a step the plan lacks.",
       "The step number in the reference is not the number of any step of the plan."),
    _c("PC207", "forward-reference", E, "A reference points to the same or a later step.",
       "A step can only consume results of steps that run before it."),
    _c("PC208", "unknown-output-reference", E, "A reference names an output the step lacks.",
       "The referenced step's tool does not produce an output with that key."),
    _c("PC209", "placeholder-reference", W, "An argument is a placeholder, not a reference.",
       "The value reads like a reference to an earlier result (`<output of step 2>`) but is "
       "written in no reference syntax plancheck knows, so it is passed on as text. Write the "
       "value itself, or a reference in the syntax the rest of the plan uses."),
    # ---------------------------------------------------------------- types
    _c("PC301", "type-mismatch", E, "An input is bound to a result of the wrong type.",
       "The producing step's output type is not a subtype of the type the consuming input "
       "expects, and no implicit conversion exists between them. The primary label is at the "
       "consuming argument, the secondary label at the producing step."),
    _c("PC302", "literal-type-mismatch", W, "A literal path looks like the wrong kind of file.",
       "The type inferred from the path (its extension and name) is incompatible with the "
       "input's type. A path is weak evidence, so this is a warning."),
    _c("PC303", "implicit-conversion", W, "A result is used where a related type is expected.",
       "The value is convertible (for example a derived raster map stored as an image, consumed "
       "where imagery is expected) but is not a subtype of the expected type."),
    _c("PC304", "undeclared-flow", W, "The workflow graph declares no flow between these tools.",
       "The toolset's declared flows (the official workflow graph) do not list the producing "
       "tool as a source for the consuming tool. Types stay authoritative; this is a warning."),
    _c("PC305", "numeric-string", N, "A number is written as a numeric string.",
       "The parameter's JSON Schema asks for a number (or an integer) and the argument is a "
       "string that reads as one (\"38.0\"). Most tool runtimes convert it, and corpora write "
       "numbers this way throughout, so this is information; `check --strict-types` makes it "
       "an error."),
    _c("PC306", "inferred-type-mismatch", W, "A value copied from an earlier result has a "
       "type the input does not accept.",
       "In a transcript that holds tool results, an argument that equals a value an earlier "
       "call returned is an inferred flow from that result (provenance). When the output it "
       "came from is of a type the input does not accept, the flow is ill-typed, as a "
       "reference would be (PC301); but the value may equal that output by coincidence, so "
       "this is a warning. `check --no-provenance` turns the inference off."),
    # ---------------------------------------------------------------- dependencies
    _c("PC401", "dependence-mismatch", E,
       "`dependence` disagrees with the references the inputs make.",
       "dependence must list exactly the steps whose results the inputs reference ([-1] when "
       "none). plancheck derives it from the references and reports any difference; it does "
       "not silently rewrite it."),
    _c("PC402", "dependence-content-mismatch", E,
       "`dependence_content` disagrees with the references the inputs make.",
       "dependence_content maps each depended-on step to the output keys the inputs consume, "
       "and is null when the step depends on nothing."),
    _c("PC403", "too-many-predecessors", E, "The step depends on more steps than allowed.",
       "The toolset limits how many earlier steps one step may consume from (DisasterBench: "
       "one)."),
    _c("PC404", "dependency-conflict", E, "The plan's dependency constraints are inconsistent.",
       "Reported by `check --explain`: the labelled facts cannot all hold at once (a minimal "
       "unsatisfiable core computed with Z3). Removing or changing any one of them resolves "
       "this conflict."),
    _c("PC405", "solver-timeout", W, "The constraint solver timed out.",
       "Z3 did not finish within its time limit; no explanation or repair was computed."),
    # ---------------------------------------------------------------- interpretation
    _c("PC501", "use-before-definition", E, "A value is used before the step that makes it runs.",
       "Executing the steps in the order listed, this input reads a result that no step has "
       "produced yet."),
    _c("PC502", "unused-output", W, "An output is produced and never consumed.",
       "The step's other results feed later steps, but this one is used by none. Final steps' "
       "outputs are the plan's results and are not reported."),
    _c("PC503", "unreachable-result", N, "A step's results do not reach the final step.",
       "Nothing computed by this step flows into the plan's last step; it is a separate "
       "deliverable (or an unneeded step). Branching plans have such steps by design, so this "
       "code is reported only when selected (--select PC503).", enabled=False),
    _c("PC504", "repeated-call", W, "A step repeats an earlier step's call.",
       "The step calls the same tool with the same inputs as an earlier step, so it computes "
       "the same results again. Read the earlier step's results instead, or drop the step; "
       "a step meant to differ has an input written wrong."),
    # ---------------------------------------------------------------- gold comparison
    _c("PC601", "empty-output", E, "The prediction is empty.",
       "The model produced no answer that could be extracted.", "empty_output"),
    _c("PC602", "format-error", E, "The prediction is not a list of step objects.",
       "The extracted answer is not a JSON list, or one of its items is not an object.",
       "format_error"),
    _c("PC603", "step-id-mismatch", E, "A step number differs from the gold plan's.",
       "At this position the gold plan has a different step number.", "parameter_error"),
    _c("PC604", "tool-mismatch", E, "A step calls a different tool than the gold plan.",
       "The tool differs from the gold plan's at the same position: the paper's Tool Mismatch, "
       "usually a look-alike tool.", "agent_mismatch"),
    _c("PC605", "input-mismatch", E, "A step's inputs differ from the gold plan's.",
       "Input keys or values differ (values are compared type-exactly).", "parameter_error"),
    _c("PC606", "output-mismatch", E, "A step's outputs differ from the gold plan's.",
       "The outputs list differs from the gold plan's (order matters).", "parameter_error"),
    _c("PC607", "gold-dependence-mismatch", E, "A step's dependence differs from the gold plan's.",
       "The sorted dependence list differs from the gold plan's.", "dependency_error"),
    _c("PC608", "gold-dependence-content-mismatch", E,
       "A step's dependence_content differs from the gold plan's.",
       "dependence_content differs from the gold plan's.", "dependency_content_error"),
    _c("PC609", "early-stop", E, "The prediction stops before the gold plan ends.",
       "Every aligned step matches, but the gold plan has more steps.", "early_stop"),
    _c("PC610", "hallucinated-steps", E, "The prediction has steps the gold plan lacks.",
       "Every aligned step matches, but the prediction continues past the gold plan's end.",
       "hallucinated_extra_steps"),
    _c("PC611", "evaluator-crash", E, "The reference evaluator crashes on this prediction.",
       "The official harness records a crash of the evaluator (for example on a dependence "
       "list mixing numbers and strings) as error type `exception` at step 0, with all four "
       "metrics false. It is counted with the structural errors.", "exception"),
    # ---------------------------------------------------------------- toolsets
    _c("PC701", "unknown-type", E, "A type name is not declared in the toolset.",
       "Every parameter and every supertype must name a declared type."),
    _c("PC702", "duplicate-definition", E, "A name is defined twice in the toolset.",
       "Types, tools and families each have one definition."),
    _c("PC703", "type-cycle", E, "The subtype relation has a cycle.",
       "A type cannot be its own (indirect) supertype."),
    _c("PC704", "flow-unknown-tool", W, "A declared flow names a tool the toolset lacks.",
       "The flow is ignored."),
    _c("PC705", "tool-name-alias", W, "A tool is known under two names; one was mapped.",
       "The official workflow graph calls a tool by a different name than the tool manifest "
       "(`perception_data_convert_tool` vs `precipitation_data_convert_tool`); plancheck maps "
       "the graph's name to the manifest's."),
    _c("PC706", "invalid-toolset", E, "The tool pool description is malformed.",
       "The toolset file (DSL, manifest, MCP or OpenAI tools) does not have the expected shape."),
    _c("PC707", "unknown-family", W, "A tool names a workflow family that is not declared.",
       "Declare the family with `family NAME \"description\"` in the toolset."),
    _c("PC708", "case-variant-name", W, "Two names in the pool differ only in case.",
       "Two types (or two tools) are spelled alike but for case, such as TaskBench's `Image` "
       "and `image`. They are different names to the checker: an output of the one bound to "
       "an input of the other is a type mismatch in every plan that does it."),
    _c("PC709", "unused-type", W, "A type is declared but nothing uses it.",
       "No tool takes or produces the type and no used type derives from it."),
    _c("PC710", "repeated-definition", W, "A tool is defined twice, identically.",
       "The pool lists the same definition more than once; the copies are ignored. "
       "Definitions that differ are an error (PC702)."),
    _c("PC711", "invalid-input-schema", W, "A tool's input schema is not a valid JSON Schema.",
       "The JSON Schema validator refuses the schema a foreign pool (MCP, OpenAI tools) gives "
       "for a tool's arguments: a `type` that is no JSON type, a keyword with a value of the "
       "wrong kind. The guard cannot validate calls to such a tool, so it lets every call "
       "through unchecked: fix the schema."),
    # ---------------------------------------------------------------- policies
    # A violation takes the severity of its rule (deny: error, warn: warning).
    _c("PC801", "policy-require-before", E, "A call runs before the call a policy requires "
       "first.",
       "A rule `require A before B` holds when every call of B has a call of A somewhere before "
       "it. The label is at the call of B; the note names the rule and where the policy file "
       "states it."),
    _c("PC802", "policy-forbid-after", E, "A call runs after a call that a policy says must "
       "not precede it.",
       "A rule `forbid A after B` holds when no call of A comes after a call of B. The label is "
       "at the call of A, the secondary label at the earlier call of B."),
    _c("PC803", "policy-count", E, "A tool is called more often than a policy allows.",
       "A rule `at most N A` allows N calls of A in the whole plan (`at most N A per W calls`: "
       "in any W consecutive calls). The label is at the first call over the limit; the "
       "secondary labels at the N calls before it."),
    _c("PC804", "policy-argument", E, "An argument breaks a policy's predicate.",
       "A rule `require T.path OP VALUE` (or `forbid ...`) constrains an argument with a "
       "comparison, `matches REGEX` (the whole value) or `in [...]`; `unless C before` excuses "
       "the calls that come after a call of C. An argument the call does not pass, or whose "
       "value is a reference to a result not yet known, does not fire the rule."),
    _c("PC805", "policy-flow", E, "A value flows where a policy forbids it.",
       "A rule `forbid flow from A[.path] to B.arg` holds when no value returned by a call of A "
       "reaches that argument of B, directly or through other calls (taint passes through a "
       "call that received it). Flows are explicit references and, in the guard, values the "
       "model copied from an earlier result (provenance: an exact copy, or a shared substring "
       "of 8 characters or more)."),
    _c("PC806", "policy-required-call", E, "A complete plan lacks a call a policy requires.",
       "A rule `require A` holds when the plan calls A somewhere. A prefix of a plan (a guard "
       "still running, `--prefix`) can still meet it and is not a violation."),
    _c("PC810", "policy-invalid", E, "A policy file cannot be used.",
       "The file declares no policy, or a rule is malformed: a regular expression that does not "
       "compile, `in` without a list, a count or window below the smallest that means "
       "anything. Nothing was checked against it (exit 2)."),
    _c("PC811", "policy-unknown-name", E, "A policy names a tool, family or argument the pool "
       "lacks.",
       "Every tool name, family and argument path of a rule must exist in the tool pool the "
       "plans are checked against (a glob must match one of its tools). The help suggests the "
       "closest names. Nothing was checked against the policy (exit 2)."),
    _c("PC812", "policy-vacuous", E, "A policy rule can never hold or never fire.",
       "A rule that no trace can satisfy (`require A before A`, `at most -1 A`, `require T.x in "
       "[]`) or that no call can trigger (a comparison with a value that is not a number, a "
       "glob that matches no tool of the pool) is a mistake in the policy, not a constraint. "
       "Nothing was checked against it (exit 2)."),
    _c("PC813", "policy-contradiction", E, "Two policy rules contradict each other.",
       "No plan can satisfy these rules together: Z3 found them unsatisfiable as a set, and the "
       "labels are a minimal such set (for instance `require deploy` and `at most 0 deploy`, or "
       "`transfer.amount <= 100` and `transfer.amount >= 500` with no `unless`). Nothing was "
       "checked against the policy (exit 2)."),
    _c("PC814", "policy-timeout", E, "The policy check ran out of time.",
       "The solver deciding the policy rules on this plan did not finish within `--timeout-ms`. "
       "The plan was not shown to satisfy its policies, so this is an error: raise the limit "
       "to decide it."),
    # ---------------------------------------------------------------- the request
    # Run only on a plan given the user's request (`check --task`, a record's `task`, `query`,
    # `user_request`, `question`, `task_desc` or `instruction`): docs/task-checks.md.
    _c("PC901", "invented-value", W, "A value the user must supply is not in the request.",
       "An argument names something only the user can give (a file path, a URL, an id, a "
       "name), and its value is written neither in the request, nor in the result of an "
       "earlier call, nor in the tool's schema (`enum`, `const`, `default`): the model likely "
       "made it up (a train number used as a ticket id, a file the request never named). The "
       "help suggests the value of the request it most resembles, when one does."),
    _c("PC902", "request-input-unused", W, "A file or URL the request gives is used by no "
       "call.",
       "The request names an input (a file path or URL it does not introduce as a result to "
       "write), and no argument of the plan passes it: the plan likely stops early, or binds "
       "another value where this one belongs."),
    _c("PC903", "request-steps", W, "The plan makes fewer or more calls than the steps the "
       "request numbers or chains.",
       "The request enumerates its steps (`Step 1: ...`, `1. ...`) and the plan's number of "
       "calls differs: a step the request asks for is missing, or the plan adds calls it did "
       "not ask for. Or the request chains actions with sequence words (`..., then ...`, "
       "`and finally ...`) and the plan makes fewer calls than it chains actions: the plan "
       "likely stops early (an action may take several calls, so more calls are not "
       "reported)."),
    _c("PC904", "request-order", W, "The plan reads the request's inputs in another order "
       "than the request gives them.",
       "Two calls read inputs the request names, in the opposite order to the request (the "
       "call reading a later input comes first) while neither depends on the other nor reads "
       "an input the other reads: the plan "
       "may answer the request's steps out of order, or bind each input to the other's call."),
    _c("PC905", "value-kind-mismatch", W, "A literal's kind contradicts its parameter.",
       "A literal is a kind of value (a file of a media kind, by its extension; a URL; a "
       "number; a date; an e-mail address) that its parameter's type, JSON Schema `format` or "
       "description says it is not: an audio file (`.wav`) where a video is expected, a URL "
       "where an e-mail address is."),
]

CODES: dict[str, CodeInfo] = {info.code: info for info in _ALL}
BY_NAME: dict[str, CodeInfo] = {info.name: info for info in _ALL}

assert len(CODES) == len(_ALL), "duplicate diagnostic code"
assert len(BY_NAME) == len(_ALL), "duplicate diagnostic name"


def register(info: CodeInfo) -> None:
    """Add a code declared where its rule is (a rule module's own, or a plugin's): the one
    entry of that code, read as the table's are (``plancheck explain``, ``--select``, the
    renderers). The same entry registered again is a no-op; another entry for a code or a
    name already taken is an error."""
    for table, key in ((CODES, info.code), (BY_NAME, info.name)):
        found = table.get(key)
        if found is not None and found != info:
            raise ValueError(f"diagnostic {key} is already registered as {found.code} "
                             f"{found.name}")
    CODES[info.code] = info
    BY_NAME[info.name] = info
    ordered = sorted(CODES.items())  # listed by code, wherever they were declared
    CODES.clear()
    CODES.update(ordered)
