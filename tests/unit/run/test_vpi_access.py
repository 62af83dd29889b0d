"""The Verilator control file that replaces --public-flat-rw (tb/run/vpi_access.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tb.run.benches import ROOT, get_bench
from tb.run.vpi_access import bench_side, control_file, replace_public_flag, writable_modules


def test_bench_side_sources() -> None:
    assert bench_side(ROOT / "rtl/bench/harness_clock.v")
    assert bench_side(Path("/tmp/build/gen/fused4_harness.v"))
    assert not bench_side(Path("/tmp/build/gen/fused4.v"))  # the generated machine is design
    assert not bench_side(ROOT / "rtl/mag/mag_dram.v")


def test_only_the_bench_side_is_writable() -> None:
    bench = get_bench("mag")
    mods = writable_modules(bench.source_paths)
    assert "harness_clock" in mods and "mag_harness" in mods
    assert "mag" not in mods and "mag_dram" not in mods
    text = control_file(bench.source_paths, bench.toplevel)
    assert text.startswith("`verilator_config\n")
    assert 'public_flat_rd -module "*" -var "*"' in text
    assert 'public_flat_rw -module "mag_dram"' not in text


def test_a_design_top_drives_its_own_ports() -> None:
    """A bench whose top is a design module (the AHBM CUBE) writes that module's ports."""
    bench = get_bench("pe")
    text = control_file(bench.source_paths, bench.toplevel)
    assert 'public_flat_rw -module "ahbm_cube" -var "*"' in text
    assert 'public_flat_rw -module "pe_core"' not in text


def test_backdoor_registers_declare_their_write_access() -> None:
    """The design registers Python writes say so where they are declared (the control file does not)."""
    for path, regs in (("rtl/mag/mag_dram.v", ("load_req", "dump_req", "bd_lo", "bd_hi")),
                       ("rtl/ahbm/pe/pe_slice.v", ("load_req", "dump_req", "bd_lo", "bd_hi"))):
        text = (ROOT / path).read_text()
        for reg in regs:
            assert f"{reg} /*verilator public_flat_rw*/" in text, (path, reg)


def test_flag_replaced_and_missing_flag_refused(tmp_path: Path) -> None:
    vlt = tmp_path / "a.vlt"
    cmd = replace_public_flag(["verilator", "--vpi", "--public-flat-rw", "x.v"], vlt)
    assert cmd == ["verilator", "--vpi", str(vlt), "x.v"]
    with pytest.raises(RuntimeError, match="no longer passes --public-flat-rw"):
        replace_public_flag(["verilator", "--vpi", "x.v"], vlt)
