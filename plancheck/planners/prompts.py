"""Prompt templates for the planning methods, and how they are filled in.

The templates live in YAML files laid out like the DisasterBench reference planners'
``baselines/baseline_prompts/*.yaml``: one top-level section per method (``DIRECT_PLANNING``,
``CHAIN_OF_THOUGHT``, ``TREE_OF_THOUGHTS``, ``REASONING_VIA_PLANNING``, ``REACT``) with the same
field names. plancheck ships its own wording (``plancheck/planners/prompts/*.yaml``);
``--prompts FILE`` loads any file with that layout, so someone holding the official prompts can
run them exactly. Sections missing from the file fall back to plancheck's own.

Filling follows the reference's observable behaviour, because the paper's models saw exactly
that text: templates are filled with ``str.format`` semantics (``{name}`` is a field, ``{{`` and
``}}`` are literal braces), except the ReAct system prompt whose two fields are replaced
literally; the tool list is inserted as the Python ``repr`` of a manifest-shaped dict (``json``
for ReAct); the ToT vote prompt is used verbatim.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from plancheck.fileio import read_text_limited
from plancheck.ir.nodes import Toolset

BUILTIN_DIR = Path(__file__).with_name("prompts")

SECTIONS: dict[str, str] = {
    "dp": "DIRECT_PLANNING",
    "cot": "CHAIN_OF_THOUGHT",
    "tot": "TREE_OF_THOUGHTS",
    "rap": "REASONING_VIA_PLANNING",
    "react": "REACT",
    "plancheck": "PLANCHECK",
}
_BUILTIN_FILES = {
    "DIRECT_PLANNING": "dp.yaml",
    "CHAIN_OF_THOUGHT": "cot.yaml",
    "TREE_OF_THOUGHTS": "tot.yaml",
    "REASONING_VIA_PLANNING": "rap.yaml",
    "REACT": "react.yaml",
    "PLANCHECK": "plancheck.yaml",
}
# The fields each section must provide (the reference's own names).
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "DIRECT_PLANNING": ("system_prompt", "user_prompt"),
    "CHAIN_OF_THOUGHT": ("system_prompt", "user_prompt"),
    "TREE_OF_THOUGHTS": ("generate_prompt", "vote_prompt"),
    "REASONING_VIA_PLANNING": ("subquestion_subanswer", "subquestion_usefulness", "prompt_index"),
    "REACT": ("system_prompt", "user_prompt"),
    "PLANCHECK": ("repair_prompt", "format_repair_prompt", "json_mode_suffix"),
}

MARKER = "The structured task plan is:"


class PromptError(Exception):
    """A prompt file that cannot be used (unreadable, not the expected layout)."""


@dataclass(frozen=True)
class PromptBook:
    """All sections, each a mapping of field name to value, and where they came from."""

    sections: dict[str, dict[str, Any]]
    source: str  # "builtin" or the path of the user's file
    digest: str  # sha256 of the user's file (or of the built-in files)
    overridden: tuple[str, ...] = field(default=())  # sections taken from the user's file

    def section(self, method: str) -> dict[str, Any]:
        return self.sections[SECTIONS[method]]

    def text(self, method: str, name: str) -> str:
        value = self.section(method).get(name)
        if not isinstance(value, str):
            raise PromptError(f"{SECTIONS[method]}.{name} must be a string")
        return value

    def examples(self, method: str) -> list[dict[str, str]]:
        raw = self.section(method).get("examples") or []
        return [e for e in raw if isinstance(e, dict)]


def _read_yaml(path: Path) -> dict[str, Any]:
    import yaml

    try:
        data = yaml.safe_load(read_text_limited(path))
    except OSError as error:
        raise PromptError(f"cannot read {path}: {error.strerror or error}") from None
    except yaml.YAMLError as error:
        raise PromptError(f"{path} is not valid YAML: {error}") from None
    if not isinstance(data, dict):
        raise PromptError(f"{path}: expected a mapping of sections such as DIRECT_PLANNING")
    return data


def _check_section(name: str, section: Any, origin: str) -> dict[str, Any]:
    if not isinstance(section, dict):
        raise PromptError(f"{origin}: section {name} must be a mapping of fields")
    missing = [f for f in REQUIRED_FIELDS[name] if f not in section]
    if missing:
        raise PromptError(f"{origin}: section {name} lacks {', '.join(missing)}")
    examples = section.get("examples")
    if examples is not None and not (
        isinstance(examples, list)
        and all(isinstance(e, dict) and "input" in e and "output" in e for e in examples)
    ):
        raise PromptError(f"{origin}: {name}.examples must be a list of {{input, output}}")
    return dict(section)


def load_prompts(path: str | Path | None = None) -> PromptBook:
    """plancheck's own prompts, with the sections of ``path`` (if given) taking precedence."""
    sections: dict[str, dict[str, Any]] = {}
    builtin_hash = hashlib.sha256()
    for name, filename in _BUILTIN_FILES.items():
        file = BUILTIN_DIR / filename
        builtin_hash.update(file.read_bytes())
        sections[name] = _check_section(name, _read_yaml(file).get(name), str(file))
    if path is None:
        return PromptBook(sections, "builtin", builtin_hash.hexdigest())
    user_path = Path(path)
    user = _read_yaml(user_path)
    known = [name for name in user if name in REQUIRED_FIELDS]
    if not known:
        raise PromptError(
            f"{user_path}: no known section (expected one of {', '.join(REQUIRED_FIELDS)})"
        )
    for name in known:
        sections[name] = _check_section(name, user[name], str(user_path))
    digest = hashlib.sha256(user_path.read_bytes()).hexdigest()
    return PromptBook(sections, str(user_path), digest, tuple(known))


# --------------------------------------------------------------------------- filling in

_FIELD_RE = re.compile(r"\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}")


def fill(template: str, **values: Any) -> str:
    """``str.format`` for plain ``{name}`` fields, without its failure modes.

    ``{{``/``}}`` become literal braces as in ``str.format``; a field that is not given (or
    that is not a plain name) is left as written instead of raising, so a user's template
    with stray braces still renders.
    """

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        name = match.group(1)
        return str(values[name]) if name in values else token

    return _FIELD_RE.sub(substitute, template)


def replace_fields(template: str, **values: str) -> str:
    """Literal replacement of ``{name}`` (the reference's ReAct system prompt)."""
    for name, value in values.items():
        template = template.replace("{" + name + "}", value)
    return template


def manifest(toolset: Toolset) -> dict[str, dict[str, Any]]:
    """The toolset as the release's manifest shape: ``{tool: {desc, input, output}}``."""
    return {
        name: {
            "desc": tool.description,
            "input": {p.name: p.doc for p in tool.inputs},
            "output": {p.name: p.doc for p in tool.outputs},
        }
        for name, tool in toolset.tools.items()
    }


def agents_repr(toolset: Toolset) -> str:
    """The tool list as the reference inserts it with ``str.format`` (a Python dict repr)."""
    return repr(manifest(toolset))


def agents_json(toolset: Toolset) -> str:
    return json.dumps(manifest(toolset), ensure_ascii=False)


def examples_block(examples: list[dict[str, str]]) -> str:
    """Few-shot examples joined the way the reference does ("Examples: " then input/output)."""
    if not examples:
        return ""
    parts = ["Examples: "]
    for example in examples:
        parts.append("\n" + str(example.get("input", "")))
        parts.append("\n" + str(example.get("output", "")))
    return "".join(parts)
