"""A long report is indented in C (msgspec) and a short one by json: the text is json's
``indent=2`` either way."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from plancheck.cli import main
from plancheck.render.indented import MANY, dumps_indented
from tests.support.samples import FOG_CHAIN

_ODD = ["é", "\u2028", "\x01", "\x7f", '"', "\\", "/", "\ud800", "\U0001f600", "\t", "~"]

_SCALARS = (st.none() | st.booleans() | st.integers() | st.floats()
            | st.text(alphabet=st.sampled_from(_ODD) | st.characters(), max_size=8))
_VALUES = st.recursive(_SCALARS, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=4), inner, max_size=4), max_leaves=20)


@pytest.mark.slow
@settings(max_examples=400)
@given(_VALUES)
def test_indented_text_is_jsons(value: Any) -> None:
    """NaN, infinities and lone surrogates included (msgspec refuses them: json writes them)."""
    expected = json.dumps(value, indent=2, ensure_ascii=False)
    assert dumps_indented(value, many=True) == expected
    assert dumps_indented(value) == expected


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_long_report_is_laid_out_as_json_indents(tmp_path: Path, fmt: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """Past MANY items the rest are indented by msgspec: the document is still exactly what
    json writes of it, odd characters in the messages included."""
    plan: list[dict[str, Any]] = []
    for first in range(0, 2 * (MANY + 50), 2):
        restore, detect = (dict(step) for step in FOG_CHAIN)
        restore["step"], detect["step"] = first, first + 1
        odd = _ODD[first // 2 % len(_ODD)].replace("\ud800", "\u00e9")
        detect["inputs"] = {f"image_pth{odd}": f"<GENERATED>-{first}-<restored_image_path>"}
        plan += (restore, detect)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan, ensure_ascii=False), encoding="utf-8")
    assert main(["check", "--no-config", str(path), "--format", fmt]) == 1
    out = capsys.readouterr().out
    document = json.loads(out)
    items = document["diagnostics"] if fmt == "json" else document["runs"][0]["results"]
    assert len(items) > MANY
    if fmt == "json":
        assert out == json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    else:  # (each result is indented on its own, 8 spaces in)
        assert json.dumps(items[-1], indent=2, ensure_ascii=False).replace(
            "\n", "\n" + " " * 8) in out
