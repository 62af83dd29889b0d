"""Generated machine tops: one instance per unit, the names the benches rely on, and they compile."""

from __future__ import annotations

import subprocess

import pytest

from models.machines import MACHINES, MM_MESH, MM_MESH_SYS
from tb.benches import HARNESS_RTL, NOC_RTL, ROOT
from tb.machine_top import render_harness, render_machine, unit_sources, write_machine_sources


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
    assert "reg [15:0] s_axil_awaddr = 0;" in render_harness(MM_MESH_SYS)


@pytest.mark.parametrize("name", sorted(MACHINES))
def test_generated_machine_compiles(name: str, tmp_path) -> None:
    m = MACHINES[name]
    files = write_machine_sources(m, tmp_path)
    srcs = list(NOC_RTL) + list(HARNESS_RTL) + unit_sources(m, ROOT) + [str(f) for f in files]
    r = subprocess.run(["iverilog", "-g2012", "-I", "rtl/noc", "-o", str(tmp_path / "m.vvp"),
                        "-s", f"{name}_harness", *srcs], capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0, r.stderr
