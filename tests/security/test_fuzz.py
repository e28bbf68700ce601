"""The fuzz properties of ``fuzz_surfaces.py`` (issue 33), each in a child under CPU, memory
and wall-clock caps: a hang or a blow-up on some input fails here, it never stalls the suite."""

from __future__ import annotations

import pytest

from tests.security.capped import run_capped
from tests.security.fuzz_surfaces import SURFACES


@pytest.mark.slow
@pytest.mark.parametrize("surface", list(SURFACES))
def test_fuzz(surface: str) -> None:
    code = (f"import runpy, sys\nsys.argv = ['fuzz', {surface!r}]\n"
            "runpy.run_module('tests.security.fuzz_surfaces', run_name='__main__')\n")
    done = run_capped(code, cpu_seconds=240, memory_bytes=2 << 30, timeout=400)
    assert done.returncode == 0 and done.output.strip().endswith("ok"), done.stderr[-6000:]
