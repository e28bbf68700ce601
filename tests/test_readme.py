"""The README's Python API examples run, and print what their comments say."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


def api_examples(heading: str = "## Python API") -> list[str]:
    text = README.read_text(encoding="utf-8")
    section = text.split(heading, 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.DOTALL)


def test_the_python_api_section_has_the_promised_examples() -> None:
    code = "\n".join(api_examples())
    for name in ("plancheck.check(", "plancheck.score(", "plancheck.repair(",
                 "plancheck.load_toolset(", ".to_feedback()"):
        assert name in code


@pytest.mark.parametrize("heading", ["## Python API", "## In an agent loop"])
def test_the_examples_run_and_print_what_they_say(heading: str) -> None:
    namespace: dict[str, object] = {}
    blocks = api_examples(heading)
    assert blocks, f"no examples under {heading}"
    for block in blocks:
        output = io.StringIO()
        with contextlib.redirect_stdout(output):
            exec(compile(block, str(README), "exec"), namespace)
        printed = output.getvalue().splitlines()
        # `# -> TEXT` promises that TEXT is printed (a parenthesised remark after it is prose).
        expected = [claim.split("   (")[0].strip()
                    for claim in re.findall(r"#\s*->\s*(.+)$", block, re.MULTILINE)]
        for claim in expected:
            assert any(claim in line for line in printed), (claim, printed)
        assert len(printed) >= len(expected)


# A path of this repository, written in backticks or a link: `tests/cli/test_cli.py`.
_REPO_PATH = re.compile(
    r"(?<![\w./-])((?:plancheck|tests|bench|docs|scripts|examples|\.ci)/[\w./-]*[\w/])")
# Files of other projects that the documentation names with the same prefixes.
_FOREIGN = {"scripts/evaluate.py"}  # DORA's evaluation driver


def test_the_files_the_documentation_names_exist() -> None:
    """The README and docs/ name files of this repository (tests that hold a claim, modules,
    benchmarks); each must be there."""
    root = README.parent
    missing = []
    for doc in (README, *sorted((root / "docs").glob("*.md"))):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in _REPO_PATH.finditer(line):
                path = match.group(1).rstrip(".")
                if path not in _FOREIGN and not (root / path).exists():
                    missing.append(f"{doc.name}:{number}: {path}")
    assert missing == []


def test_the_readme_restates_no_count_of_compiled_modules() -> None:
    """The README said "15 modules" while 29 were compiled, and then "54 modules", which a new
    rule module (compiled by itself) made wrong again: the count is derived, by
    ``plancheck --version``, never written down."""
    assert re.findall(r"\b\d+ modules", README.read_text(encoding="utf-8")) == []


def test_no_page_is_left_a_draft_nor_names_data_a_clone_lacks() -> None:
    """Two pages of docs/ were headed "README section draft", and README examples named
    `../shared/...`, which is this workspace's, not a fresh clone's."""
    for page in sorted((README.parent / "docs").glob("*.md")):
        head = "\n".join(page.read_text(encoding="utf-8").splitlines()[:5])
        assert "draft" not in head.lower(), page.name
    for number, line in enumerate(README.read_text(encoding="utf-8").splitlines(), 1):
        if "../shared/" in line:
            assert "PLANCHECK_DATA" in line, f"README.md:{number}: {line}"
