"""The README is short, leads to each of the three uses from its first screen, and names only
files that exist; its quick starts run in tests/docs/test_code_blocks.py."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
TEXT = README.read_text(encoding="utf-8")
QUICK_STARTS = ("## 1. Lint a plan", "## 2. Score a planner's predictions",
                "## 3. Guard an agent loop")


def test_the_readme_is_short() -> None:
    assert len(TEXT.splitlines()) <= 300


def test_the_first_screen_leads_to_each_use() -> None:
    """The set-up commands first, then the three uses, each linked to its quick start and its
    tutorial, within the first 40 lines (a screen)."""
    screen = "\n".join(TEXT.splitlines()[:40])
    assert screen.startswith("# plancheck\n\n```sh\n")
    for heading, tutorial in zip(QUICK_STARTS, ("docs/linter.md", "docs/scoring-tutorial.md",
                                                "docs/agent-loop.md"), strict=True):
        anchor = re.sub(r"[^\w\- ]", "", heading[3:].lower()).replace(" ", "-")
        assert f"(#{anchor})" in screen, anchor
        assert f"({tutorial})" in screen, tutorial


def test_each_quick_start_is_about_ten_lines_of_code_that_runs() -> None:
    for heading in QUICK_STARTS:
        section = TEXT.split(heading, 1)[1].split("\n## ", 1)[0]
        (block,) = re.findall(r"```(python|console)\n(.*?)```", section, flags=re.DOTALL)
        assert 3 <= len(block[1].splitlines()) <= 16, heading


def test_the_score_quick_start_uses_real_paths() -> None:
    section = TEXT.split(QUICK_STARTS[1], 1)[1].split("\n## ", 1)[0]
    assert "../shared/disasterbench/benchmark.jsonl" in section
    assert "../shared/parity/cases.jsonl" in section
    # ... and says where that data comes from before using it.
    assert section.index("PLANCHECK_DATA") < section.index("```console")


# A path of this repository, written in backticks or a link: `tests/cli/test_cli.py`.
_REPO_PATH = re.compile(
    r"(?<![\w./-])((?:plancheck|tests|bench|docs|scripts|examples|\.ci)/[\w./-]*[\w/])")
# Files of other projects that the documentation names with the same prefixes.
_FOREIGN = {"scripts/evaluate.py"}  # DORA's evaluation driver


def test_the_files_the_documentation_names_exist() -> None:
    """The README and docs/ name files of this repository (tests that hold a claim, modules,
    benchmarks); each must be there."""
    missing = []
    for doc in (README, *sorted((ROOT / "docs").glob("*.md"))):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            for match in _REPO_PATH.finditer(line):
                path = match.group(1).rstrip(".")
                if path not in _FOREIGN and not (ROOT / path).exists():
                    missing.append(f"{doc.name}:{number}: {path}")
    assert missing == []


def test_the_readme_links_into_the_docs_only_to_pages_that_exist() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)", TEXT)
    assert len(links) >= 20
    assert [link for link in links if not (ROOT / link).exists()] == []


def test_no_count_of_compiled_modules_is_written_down() -> None:
    """The README said "15 modules" while 29 were compiled, then "54 modules", which each new
    rule module (compiled by itself) made wrong again: ``plancheck --version`` counts them."""
    for doc in (README, *sorted((ROOT / "docs").glob("**/*.md"))):
        assert re.findall(r"\b\d+ modules", doc.read_text(encoding="utf-8")) == [], doc.name


def test_no_page_is_left_a_draft() -> None:
    for page in sorted((ROOT / "docs").glob("*.md")):
        head = "\n".join(page.read_text(encoding="utf-8").splitlines()[:5])
        assert not re.search(r"\bdraft\b", head.lower()), page.name


# History and who measured what when belong in commit messages, not in the documentation.
_HISTORY = re.compile(r"this session|(earlier|previous|later|same) session|\bissue \d+|"
                      r"this branch|at commit [0-9a-f]{7}|\([0-9a-f]{7,40}[,)]|"
                      r"in an earlier run|before this (index|change)|\bused to\b|"
                      r"\bbefore, |\(before\b|\bonce came out|\bit now\b", re.IGNORECASE)


def test_the_documentation_tells_no_history() -> None:
    found = []
    for doc in (README, *sorted((ROOT / "docs").glob("**/*.md"))):
        for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
            if _HISTORY.search(line):
                found.append(f"{doc.relative_to(ROOT)}:{number}: {line.strip()}")
    assert found == []
