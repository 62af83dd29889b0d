"""Generated machine tops: one instance per unit, the names the benches rely on, the machine limits the
compiled plans assume, the landing counter, and they compile."""

from __future__ import annotations

import subprocess
from dataclasses import replace

import pytest

from models.machine.layouts import FUSED4, MACHINES, MM_MESH, MM_MESH_SYS
from tb.run.benches import INCLUDE_DIRS, HARNESS_RTL, MACHINE_HARNESS_RTL, NOC_RTL, ROOT
from tb.system.machine_top import render_harness, render_machine, unit_sources, write_machine_sources


def test_mm_mesh_top_has_the_fixed_names() -> None:
    text = render_machine(MM_MESH)
    for port in ("ext_in_data", "ext_in_valid", "ext_in_busy", "ext_out_data", "ext_out_valid",
                 "ext_out_busy", "input  wire clk", "input  wire resetn"):
        assert port in text
    assert " dram (" in text and "cluster_cu #(.X(2), .Y(1)" in text and "vector_core #(.X(1), .Y(0)" in text
    assert "mag #(.X(0), .Y(1)" in text and "orchestrator" not in text


def test_sys_machine_exposes_the_host_port() -> None:
    text = render_machine(MM_MESH_SYS)
    assert "orchestrator #(.X(1), .Y(1)" in text and "s_axil_awaddr" in text and "ext_in_data" not in text
    harness = render_harness(MM_MESH_SYS)
    assert "wire [15:0] s_axil_awaddr;" in harness and "reg " not in harness  # every host pin is the engine's
    assert "host_engine #(.ADDR_W(16)) u_host (.clk(clk), .resetn(resetn), .awaddr(s_axil_awaddr)," in harness
    assert "axil_trace #(.ADDR_W(16)) u_axil_trace (.clk(clk), .awaddr(s_axil_awaddr)," in harness


def test_fused4_has_the_limits_the_compiled_plans_assume() -> None:
    """512-deep instruction FIFOs (the compiler seeds 512), 128 staging slots, the memory window at 0x8000_0000."""
    text = render_machine(FUSED4)
    assert text.count(".INST_DEPTH(512)") == len(FUSED4.clusters) + len(FUSED4.vector_cores) == 8
    assert "orchestrator #(.X(3), .Y(2), .STAGE_SLOTS(128)" in text
    assert ".DRAM_WORDS(65536), .BASE(40'h0080000000)" in text and "mag_dram #(.WORDS(65536)" in text


def test_the_memory_timing_is_the_machines() -> None:
    """Upstream's by default (the AXI RAM's 1-cycle read, 3-cycle port FIFOs); a faster memory is a setting."""
    text = render_machine(FUSED4)
    assert ".RD_LATENCY(1), .RD_INTERVAL(1)" in text
    assert ".AR_FIFO_LAT(3), .R_FIFO_LAT(3), .W_FIFO_LAT(3), .B_FIFO_LAT(3)" in text
    port = {f"mag.{n}_FIFO_LAT": 1 for n in ("AR", "R", "W", "B")}
    fast = render_machine(replace(FUSED4, timing={**port, "dram.RD_LATENCY": 6}))
    assert ".RD_LATENCY(6)" in fast and ".AR_FIFO_LAT(1), .R_FIFO_LAT(1), .W_FIFO_LAT(1), .B_FIFO_LAT(1)" in fast
    with pytest.raises(ValueError, match=r"^machine fused4: timing mag\.AR_FIFO_LAT=0 is outside 1\.\.64 "):
        replace(FUSED4, timing={"mag.AR_FIFO_LAT": 0})


def test_other_machines_keep_their_limits() -> None:
    for m in (MM_MESH, MM_MESH_SYS):
        text = render_machine(m)
        assert ".INST_DEPTH(32)" in text and ".BASE(40'h0000000000)" in text
    assert ".STAGE_SLOTS(256)" in render_machine(MM_MESH_SYS)


def test_landing_counter_sums_every_endpoint_output() -> None:
    """wr_data_sent adds one per MEM_WR_DATA handed to the mesh by any endpoint (the ext port included)."""
    for m in MACHINES.values():
        text = render_machine(m)
        ports = [m.geometry.port_index(c) for c in m.units]
        for i in ports:
            assert f"wire wd_{i} = hs_{i} && ep_in_data[{i}][271:268] == 4'd4;" in text
            assert f"wire hs_{i} = ep_in_valid[{i}] && !ep_in_busy[{i}];" in text
        assert text.count("wire wd_") == len(ports) and "reg [31:0] wr_data_sent;" in text
        assert "reg [31:0] faults_sent;" in text


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_generated_machine_compiles(name: str, tmp_path) -> None:
    m = MACHINES[name]
    files = write_machine_sources(m, tmp_path)
    srcs = list(NOC_RTL) + list(HARNESS_RTL) + list(MACHINE_HARNESS_RTL) + unit_sources(m, ROOT) + [str(f) for f in files]
    includes = [arg for d in INCLUDE_DIRS for arg in ("-I", d)]
    r = subprocess.run(["iverilog", "-g2012", *includes, "-o", str(tmp_path / "m.vvp"),
                        "-s", f"{name}_harness", *srcs], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr


def test_the_memory_agent_brings_its_clock_gate() -> None:
    """mag.v clocks its quantiser's inputs through rtl/arith/clock_gate.v: a machine with a memory agent lists the
    gate whatever other units it has (the cluster and vector files happen to bring all of rtl/arith)."""
    from models.machine.layouts import UnitKind
    from tb.system.machine_top import UNIT_RTL

    assert "rtl/arith/clock_gate.v" in UNIT_RTL[UnitKind.MAG]
    for m in (FUSED4, MM_MESH_SYS):
        files = unit_sources(m, ROOT)
        assert files.count("rtl/arith/clock_gate.v") == 1
