"""The docs site builds with MkDocs in strict mode (a warning fails it: a broken link or
anchor, a page of docs/ left out of the nav, a nav entry with no page), and its reference pages
are generated from the registries, so they cannot go stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from plancheck.cli import SUBCOMMANDS
from plancheck.compiler.call_formats import SYNTAXES
from plancheck.corpus.pool_registry import POOL_FORMATS
from plancheck.diagnostics.codes import CODES
from plancheck.formats.shapes import CALL_SHAPES
from scripts import gen_docs

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def pages() -> dict[str, str]:
    return gen_docs.pages()


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr[-5000:]
    site = tmp_path / "site"
    for page in ("cli", "codes/PC301", "call-shapes", "pool-formats", "reference-syntaxes",
                 "linter", "scoring-tutorial", "agent-loop"):
        assert (site / page / "index.html").exists(), page


def _nav_pages(nav: object) -> set[str]:
    if isinstance(nav, str):
        return {nav}
    if isinstance(nav, list):
        return set().union(*(_nav_pages(item) for item in nav))
    if isinstance(nav, dict):
        return set().union(*(_nav_pages(value) for value in nav.values()))
    return set()


def test_every_page_of_docs_is_in_the_nav_and_every_entry_exists(pages: dict[str, str]) -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    nav = _nav_pages(config["nav"])
    written = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").glob("**/*.md")}
    generated = {name for name in pages if not name.startswith("codes/PC")}
    assert written - nav == set(), "pages of docs/ missing from the nav in mkdocs.yml"
    assert nav - written - generated == set(), "nav entries with no page"
    assert not written & set(pages), "a generated page is also committed"


def test_every_code_has_a_page_with_its_example_run(pages: dict[str, str]) -> None:
    """One page a code; a code that a fixture case of tests/data/cases names (every code,
    tests/test_cases.py holds) has that case run on its page, unless each such case needs the
    official release."""
    cases = gen_docs._cases()
    examples = 0
    for code in CODES:
        page = pages[f"codes/{code}.md"]
        assert page.startswith(f"# {code} {CODES[code].name}")
        if gen_docs._example_case(code, cases) is None:
            assert "## Example" not in page
            continue
        examples += 1
        assert "## Example" in page, code
        assert code in page.split("## Example", 1)[1], code  # what plancheck printed names it
    assert examples >= len(CODES) // 2


def test_the_cli_reference_has_every_command_with_examples_and_exit_statuses(
        pages: dict[str, str]) -> None:
    cli = pages["cli.md"]
    for name in SUBCOMMANDS:
        section = cli.split(f"## plancheck {name}\n", 1)[1].split("\n## ", 1)[0]
        assert "examples:" in section and "exit status:" in section, name


def test_the_registry_pages_list_every_entry(pages: dict[str, str]) -> None:
    for name in CALL_SHAPES:
        assert f"## `{name}`" in pages["call-shapes.md"]
    # Each shape's reference syntaxes, from its declaration (issue 35).
    generic = pages["call-shapes.md"].split("## `generic`", 1)[1].split("\n## ", 1)[0]
    assert all(f"[`{syntax}`]" in generic for syntax in SYNTAXES)
    gemini = pages["call-shapes.md"].split("## `gemini`", 1)[1].split("\n## ", 1)[0]
    assert "References: none by default" in gemini
    for pool_format in POOL_FORMATS:
        assert f"## `{pool_format.name}`" in pages["pool-formats.md"]
    for syntax in SYNTAXES:
        row = next(line for line in pages["reference-syntaxes.md"].splitlines()
                   if line.startswith(f"| `{syntax}` |"))
        assert "number" in row or "label" in row, row  # its example was parsed
