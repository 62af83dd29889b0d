"""Every documented RTL parameter limit is guarded at elaboration: a bad value ends in a FATAL line naming
it (Icarus, each module as the top, as a direct Verilog user would instantiate it), a good one runs on.

The framework also refuses a parameter its bench's top does not declare, a non-integer value and NX/NY/
EDGE_MASK values that disagree with the bench's shape before building (tb/run/params.py); and after a build it
runs the same guards (elaboration_check) before any test, so the FATAL line becomes the bench's error.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tb.run.benches import INCLUDE_DIRS, MAG_AGENT_DEPS, PE_CORE_RTL, ROOT, get_bench
from tb.run.params import check_names, check_shape, declared_parameters, elaboration_check

NOC = ["rtl/noc/noc_fifo.v", "rtl/noc/noc_link_mon.v", "rtl/noc/noc_router.v"]
CU = NOC[:2] + ["rtl/cu/cu_base.v"]
ORCH = NOC[:2] + ["rtl/orch/orch_axil_mon.v", "rtl/orch/orch_addr_dec.v", "rtl/orch/orchestrator.v"]
GUARDS = [
    ("noc_fifo", NOC[:1], {"DEPTH": 0}, "DEPTH=0: need WIDTH >= 1 and DEPTH >= 1"),
    ("noc_router", NOC, {"NX": 15}, "NX=15 NY=1"),
    ("noc_router", NOC, {"X": 3, "NX": 2}, "X=3 Y=1 NX=2"),
    ("noc_mesh", NOC + ["rtl/noc/noc_mesh.v"], {"NX": 2, "NY": 2, "EDGE_MASK": 1 << 8}, "EDGE_MASK=0x"),
    ("mag_dram", ["rtl/mag/mag_dram.v"], {"RD_LATENCY": 0}, "RD_LATENCY=0"),
    ("mag", list(MAG_AGENT_DEPS),
     {"Q_MARGIN": 64}, "Q_MARGIN=64"),
    ("clock_gate", ["rtl/arith/clock_gate.v"], {"FALL_EDGE": 2}, "FALL_EDGE=2: expected 0"),
    ("mag_port", NOC[:1] + ["rtl/mag/mag_port.v"], {"R_FIFO_LAT": 0}, "R_FIFO_LAT=0"),
    ("cu_base", CU, {"INST_DEPTH": 1}, "INST_DEPTH=1"),
    ("orchestrator", ORCH, {"TX_DEPTH": 0}, "TX_DEPTH=0 is outside 1..65536"),
    ("orchestrator", ORCH, {"STAGE_SLOTS": 2000}, "STAGE_SLOTS=2000 does not fit"),
    ("pe_dma", ["rtl/ahbm/pe/pe_dma.v"], {"QDEPTH": 3}, "QDEPTH=3"),
    ("pe_dma", ["rtl/ahbm/pe/pe_dma.v"], {"BW": 65}, "BW=65"),
    ("pe_slice", ["rtl/ahbm/pe/pe_slice.v"], {"WORDS": 0}, "WORDS=0: need 1 <= WORDS <= 2**24"),
    ("pe_dma", ["rtl/ahbm/pe/pe_dma.v"], {"WORDS": (1 << 24) + 1}, "WORDS=16777217"),  # past 1 GiB
    ("pe_core", list(PE_CORE_RTL), {"ADDR_SHIFT": 3}, "ADDR_SHIFT=3"),
    ("pe_core", list(PE_CORE_RTL), {"SLICE_BYTES": (1 << 24) + 64}, "SLICE_BYTES=16777280: need ADDR_SHIFT 0"),
    ("pe_stats", ["rtl/ahbm/pe/pe_stats.v"], {"ALOG": 100}, "ALOG=100"),
    ("ipcq", ["rtl/ahbm/ipcq/ipcq.v"], {"DEPTH": 0}, "DEPTH=0"),
    ("pe_cmdq", ["rtl/ahbm/pe/pe_cmdq.v"], {"LQ": 3}, "LQ=3"),
    ("pe_front", ["rtl/ahbm/pe/pe_front.v"], {"PREFETCH": 5}, "PREFETCH=5"),
    ("pe_engine", ["rtl/ahbm/pe/pe_engine.v"], {"D": 48}, "D=48"),
    ("pe_link", ["rtl/ahbm/pe/pe_link.v"], {"IPCQ_W": 96}, "IPCQ_W=96"),
    ("pe_fault", ["rtl/ahbm/pe/pe_fault.v"], {"N": 0}, "N=0"),
]


def _elaborate(tmp: Path, top: str, files: list[str], params: dict[str, int]) -> str:
    args = ["iverilog", "-g2012", "-o", str(tmp / "t.vvp"), "-s", top,
            *[f"-I{ROOT / d}" for d in INCLUDE_DIRS]]
    args += [f"-P{top}.{k}={v}" for k, v in params.items()] + [str(ROOT / f) for f in files]
    subprocess.run(args, check=True, capture_output=True, text=True, cwd=tmp)
    run = subprocess.run(["vvp", "-n", str(tmp / "t.vvp")], capture_output=True, text=True, timeout=60, cwd=tmp)
    return run.stdout + run.stderr


@pytest.mark.parametrize("top, files, params, words", GUARDS, ids=[f"{g[0]}-{next(iter(g[2]))}" for g in GUARDS])
def test_a_bad_parameter_is_fatal_at_elaboration(tmp_path: Path, top, files, params, words) -> None:
    out = _elaborate(tmp_path, top, files, params)
    fatal = [line for line in out.splitlines() if "FATAL" in line]
    assert fatal and words in fatal[0], out


def test_defaults_pass_the_guards(tmp_path: Path) -> None:
    for top, files, _, _ in GUARDS:
        out = _elaborate(tmp_path, top, files, {})
        assert "FATAL" not in out, f"{top}: {out}"


def test_the_framework_refuses_names_types_and_shapes() -> None:
    b = get_bench("router")
    with pytest.raises(ValueError, match=r"^bench router: parameter FIFO_DEPHT=8 is not a parameter of "
                                         r"router_harness \(it declares FIFO_DEPTH, .*fix the name"):
        check_names(b.name, b.toplevel, {"FIFO_DEPHT": 8}, b.source_paths)
    with pytest.raises(ValueError, match="FIFO_DEPTH='4' is not an integer"):
        check_names(b.name, b.toplevel, {"FIFO_DEPTH": "4"}, b.source_paths)
    m = get_bench("mesh_2x2")
    with pytest.raises(ValueError, match=r"EDGE_MASK=0x3 disagrees with the bench's shape"):
        check_shape(m.name, {**m.parameters, "EDGE_MASK": 3}, m.shape)
    check_shape(m.name, m.parameters, m.shape)
    assert declared_parameters(b.source_paths, b.toplevel) == ["FIFO_DEPTH", "PORT_EDGE", "INJ_DEPTH", "CAP_DEPTH"]


def test_the_runner_shows_the_fatal_line_before_any_test(tmp_path: Path) -> None:
    """A built bench top with FIFO_DEPTH=0: the elaboration check names the value, the rule and the fix."""
    b = get_bench("router")
    args = ["iverilog", "-g2012", "-o", str(tmp_path / "sim.vvp"), "-s", b.toplevel,
            *[f"-I{ROOT / d}" for d in INCLUDE_DIRS], f"-P{b.toplevel}.FIFO_DEPTH=0"] + [str(p) for p in b.source_paths]
    subprocess.run(args, check=True, capture_output=True, text=True)
    why = elaboration_check("router", "icarus", tmp_path / "sim.vvp", {"FIFO_DEPTH": 0})
    assert why is not None and why.startswith("bench router (FIFO_DEPTH=0): parameter out of range: FATAL:")
    assert "DEPTH=0: need WIDTH >= 1 and DEPTH >= 1" in why and why.endswith("fix the value in tb/run/benches.py")
    ok = tmp_path / "ok.vvp"
    ok_args = [str(ok) if a == str(tmp_path / "sim.vvp") else a for a in args if not a.startswith("-P")]
    subprocess.run(ok_args, check=True, capture_output=True, text=True)
    assert elaboration_check("router", "icarus", ok, {}) is None
