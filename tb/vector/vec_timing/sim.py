"""The cocotb side of rtl/bench/vt_harness.v: one record in, everything the harness recorded out.

Many records run in one simulation. Per record, Python never waits on single
clock edges while the program runs: it writes the record's flits and the DRAM
lines to change as two $readmemh files, has the harness load them and put the
core's memories back to their power-on zeros (upstream's two-state simulation
read never-written state as 0), resets, raises `go` and awaits the harness's
`rec_done` (the harness's own watchdog bounds it); then the harness writes its
logs with $writememh and Python parses them (tb/vector/vec_timing/observed.py).
The DRAM is not cleared line by line: Python remembers which lines the last
record loaded or the core wrote, and the next load writes zeros there.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cocotb.triggers import FallingEdge, RisingEdge

from tb.lib.harness import HarnessClock
from tb.vector.hazard_counts import rtl_counts
from tb.vector.vec_timing.observed import (
    Limits, Observed, hex_values, parse_runs, parse_signals, parse_trace, parse_writes,
)
from tb.vector.vec_timing.records import Record

PARAMETERS = ("FLIT_DEPTH", "SIG_DEPTH", "TRACE_DEPTH", "RUN_DEPTH", "CUDO_DEPTH", "WLOG_DEPTH", "MLOG_DEPTH",
              "MAX_CYCLES", "FEED_INTERVAL", "MEM_FIRST", "MEM_INTERVAL", "END_CYCLES")
DUMPS = ("vt_sig.hex", "vt_trace.hex", "vt_run.hex", "vt_cudo.hex", "vt_wlog.hex", "vt_rq.hex", "vt_rs.hex",
         "vt_drain.hex")


class VtHarness:
    """Drives one vt_harness instance (`dut`) through records."""

    def __init__(self, dut: Any, workdir: Path | None = None) -> None:
        self.dut = dut
        self.clock = HarnessClock(dut.u_clk)
        self.clk = self.clock.clk
        self.workdir = workdir or Path(os.getcwd())
        self.params = {p: int(getattr(dut, p).value) for p in PARAMETERS}
        self.limits = Limits.from_parameters(self.params)
        self.dirty: set[int] = set()  # DRAM lines that may be nonzero
        self.wipe_dram = False  # a write log overflowed: the written lines are not all known

    def _path(self, name: str) -> Path:
        return self.workdir / name

    async def _handshake(self, req: Any, ack: Any) -> None:
        await RisingEdge(self.clk)
        req.value = 1
        await RisingEdge(ack)
        req.value = 0
        await RisingEdge(self.clk)

    def _dram_file(self, rec: Record) -> str:
        """The sparse $readmemh image: the record's initial lines, zeros where the last record left data."""
        init = {rec.dram_line0 + k: v for k, v in enumerate(rec.dram_lines)}
        lines = {line: 0 for line in self.dirty} | init
        lines.setdefault(0, 0)  # never an empty file
        return "".join(f"@{line:x}\n{v:064x}\n" for line, v in sorted(lines.items()))

    async def load(self, rec: Record) -> None:
        """The record's flits and DRAM into the harness, the core's memories to zero, then reset."""
        flits = rec.flits()
        self._path("vt_flits.hex").write_text("".join(f"{f:072x}\n" for f in flits))
        self._path("vt_dram.hex").write_text(self._dram_file(rec))
        await self._handshake(self.dut.load_req, self.dut.load_ack)
        self.dut.clear_dram.value = int(self.wipe_dram)
        await self._handshake(self.dut.clear_req, self.dut.clear_ack)
        self.dut.clear_dram.value = 0
        self.dirty = {rec.dram_line0 + k for k in range(len(rec.dram_lines))}
        self.wipe_dram = False
        await self.clock.reset()
        self.dut.n_flits.value = len(flits)
        self.dut.n_inst.value = len(rec.cu_inst)

    async def run(self, rec: Record) -> Observed:
        """Play the record to its end and collect what the harness recorded."""
        await self.load(rec)
        await FallingEdge(self.clk)
        self.dut.go.value = 1
        await RisingEdge(self.clk)
        if not int(self.dut.rec_done.value):
            await RisingEdge(self.dut.rec_done)
        await FallingEdge(self.clk)
        obs = await self._collect(rec)
        self.dut.go.value = 0
        await RisingEdge(self.clk)
        return obs

    async def _collect(self, rec: Record) -> Observed:
        d = self.dut
        counts = {n: int(getattr(d, n).value) for n in ("sig_n", "tr_n", "run_n", "cudo_n", "wl_n", "rq_n", "rs_n")}
        for name in DUMPS:
            self._path(name).unlink(missing_ok=True)
        if rec.drain_n:
            d.bd_lo.value = rec.drain_line0
            d.bd_hi.value = rec.drain_line0 + rec.drain_n - 1
        d.dump_dram.value = int(rec.drain_n > 0)
        await self._handshake(d.dump_req, d.dump_ack)

        def read(name: str, n: int) -> list[int]:
            return hex_values(self._path(name).read_text().splitlines()) if n else []

        runs = parse_runs(read("vt_run.hex", counts["run_n"]))
        trace, stray = parse_trace(read("vt_trace.hex", counts["tr_n"]), len(runs))
        writes = parse_writes(read("vt_wlog.hex", counts["wl_n"]))
        self.dirty |= {line for line, _ in writes}
        self.wipe_dram = counts["wl_n"] > self.limits.writes
        return Observed(
            sigs=parse_signals(read("vt_sig.hex", counts["sig_n"])),
            runs=runs,
            trace=trace,
            drained=read("vt_drain.hex", rec.drain_n),
            writes=writes,
            cu_data_out=read("vt_cudo.hex", counts["cudo_n"]),
            request_cycles=read("vt_rq.hex", counts["rq_n"]),
            response_cycles=read("vt_rs.hex", counts["rs_n"]),
            harness_err=int(d.err.value),
            core_err=int(d.core_err.value),
            cycles=int(d.cyc.value),
            hazards=rtl_counts(int(d.hazards.value)),
            stray_trace=stray,
        )


__all__ = ["VtHarness"]
