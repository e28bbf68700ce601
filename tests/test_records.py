"""The record classes the IR and diagnostics are built on (plancheck.records): what they share
with the dataclasses they replaced, through the classes plancheck hands to users."""

from __future__ import annotations

import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from plancheck.diagnostics.model import Diagnostic, Label, make
from plancheck.diagnostics.span import Span
from plancheck.ir.nodes import Literal, Param, Plan, Step, Toolset, ToolSignature
from plancheck.ir.schema_types import SchemaParam
from plancheck.records import replace

SPAN = Span("plan.json", pointer="/0")
names = st.text(min_size=1, max_size=8)


@given(names, names)
def test_equal_fields_make_equal_records_and_equal_hashes(name: str, type_name: str) -> None:
    assert Param(name, type_name) == Param(name, type_name)
    assert hash(Param(name, type_name)) == hash(Param(name, type_name))
    assert Param(name, type_name) != Param(name + "x", type_name)
    assert len({Param(name, type_name), Param(name, type_name)}) == 1


def test_records_of_different_classes_never_compare_equal() -> None:
    assert Param("a", "T", schema_text="{}") != SchemaParam("a", "T", schema_text="{}")
    assert Literal(1, SPAN) != 1


def test_mutable_records_are_unhashable_as_dataclasses_with_eq_are() -> None:
    with pytest.raises(TypeError):
        hash(Literal(1, SPAN))
    with pytest.raises(TypeError):
        hash(Step(0, 0, "Tool", (), ("out",), SPAN))


def test_replace_builds_the_copy_anew_so_derived_fields_follow() -> None:
    tool = ToolSignature("t", (Param("a", "T"),), (Param("out", "U"),))
    changed = replace(tool, inputs=(Param("b", "T", required=False),))
    assert changed.input_names == ("b",) and changed.required_input_names == frozenset()
    assert changed.output_names == ("out",) and changed.name == "t"
    assert tool.input_names == ("a",)  # the original is untouched


def test_replace_refuses_a_field_the_record_does_not_have() -> None:
    with pytest.raises(TypeError, match="no field 'colour'"):
        replace(Param("a", "T"), colour="red")


def test_repr_names_the_class_and_its_fields() -> None:
    text = repr(Label(SPAN, "here", primary=True))
    assert text.startswith("Label(span=Span(") and text.endswith(", message='here', primary=True)")


def test_diagnostics_do_not_share_their_default_data() -> None:
    first = Diagnostic("PC001", "m", make("PC001", "m").severity)
    second = Diagnostic("PC001", "m", first.severity)
    first.data["k"] = 1
    assert second.data == {}


def test_a_toolset_survives_pickling_without_its_compiled_lattice() -> None:
    toolset = Toolset("pool", tools={"t": ToolSignature("t", (), ())})
    toolset.lattice  # noqa: B018 (compiles the lattice, which pickling must not carry)
    restored = pickle.loads(pickle.dumps(toolset))
    assert restored == toolset and restored.tools["t"].input_names == ()
    assert restored.lattice is not toolset.lattice


def test_plans_of_tool_calls_compare_their_own_fields_too() -> None:
    from plancheck.compiler.callshapes import CallPlan

    plan = CallPlan((), SPAN, name="p", needs_binding=True)
    assert replace(plan, needs_binding=False) != plan
    assert replace(plan, needs_binding=False).needs_binding is False
    assert Plan((), SPAN, name="p") != CallPlan((), SPAN, name="p")
