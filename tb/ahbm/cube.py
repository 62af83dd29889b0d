"""Python side of the AHBM CUBE bench top (rtl/ahbm/ahbm_cube.v).

One object per test: PE slices loaded and read in bulk through their backdoor
(files, one simulator call each), commands written on a PE's cmd port with the
valid/ready handshake, status and counters read through the hierarchy
(g_pe[p].u_pe.u_core), and waits that are single events on the PE's `evt`
toggle, the CUBE's `faulted` vector or the PE's IPCQ `pop_avail` (Python never
counts clock edges). Every wait
has a cycle bound and ends as a named failure (which PE, what it waited for,
its queue and fault state), never as a silent hang.
"""

from __future__ import annotations

import os

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
from cocotb.triggers import FallingEdge, First, RisingEdge, Timer
from cocotb.utils import get_sim_time

from models.ahbm.ipcq import encode_cmd
from tb.mag.dram import DramBackdoor
from tb.lib.harness import HarnessClock

PERIOD_NS = 10
FAULT_NAMES = {0: "none", 1: "F_OPCODE", 2: "F_ROWS", 3: "F_ALIGN", 4: "F_RANGE", 5: "F_EMPTY",
               6: "F_FRAME", 7: "F_EDGE", 8: "F_RSVD"}
COUNTERS = ("cnt_k", "cnt_v", "cnt_mask", "cnt_q", "cnt_comp", "cnt_push", "cnt_pop", "cnt_merge",
            "cnt_store", "cnt_fault", "cnt_tx", "cnt_rx", "cnt_score", "cmd_done", "cyc_busy", "cyc_mm", "cyc_vec", "cyc_wait",
            "cyc_hidden", "cyc_link", "cyc_pstall", "cyc_mwait",
            "cyc_first", "cyc_last", "cyc_now", "cyc_dma_first", "cyc_dma_last")
PARAMS = ("R", "C", "D", "MAXROWS", "MAXKEYS", "PREFETCH", "CMDQ_DEPTH", "MM_MACS", "VEC_LANES", "WORDS", "ADDR_SHIFT",
          "DMA_BW", "DMA_LAT", "DMA_QDEPTH", "IPCQ_DEPTH", "IPCQ_W")


# Run-time PREFETCH and DMA latency of every PE and depth of every IPCQ queue (ahbm_cube's cfg_prefetch /
# cfg_dma_lat / cfg_ipcq_depth), for a run of a build whose parameters are the largest values wanted
# (tb/ahbm/decode_sweep.py, the ahbm_tightq bench): unset, the build's own.
PREFETCH_ENV = "AGSIM_CUBE_PREFETCH"
DMA_LAT_ENV = "AGSIM_CUBE_DMA_LAT"
IPCQ_DEPTH_ENV = "AGSIM_CUBE_IPCQ_DEPTH"
RUNTIME_ENV = {"PREFETCH": PREFETCH_ENV, "DMA_LAT": DMA_LAT_ENV, "IPCQ_DEPTH": IPCQ_DEPTH_ENV}


class CubeConfigError(ValueError):
    """A run-time configuration the build cannot hold (one line: the value, the limit, the fix)."""


def runtime_config(built: dict[str, int], environ: dict[str, str]) -> dict[str, int]:
    """The run-time values (keys of RUNTIME_ENV given in `built`) a run uses: the environment's within the
    build's (1 up to it), else the build's."""
    out = {}
    for key in built:
        env = RUNTIME_ENV[key]
        raw = str(environ.get(env, "")).strip()
        if not raw:
            out[key] = built[key]
            continue
        try:
            value = int(raw)
        except ValueError:
            raise CubeConfigError(f"{env}={raw!r} is not an integer") from None
        if not 1 <= value <= built[key]:
            raise CubeConfigError(f"{env}={value} is outside 1..{built[key]} (the build's {key}); build the "
                                  f"CUBE with {key}={value} or more to run it")
        out[key] = value
    return out


def check_bench_run_env(environ: Mapping[str, str]) -> None:
    """Refuse a run whose bench (AGSIM_BENCH) the table gives run-time values (Bench.run_env) that did not
    reach this process: `ahbm_tightq` would otherwise run its cases on 1024-word queues and pass, unnoticed."""
    from tb.run.benches import BY_NAME

    bench = BY_NAME.get(environ.get("AGSIM_BENCH", ""))
    for name, value in (bench.run_env.items() if bench else ()):
        if name in RUNTIME_ENV.values() and environ.get(name) != value:
            raise CubeConfigError(f"bench {bench.name} runs at {name}={value} (tb/run/benches.py) but its simulator "
                                  f"process has {name}={environ.get(name)!r}: run it through tb.run.runner, which "
                                  f"passes the bench's run_env")


class CubeTimeout(Exception):
    """A wait on the CUBE passed its cycle bound (the message names what hung)."""


class CubeFaulted(Exception):
    """A wait on the CUBE ended because a PE it depends on raised FAULT: every queue of that PE stops until
    fault_clr, so the wait would only end at its cycle bound (the message names the PE, the code and the tag)."""


@dataclass
class PeFault:
    code: int
    tag: int

    @property
    def name(self) -> str:
        return FAULT_NAMES.get(self.code, f"code {self.code}")


class CubeTB:
    """The CUBE top: R x C PEs, their slices, command ports, status and counters."""

    def __init__(self, dut: Any, **runtime: int) -> None:
        """`runtime` (PREFETCH=, DMA_LAT=, IPCQ_DEPTH=) picks a run's values within the build's, as the
        environment variables of RUNTIME_ENV do (the arguments win)."""
        self.dut = dut
        self.clock = HarnessClock(dut.u_clk)
        self.clk = dut.u_clk.clk
        self.p = {k: int(getattr(dut, k).value) for k in PARAMS}
        self.built = {k: self.p[k] for k in RUNTIME_ENV}  # what the tile slots, delay and IPCQ queues hold
        check_bench_run_env(os.environ)
        env = {**os.environ, **{e: str(runtime[k]) for k, e in RUNTIME_ENV.items() if runtime.get(k) is not None}}
        self.p.update(runtime_config(self.built, env))  # what this run uses
        dut.cfg_prefetch.value = self.p["PREFETCH"]
        dut.cfg_dma_lat.value = self.p["DMA_LAT"]
        dut.cfg_ipcq_depth.value = self.p["IPCQ_DEPTH"]
        self.n_pe = self.p["R"] * self.p["C"]
        # the PEs' handles, looked up once: a kernel's polls read them tens of thousands of times a bench
        self._tops = [dut.g_pe[p].u_pe for p in range(self.n_pe)]
        self._cores = [t.u_core for t in self._tops]
        self.slices = [DramBackdoor(self.core_top(p).u_slice, self.clk, load_file=f"pe{p:02d}_load.hex",
                                    dump_file=f"pe{p:02d}_dump.hex", word_bytes=64) for p in range(self.n_pe)]

    # ------------------------------------------------------------ hierarchy
    def core_top(self, p: int) -> Any:
        return self._tops[p]

    def core(self, p: int) -> Any:
        return self._cores[p]

    def engine(self, p: int) -> Any:
        """PE p's composite engine (pe_engine: the state sets st_m, st_l, st_o)."""
        return self.core(p).u_eng

    def stats(self, p: int) -> Any:
        """PE p's counters and logs (pe_stats: the activity log alog / alog_n, the composite trace tlog)."""
        return self.core(p).u_stats

    def now(self) -> int:
        return int(get_sim_time("ns")) // PERIOD_NS

    async def reset(self) -> None:
        await self.clock.reset()

    # ------------------------------------------------------------ status
    def counters(self, p: int) -> dict[str, int]:
        c = self.core(p)
        out = {k: int(getattr(c, k).value) for k in COUNTERS}
        top = self.core_top(p)
        out["dma_bytes"] = int(top.dma_bytes.value)
        out["dma_busy"] = int(top.dma_busy_cyc.value)
        return out

    def activity_log(self, p: int) -> tuple[list[tuple[int, int]], bool]:
        """PE p's activity log (pe_stats `alog`): [(cycle, code)] of every change of {DMA moving words,
        engine class} since reset, oldest first, and whether it wrapped (then only the newest ALOG)."""
        c = self.stats(p)
        n = int(c.alog_n.value)
        size = len(c.alog)
        out = []
        for i in range(max(0, n - size), n):
            w = int(c.alog[i % size].value)
            out.append((w >> 4, w & 0xF))
        return out, n > size

    def fault(self, p: int) -> PeFault:
        c = self.core(p)
        return PeFault(int(c.fault_code.value), int(c.fault_tag.value))

    def idle(self, p: int) -> bool:
        return bool(int(self.core(p).idle.value))

    def pop_avail(self, p: int) -> int:
        return int(self.core(p).pop_avail.value)

    def pop_head(self, p: int) -> int:
        """Per direction: a word is queued (between packets, a packet's header has arrived): what a
        kernel polls before a streamed MERGE, which merges the packet as the rest of it arrives."""
        return int(self.core(p).pop_valid.value)

    def mon_err(self) -> bool:
        return bool(int(self.dut.mon_err.value))

    def ipcq_undelivered(self) -> int:
        """The IPCQ's queues still holding a word (its pop_valid, a bit per PE and direction): a launch
        that ends with one set lost nothing yet delivered less than it sent."""
        return int(self.dut.u_ipcq.pop_valid.value)

    def describe(self, p: int) -> str:
        c = self.core(p)
        f = self.fault(p)
        return (f"PE {p}: {int(c.cmd_done.value)} commands done, {int(c.cmdq_free.value)} queue entries free, "
                f"engine state {int(c.e_st.value)}, fault {f.name} (tag {f.tag}), pop_avail "
                f"{self.pop_avail(p):04b}, push_valid {int(c.push_valid.value):04b} "
                f"push_ready {int(c.push_ready.value):04b}")

    # ------------------------------------------------------------ waits (single events, bounded)
    async def wait_for(self, p: int, cond: Callable[[], bool], what: str, max_cycles: int,
                       also: Any = None, watch: Sequence[int] = ()) -> None:
        """Until cond() holds, re-evaluated on each event of PE p (its `evt`: a completion, a packet end, a
        fault) and on every change of `also` (a signal or a tuple of signals). Whatever cond() reads must
        change with one of them, else the wait only ends at its bound: that is reported too, as a missed
        wake-up, not taken as success. A FAULT on a PE of `watch` (a kernel's launch) ends the wait at once
        as CubeFaulted, naming it."""
        deadline = self.now() + max_cycles
        watch_mask = sum(1 << q for q in set(watch))
        # PE p's own events, and a FAULT raised on any PE (the cube's `faulted` vector): a kernel is not
        # woken by the other PEs' completions, which its cond() does not read
        trig = [self.core(p).evt.value_change]
        if watch_mask:
            trig.append(self.dut.faulted.value_change)
        if also is not None:
            trig += [x.value_change for x in (also if isinstance(also, tuple) else (also,))]
        while not cond():
            if watch_mask and int(self.dut.faulted.value) & watch_mask:
                self._raise_faulted(what, watch)
            left = deadline - self.now()
            if left <= 0:
                raise CubeTimeout(f"{what}: not reached within {max_cycles} cycles; {self.describe(p)}")
            bound = Timer(left * PERIOD_NS, "ns")
            fired = await First(*trig, bound)
            await FallingEdge(self.clk)
            if fired is bound and cond():
                raise CubeTimeout(f"{what}: held at the {max_cycles}-cycle bound although no awaited signal "
                                  f"changed: the wait misses a wake-up (a bench defect); {self.describe(p)}")

    def _raise_faulted(self, what: str, watch: Sequence[int]) -> None:
        """The first PE of `watch` whose FAULT is raised ends the wait, named with its code and tag."""
        for q in watch:
            f = self.fault(q)
            if f.code:
                raise CubeFaulted(f"{what}: PE {q} raised {f.name} (tag {f.tag:#04x}); its queues stop until "
                                  f"fault_clr, so this wait cannot end; {self.describe(q)}")

    async def wait_idle(self, p: int, max_cycles: int) -> None:
        await self.wait_for(p, lambda: self.idle(p) or self.fault(p).code != 0,
                            f"PE {p} to finish its queue", max_cycles)

    # ------------------------------------------------------------ commands
    async def send(self, p: int, word: int, max_cycles: int = 1_000_000) -> None:
        """Write one 128-bit command (valid/ready at the falling edge, taken at the next rising edge)."""
        c = self.core(p)
        await FallingEdge(self.clk)
        if not int(c.cmd_ready.value):
            await self.wait_for(p, lambda: bool(int(c.cmd_ready.value)), f"PE {p} command queue space",
                                max_cycles)
        self.dut.cmd_data[p].value = word
        self.dut.cmd_valid[p].value = 1
        await RisingEdge(self.clk)
        await FallingEdge(self.clk)
        self.dut.cmd_valid[p].value = 0

    async def cmd(self, p: int, op: str, **fields: int) -> None:
        await self.send(p, encode_cmd(op, self.p["ADDR_SHIFT"], **fields))

    async def clear_fault(self, p: int) -> None:
        await FallingEdge(self.clk)
        self.dut.fault_clr[p].value = 1
        await RisingEdge(self.clk)
        await FallingEdge(self.clk)
        self.dut.fault_clr[p].value = 0

    # ------------------------------------------------------------ memory
    async def load(self, p: int, addr: int, data: np.ndarray) -> None:
        if addr + data.nbytes > self.p["WORDS"] * 64:
            raise ValueError(f"PE {p}: {data.nbytes} bytes at {addr:#x} do not fit its slice of "
                             f"{self.p['WORDS'] * 64} bytes (raise WORDS in the bench parameters)")
        await self.slices[p].load_bytes(addr, data)

    async def read_bf16(self, p: int, addr: int, count: int) -> np.ndarray:
        raw = await self.slices[p].read_bytes(addr, 2 * count)
        return raw.view(np.uint16).copy()
