"""Inputs only the Python API can give (no JSON file holds them), where plancheck once
departed from DORA's evaluator (issue 21): each case is run through DORA's own
``dora/evaluation.py`` in a child process (a stub ``paths.py``, as its README says) and through
``plancheck.dora``, and must agree: the same score, or a :class:`DoraInputError` where DORA
raises."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from plancheck import dora
from plancheck.corpus.paths import DATA_ENV, DORA_REFERENCE_ENV, dora_reference_dir

PROBE = '''
import json, sys, types
from pathlib import Path
reference, stub = Path(sys.argv[1]), Path(sys.argv[2])
(stub / "paths.py").write_text("from pathlib import Path\\nIMAGES_DIR = TASKS_DIR = Path('.')\\n")
package = types.ModuleType("dora")
package.__path__ = [str(stub), str(reference / "dora")]
sys.modules["dora"] = package
from dora import evaluation
out = {}
def run(name, call):
    try:
        out[name] = {"value": call()}
    except Exception as error:
        out[name] = {"error": type(error).__name__}
run("count_key", lambda: evaluation.score_task_answer({7: 3}, {7: 3}, {7: "scalar_count"}))
run("geo_gsd", lambda: evaluation.score_task_answer(
    {"site": {"lat": 10.0, "lon": 20.0}}, {"site": {"lat": 10.0, "lon": 20.0}},
    {"site": "scalar_dict"}, gsd_m="abc"))
run("gsd_text", lambda: evaluation.get_gsd({"input_data": {"pre_image": {"pixel_size_m": "x"}}}))
run("gsd_list", lambda: evaluation.get_gsd({"input_data": []}))
print(json.dumps(out))
'''


@pytest.fixture(scope="module")
def dora_says(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    reference = dora_reference_dir()
    if not (reference / "dora" / "evaluation.py").is_file():
        message = f"DORA's released code not found at {reference}"
        if os.environ.get(DATA_ENV) or os.environ.get(DORA_REFERENCE_ENV):
            pytest.fail(message)
        pytest.skip(message)
    stub = tmp_path_factory.mktemp("stub")
    done = subprocess.run([sys.executable, "-c", PROBE, str(reference), str(stub)],
                          capture_output=True, text=True, timeout=120, check=True)
    said: dict[str, Any] = json.loads(done.stdout)
    return said


def test_a_count_field_whose_key_is_no_string_raises_as_in_dora(dora_says: dict[str, Any]
                                                                 ) -> None:
    assert "error" in dora_says["count_key"]
    with pytest.raises(dora.DoraInputError):
        dora.score_answer({7: 3}, {7: 3}, {7: "scalar_count"})


def test_a_gsd_that_is_no_number_falls_back_to_the_scalar_rule(dora_says: dict[str, Any]
                                                                ) -> None:
    expected = dora_says["geo_gsd"]["value"]  # (score, fields) from DORA
    got = dora.score_answer({"site": {"lat": 10.0, "lon": 20.0}},
                            {"site": {"lat": 10.0, "lon": 20.0}}, {"site": "scalar_dict"},
                            gsd_m="abc")  # type: ignore[arg-type]
    assert [got["score"], got["fields"]] == expected


@pytest.mark.parametrize(("case", "sample"), [
    ("gsd_text", {"input_data": {"pre_image": {"pixel_size_m": "x"}}}),
    ("gsd_list", {"input_data": []}),
])
def test_a_gsd_dora_cannot_read_is_a_dora_input_error(case: str, sample: dict[str, Any],
                                                      dora_says: dict[str, Any]) -> None:
    assert "error" in dora_says[case]
    with pytest.raises(dora.DoraInputError):
        dora.sample_gsd(sample)


def test_the_probe_ran_dora_itself(dora_says: dict[str, Any]) -> None:
    assert set(dora_says) == {"count_key", "geo_gsd", "gsd_text", "gsd_list"}
    assert Path(dora_reference_dir() / "dora" / "evaluation.py").is_file()
