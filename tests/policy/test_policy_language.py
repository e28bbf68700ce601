"""The policy language: parsing and printing, unusable policies refused with a position, and
the online monitor's verdicts and feedback (through the public modules, never their helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.api import load_toolset
from plancheck.dsl.parser import parse_dsl
from plancheck.dsl.printer import policy_to_dsl
from plancheck.policy.loader import PolicyError, parse_policies
from plancheck.policy.monitor import PolicyMonitor, feedback

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "mcp"
GITHUB = load_toolset(REAL / "server-github.json")

EVERY_KIND = """policy gh "every rule kind" {
  require get_file_contents before create_or_update_file
  warn forbid merge_pull_request after create_issue
  at most 1 create_* per 3 calls
  deny require create_issue.title matches "[A-Z].*" unless get_issue before
  forbid flow from get_file_contents to create_issue.body
  require push_files
  require list_issues.per_page <= 50
  forbid create_branch.branch in ["main", "master"]
}
"""


def test_every_rule_kind_parses_and_prints_back_as_written() -> None:
    module = parse_dsl(EVERY_KIND, "p.wf")
    assert not module.diagnostics
    (policy,) = module.policies
    assert policy.name == "gh" and policy.doc == "every rule kind"
    written = [line.strip() for line in EVERY_KIND.splitlines()[1:-1]]
    assert [str(rule) for rule in policy.rules] == [w.removeprefix("deny ") for w in written]
    assert [r.severity for r in policy.rules][:2] == ["deny", "warn"]
    assert policy.rules[0].span.start_line == 2 and policy.rules[0].span.start_col == 3


def test_every_corpus_policy_prints_back_to_itself() -> None:
    corpus = Path(__file__).with_name("corpus")
    for path in sorted(corpus.glob("*.wf")):
        first = parse_dsl(path.read_text(encoding="utf-8"), str(path)).policies
        printed = "".join(policy_to_dsl(p) for p in first)
        again = parse_dsl(printed).policies
        assert not parse_dsl(printed).diagnostics
        assert [(p.name, p.doc, [str(r) for r in p.rules]) for p in again] == \
            [(p.name, p.doc, [str(r) for r in p.rules]) for p in first]


def test_a_tool_or_argument_spelled_like_a_keyword_prints_quoted_and_reads_back() -> None:
    text = 'policy p {\n  forbid "flow".to == 1\n  require "in"."in" == 1\n}'
    rules = parse_dsl(text).policies[0].rules
    assert [str(r) for r in rules] == ['forbid "flow"."to" == 1', 'require "in"."in" == 1']
    assert [str(r) for r in parse_dsl(policy_to_dsl(parse_dsl(text).policies[0]))
            .policies[0].rules] == [str(r) for r in rules]


@settings(max_examples=40, deadline=None)
@given(count=st.integers(0, 50), window=st.one_of(st.none(), st.integers(1, 99)),
       bound=st.integers(-10**6, 10**6), op=st.sampled_from(["<", "<=", ">", ">=", "==", "!="]))
def test_printing_a_rule_and_parsing_it_again_gives_the_same_rule(
        count: int, window: int | None, bound: int, op: str) -> None:
    per = f" per {window} calls" if window is not None else ""
    text = (f"policy p {{\n  at most {count} create_*{per}\n"
            f"  require list_issues.page {op} {bound}\n}}")
    first = parse_dsl(text).policies[0].rules
    again = parse_dsl("policy p {\n" + "\n".join(map(str, first)) + "\n}").policies[0].rules
    assert [str(r) for r in again] == [str(r) for r in first]


@pytest.mark.parametrize(("text", "code", "where", "words"), [
    ("policy x { require nope before fork_repository }", "PC811", (1, 20), "no tool `nope`"),
    ('policy x { require create_issue.titel == "a" }', "PC811", (1, 20), "`titel`"),
    ("policy x { at most 1 zzz* }", "PC812", (1, 22), "matches no tool"),
    ("policy x { require get_issue before get_issue }", "PC812", (1, 12), "never hold"),
    ("policy x {\n  require", "PC114", (2, 3), "syntax error"),
    ('policy x { require create_issue.title < "a" }', "PC812", (1, 39), "not one"),
    ('policy x { require create_issue.title matches "(" }', "PC810", (1, 39), "compile"),
    ("policy x { require create_issue.title in [] }", "PC812", (1, 12), "empty list"),
    ("policy x { at most -1 create_issue }", "PC812", (1, 12), "below 0"),
    ("policy x { require family nofamily }", "PC811", (1, 20), "family"),
    ("toolset t { }", "PC810", (1, 1), "declares no policy"),
    ("policy x { at most 3 create_issue per 3 calls }", "PC812", (1, 12), "never fires"),
    ("policy x { at most 1 create_issue per 0 calls }", "PC810", (1, 12), "at least 1 call"),
    # The schema says `title` is a string and `per_page` a number: the predicate cannot apply.
    ("policy x { require create_issue.title < 3 }", "PC812", (1, 39), "declared string"),
    ('policy x { forbid list_issues.per_page matches "1.*" }', "PC812", (1, 40),
     "never fires: `per_page` is declared number"),
])
def test_an_unusable_policy_is_refused_with_its_position(
        text: str, code: str, where: tuple[int, int], words: str) -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policies(text, GITHUB, "p.wf")
    (diagnostic,) = caught.value.diagnostics
    assert diagnostic.code == code and words in diagnostic.message, diagnostic.message
    span = diagnostic.span
    assert span is not None and span.file == "p.wf"
    assert (span.start_line, span.start_col) == where


def test_an_unknown_name_suggests_the_closest_ones() -> None:
    with pytest.raises(PolicyError) as caught:
        parse_policies("policy x { at most 1 create_isue }", GITHUB)
    assert caught.value.diagnostics[0].help[0].startswith("did you mean `create_issue`")


def _drive(monitor: PolicyMonitor, calls: list[tuple[str, dict[str, object], object]]
           ) -> list[str]:
    """Propose each call, accept it when nothing blocks it, record its result: the feedback."""
    said = []
    for tool, arguments, result in calls:
        call = monitor.call(tool, arguments, call_id=f"call_{monitor.next_index}")
        found = monitor.propose(call)
        said.append(feedback(found))
        if not any(v.blocking for v in found):
            monitor.accept(call)
            monitor.record(call.index, result)
    return said


def test_the_monitor_names_the_rule_and_the_earlier_call() -> None:
    monitor = PolicyMonitor(parse_policies(EVERY_KIND, GITHUB))
    fetched = {"content": [{"type": "text", "text": "token ABCDEFGHIJKLMNOP in README"}]}
    said = _drive(monitor, [
        ("get_file_contents", {"owner": "o", "repo": "r", "path": "README.md"}, fetched),
        ("create_issue", {"owner": "o", "repo": "r", "title": "Leak",
                          "body": "ABCDEFGHIJKLMNOP"}, {}),
        ("create_issue", {"owner": "o", "repo": "r", "title": "lower"}, {}),
        ("create_issue", {"owner": "o", "repo": "r", "title": "Fine"}, {}),
        ("merge_pull_request", {"owner": "o", "repo": "r", "pull_number": 1}, {}),
        ("create_branch", {"owner": "o", "repo": "r", "branch": "main"}, {}),
    ])
    assert said[0] == ""
    assert "[PC805]" in said[1] and "`body` holds text returned by call_0 `get_file_contents`" \
        in said[1]
    assert "[PC804]" in said[2] and '`title` is "lower"' in said[2]
    assert said[3] == ""
    assert said[4].startswith("warning [PC802]: call_2 `merge_pull_request` comes after "
                              "call_1 `create_issue`")
    assert "[PC803]" in said[5] and "[PC804]" in said[5] and "`branch`" in said[5]
    assert "call_1 `create_issue`" in said[5]
    assert [v.code for v in monitor.finish()] == ["PC806"]


def test_an_explicit_flow_wins_over_an_inferred_one_and_provenance_can_be_switched_off(
) -> None:
    policies = parse_policies(EVERY_KIND, GITHUB)
    result = {"content": [{"type": "text", "text": "ABCDEFGHIJKLMNOP"}]}
    for provenance, expected in ((True, 1), (False, 0)):
        monitor = PolicyMonitor(policies, provenance=provenance)
        first = monitor.call("get_file_contents", {"owner": "o", "repo": "r", "path": "p"})
        monitor.accept(first)
        monitor.record(first.index, result)
        second = monitor.call("create_issue", {"owner": "o", "repo": "r", "title": "T",
                                               "body": "ABCDEFGHIJKLMNOP"})
        assert len([v for v in monitor.propose(second) if v.code == "PC805"]) == expected
        assert [f.kind for f in second.flows] == (["exact"] if provenance else [])


def test_an_exact_copy_is_named_a_copy() -> None:
    monitor = PolicyMonitor(parse_policies(EVERY_KIND, GITHUB))
    fetched = {"content": [{"type": "text", "text": "ABCDEFGHIJKLMNOP"}]}
    said = _drive(monitor, [
        ("get_file_contents", {"owner": "o", "repo": "r", "path": "README.md"}, fetched),
        ("create_issue", {"owner": "o", "repo": "r", "title": "Leak",
                          "body": "ABCDEFGHIJKLMNOP"}, {}),
    ])
    assert "`body` holds a copy of a value returned by call_0 `get_file_contents`" in said[1]
