"""tb/run/arith_vpi.py: which builds get the AHBM arithmetic's compiled twins, and what a build adds for them.

The twins' bits are tests/unit/ahbm/test_ahbm_arith_vpi.py's; here, the choice: only Icarus builds of a bench
holding pe_engine, never Verilator's (it compiles the Verilog loops), AGSIM_ARITH_VPI=0 turning them off, a
bad value refused by name, and the module's iverilog options and define.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tb.run import arith_vpi
from tb.run.benches import get_bench


def test_only_icarus_builds_of_the_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arith_vpi.OFF_ENV, raising=False)
    ahbm, noc = get_bench("ahbm").sources, get_bench("mesh_2x2").sources
    assert arith_vpi.wanted("icarus", ahbm)
    assert not arith_vpi.wanted("verilator", ahbm)
    assert not arith_vpi.wanted("icarus", noc)
    assert arith_vpi.for_build("icarus", noc, Path("/nonexistent")) == arith_vpi.ArithVpi()


def test_turned_off_and_bad_value_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(arith_vpi.OFF_ENV, "0")
    assert not arith_vpi.wanted("icarus", get_bench("ahbm").sources)
    monkeypatch.setenv(arith_vpi.OFF_ENV, "yes")
    with pytest.raises(ValueError, match=r"AGSIM_ARITH_VPI='yes'.*use 1 .* or 0"):
        arith_vpi.wanted("icarus", get_bench("ahbm").sources)


def test_a_build_loads_the_module_and_defines_the_switch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arith_vpi.OFF_ENV, raising=False)
    got = arith_vpi.for_build("icarus", get_bench("pe").sources, tmp_path)
    module = next(tmp_path.glob("ahbm_arith_*.vpi"))
    assert got.args == (f"-L{tmp_path.resolve()}", f"-m{module.stem}")
    assert dict(got.defines) == {arith_vpi.DEFINE: 1} and got.stamp and module.stem.endswith(got.stamp)
    # a second build finds the module and compiles nothing
    before = module.stat().st_mtime_ns
    assert arith_vpi.for_build("icarus", get_bench("pe").sources, tmp_path) == got
    assert module.stat().st_mtime_ns == before


def test_no_compiler_means_no_twins_and_a_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(arith_vpi.OFF_ENV, raising=False)
    monkeypatch.setenv("CC", "no-such-compiler-here")
    got = arith_vpi.for_build("icarus", get_bench("pe").sources, tmp_path)
    assert got.args == () and got.defines == () and got.stamp == ""
    assert "without its compiled twins" in got.note and "no C compiler" in got.note
