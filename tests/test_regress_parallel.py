"""The main job runs benches side by side (tb.run.regress --jobs, a local Dask cluster of two workers), still
reports in the order asked for, and leaves each bench's results in its usual folder (sim_build/<bench>/)."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tb.run import regress


def test_two_benches_side_by_side_pass_and_merge_in_table_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("COCOTB_RANDOM_SEED", "11")
    for var in ("COCOTB_TEST_FILTER", "AGSIM_BENCH_GIVEN", "BENCH", "SIM", "VERBOSE", "WAVES"):
        monkeypatch.delenv(var, raising=False)
    results = tmp_path / "results.xml"
    rc = regress.main(["--bench", "router_turn,fifo", "--jobs", "2", "--results", str(results),
                       "--build-root", str(tmp_path / "build")])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "2 at a time" in out and "7 passed, 0 failed" in out
    suites = [s.get("name") for s in ET.parse(results).getroot().iter("testsuite")]
    assert suites == ["router_turn", "fifo"]  # the order asked for, whichever finished first
    summary = out[out.index("bench               pass"):]
    assert summary.index("router_turn") < summary.index("fifo ")
    for bench in ("router_turn", "fifo"):  # where `make waves` and the docs look, not a farm's runs/<task>/
        assert (tmp_path / "build" / bench / "results.xml").exists()
    assert not (tmp_path / "build" / "runs").exists()
