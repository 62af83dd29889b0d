"""The vector core's module bench: the RTL and the golden model run the same flits, then everything is compared.

``VectorTB`` drives rtl/bench/vc_harness.v (the core at (1,1) of a 1x1 mesh,
a real memory agent and DRAM at (0,1), bench endpoints at (1,0), (1,2) and
(2,1)). One *case* is a set of flits from bench endpoints (CU_DATA bursts,
then IMEM / DESC / RUN) and the DRAM words its fills read. ``run_case`` loads
the DRAM into both sides, predicts with models.vector.memory.CoreWithMemory,
injects, waits for exactly the predicted answers, and then compares:

* every flit captured at each bench endpoint, bit for bit and in order (a
  RUN's INST_COMPLETE carries the RTL's cycle count, which the untimed model
  does not know: its value is checked to be at least 1 and then taken);
* the architectural state after the RUN: L1, V0..V15, S0..S15, K3, P0..P3, VL,
  mode, read from the RTL's registers;
* the DRAM as the memory agent left it;
* the HAZARD reports H1..H4, per id (the RTL's counters against the model's list, tb/vector/hazard_counts.py);
* the RTL's assertion monitors.

A mismatch names the case, the seed that replays it, the program
disassembled and the first differing element decoded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np
from cocotb.triggers import RisingEdge

from models.cu.base import SigCode, signal_fields
from models.noc.flit import FIELDS, FlitType, describe_flit
from models.numerics import E8M15, decode
from models.vector.core import VectorCore
from models.vector.lanes import word_to_u16
from models.vector.disasm import disassemble, listing
from models.vector.isa import L1_WORDS, LANES, N_PREGS, N_SREGS, N_VREGS, VL_MAX, Mode
from models.vector.memory import CoreWithMemory
from tb.mag.dram import DramBackdoor
from tb.lib.expect import compare_per_port
from tb.vector.hazard_counts import count_errors, delta, model_counts, rtl_counts
from tb.lib.harness import StallMode, StallPattern
from tb.mag.timing import MagTiming
from tb.noc.bench import NocTB

UNIT = (1, 1)
HOST, SOUTH, MAG, EAST = (1, 0), (1, 2), (0, 1), (2, 1)
HOSTILE = {"idle": StallPattern(StallMode.RANDOM, 60), "backpressure": StallPattern(StallMode.BURST, 40)}
CHUNKS = VL_MAX // LANES
# The run's cycle bound, derived from the words the model executed: the costliest word under upstream's
# timing rules (clients/vec_timing/latency.md) is a VFILL or VDRAIN of 256 elements, 8 + 3 x 256 cycles at
# the core plus, behind a memory that serves one read every 12 cycles, about 3,100 cycles; 4,000 a word
# leaves room without letting a hang run long. It bounds the run; the quiet detector does not apply while
# the core is busy.
WORD_CYCLES_MAX = 4_000
RUN_CYCLES_BASE = 20_000
# Completion is not landing: a VDRAIN retires once its flits have left the core and the memory agent lands
# them one write transaction at a time. Before the DRAM is read the agent must hold no write (writes_idle);
# it holds at most its write queue (64 flits) plus its 16 slots' writes, each at most one 8-beat transaction
# at its default timing (vc_harness.v sets none of it: tb/mag/timing.py).
LANDING_CYCLES_MAX = MagTiming().write_period(8) * (64 + 16)


def flit_key(flit: int) -> str:
    """Streams with an order of their own at one port: completions, acknowledgements, the rest by type."""
    t = FIELDS["type"].extract(flit)
    if t == FlitType.CU_SIGNAL:
        return "ack" if signal_fields(flit)[0] == SigCode.DATA_RECEIVED else "completion"
    return f"type{t}"


def e8_text(bits: int) -> str:
    return f"{bits:#08x} ({float(decode(np.int64(bits), E8M15))!r})"


def compare_state(want: Mapping[str, Any], got: Mapping[str, Any], limit: int = 6) -> tuple[int, list[str]]:
    """(checks, errors): the model's snapshot against the RTL's, element by element, decoded."""
    errors: list[str] = []
    checks = 0
    for name in ("vl", "mode", "k3"):
        checks += 1
        if int(want[name]) != int(got[name]):
            w, g = int(want[name]), int(got[name])
            text = (f"{Mode(w).name} vs {Mode(g).name}" if name == "mode" else f"{w:#x} vs {g:#x}")
            errors.append(f"{name.upper()}: model {text} (model vs RTL)")
    for r in range(N_SREGS):
        checks += 1
        if want["s"][r] != got["s"][r]:
            errors.append(f"S{r}: model {e8_text(want['s'][r])}, RTL {e8_text(got['s'][r])}")
    bad_v = np.argwhere(want["v"] != got["v"])
    checks += want["v"].size
    for r, e in bad_v[:limit]:
        errors.append(f"V{r}[{e}] (chunk {e // LANES} lane {e % LANES}): model {e8_text(int(want['v'][r, e]))}, "
                      f"RTL {e8_text(int(got['v'][r, e]))}")
    bad_p = np.argwhere(want["p"] != got["p"])
    checks += want["p"].size
    for q, e in bad_p[:limit]:
        errors.append(f"P{q}[{e}]: model {int(want['p'][q, e])}, RTL {int(got['p'][q, e])}")
    bad_l = np.argwhere(want["l1"] != got["l1"])
    checks += want["l1"].size
    for w, lane in bad_l[:limit]:
        errors.append(f"L1[{w}] lane {lane}: model {int(want['l1'][w, lane]):#06x}, RTL {int(got['l1'][w, lane]):#06x}")
    n_bad = len(bad_v) + len(bad_p) + len(bad_l)
    if n_bad > limit:
        errors.append(f"... {n_bad} differing elements in all (V {len(bad_v)}, P {len(bad_p)}, L1 {len(bad_l)})")
    return checks, errors


@dataclass
class CaseResult:
    """What one case measured."""

    checks: int
    errors: list[str]
    cycles: int
    instructions: int
    hazards: dict[str, int]  # HAZARD reports of the case, by id (H1..H4)
    run_cycles: list[int] = field(default_factory=list)  # the RUN results (cycle counts) the RTL returned


class VectorTB:
    """The vector core on vc_harness, with its golden model beside it."""

    def __init__(self, dut: Any, name: str) -> None:
        self.dut = dut
        self.tb = NocTB(dut, name)
        self.v = self.tb.verdict
        self.rng = self.tb.rng
        self.exec = dut.u_dut.u_exec
        self.dram = DramBackdoor(dut.g_bay_mag.dram, self.tb.clock.clk)
        self.dram_words = self.dram.words
        self.dram_base = int(dut.BAY_DRAM_BASE.value)  # byte address of DRAM word 0 (the memory agent's window)
        self.dram_first = self.dram_base >> 5  # the model's word index of DRAM word 0
        self.model = CoreWithMemory(VectorCore(UNIT, MAG))
        self.started = False
        self.rtl_hazards = rtl_counts(0)  # the RTL's counters as last read, by id

    def port(self, coord) -> int:
        return self.tb.geometry.port_index(coord)

    async def start(self) -> None:
        """Reset once; every case after it runs on the state the previous ones left, on both sides.

        Reset does not clear IMEM, L1 and V (units.md V.1) nor the DRAM, and the
        tests of a bench share one simulator, so the model starts from what the
        RTL holds after the reset (the model's own reset covers the rest).
        """
        await self.tb.reset()
        state = self.read_state()
        core = self.model.core
        core.l1[:] = state["l1"]
        core.v[:] = state["v"]
        core.imem = [int(self.exec.imem[a].value) for a in range(len(core.imem))]
        image = await self.dram.read_words(0, self.dram_words)
        self.model.dram.clear()
        self.model.dram.update({self.dram_first + i: w for i, w in enumerate(image) if w})
        self.rtl_hazards = rtl_counts(int(self.dut.hazards.value))
        self.started = True

    # ------------------------------------------------------------ RTL state
    def read_state(self) -> dict[str, Any]:
        """The RTL's architectural state, in the model's snapshot() shape."""
        ex = self.exec
        l1 = np.zeros((L1_WORDS, LANES), dtype=np.uint16)
        for w in range(L1_WORDS):
            l1[w] = word_to_u16(int(ex.l1[w].value))
        v = np.zeros((N_VREGS, VL_MAX), dtype=np.uint32)
        for r in range(N_VREGS):
            for c in range(CHUNKS):
                row = int(ex.vr[r * CHUNKS + c].value)
                v[r, c * LANES:(c + 1) * LANES] = [(row >> (24 * lane)) & 0xFFFFFF for lane in range(LANES)]
        p = np.zeros((N_PREGS, VL_MAX), dtype=bool)
        for q in range(N_PREGS):
            bits = int(ex.preg[q].value)
            p[q] = [(bits >> e) & 1 for e in range(VL_MAX)]
        return {"l1": l1, "v": v, "s": [int(ex.sr[r].value) for r in range(N_SREGS)], "k3": int(ex.k3.value),
                "p": p, "vl": int(ex.vl.value), "mode": int(ex.mode.value)}

    # ------------------------------------------------------------ one case
    async def run_case(self, streams: Mapping[tuple[int, int], Sequence[int]], *, dram: Mapping[int, int] | None = None,
                       label: str = "", words: Sequence[int] = (), hostile: bool = False,
                       check_dram: bool = True) -> CaseResult:
        """Run one case on both sides and compare everything (see the module docstring)."""
        if not self.started:
            await self.start()
        for addr, word in sorted((dram or {}).items()):
            self.model.write_word(addr, word)
        if dram:
            await self._load_dram(dram)
        core = self.model.core
        runs0, hz0, inst0 = core.stats.runs, len(core.hazards), core.stats.instructions
        order = [f for src in sorted(streams) for f in streams[src]]
        sent0 = len(self.model.sent)
        events = self.model.take_all(order)
        events_all = self.model.sent[sent0:]  # memory traffic included
        want: dict[int, list[int]] = {}
        wild: list[tuple[int, int]] = []  # (port, index among that port's completions) of cycle-count args
        for ev in events:
            port = self.port(ev.dst)
            if ev.wild_arg:
                n = sum(1 for f in want.get(port, []) if flit_key(f) == "completion")
                wild.append((port, n))
            want.setdefault(port, []).append(ev.flit)
        total = sum(map(len, want.values()))
        bound = RUN_CYCLES_BASE + WORD_CYCLES_MAX * (core.stats.instructions - inst0) + 200 * total
        run = await self.tb.run_streams({self.port(c): list(f) for c, f in streams.items()}, expect_total=total,
                                        reset=False, clear=True, max_cycles=bound, **(HOSTILE if hostile else {}))
        checks, errors = 1, []
        if run.outcome.ended != "done":
            errors.append(f"run ended by {run.outcome.ended}: {run.outcome.captured}/{total} answers captured")
        run_cycles = self._take_cycle_counts(want, run.records, wild, errors)
        checks += len(run_cycles)
        c, e = compare_per_port(want, run.records, flit_key)
        checks, errors = checks + c, errors + e
        c, e = compare_state(core.snapshot(), self.read_state())
        checks, errors = checks + c, errors + e
        wrote = any(FIELDS["type"].extract(ev.flit) == FlitType.MEM_WR_DATA for ev in events_all)
        if check_dram and (wrote or dram):  # nothing else changes the DRAM; check_dram_now() covers the rest
            c, e = await self._compare_dram()
            checks, errors = checks + c, errors + e
        for hz in core.hazards[hz0:]:
            self.v.report(f"HAZARD {hz.hid}", hz.line(disassemble))
        hz_rtl = rtl_counts(int(self.dut.hazards.value))
        hz_model = model_counts(core.hazards[hz0:])
        checks += len(hz_model)
        errors += count_errors(delta(hz_rtl, self.rtl_hazards), hz_model)
        self.rtl_hazards = hz_rtl
        checks += 1
        if run.mon_err:
            errors.append("an RTL assertion monitor raised mon_err (see the ERROR lines in sim.log)")
        if core.protocol_errors:
            errors.append(f"model protocol errors: {core.protocol_errors}")
            core.protocol_errors.clear()
        if errors:
            errors = [f"case {label or '?'}: {e}" for e in errors]
            if words:
                errors.append("program:\n      " + "\n      ".join(listing(list(words))))
        return CaseResult(checks, errors, run.outcome.cycles, core.stats.instructions - inst0, hz_model, run_cycles)

    def _take_cycle_counts(self, want: dict[int, list[int]], records, wild: list[tuple[int, int]],
                           errors: list[str]) -> list[int]:
        """Put the RTL's cycle count into each predicted RUN completion (after checking it is at least 1)."""
        counts: list[int] = []
        for port, index in wild:
            got = [r.flit for r in records if r.port == port and flit_key(r.flit) == "completion"]
            mine = [i for i, f in enumerate(want[port]) if flit_key(f) == "completion"]
            if index >= len(got):
                continue  # reported as MISSING by the flit comparison
            arg_mask = ((1 << 32) - 1) << 216
            slot = mine[index]
            if (got[index] & ~arg_mask) != (want[port][slot] & ~arg_mask):
                continue  # reported as WRONG by the flit comparison
            cycles = (got[index] >> 216) & 0xFFFF_FFFF
            counts.append(cycles)
            if cycles < 1:
                errors.append(f"a RUN retired with cycle count {cycles}: {describe_flit(got[index])}")
            want[port][slot] = (want[port][slot] & ~arg_mask) | (cycles << 216)
        return counts

    async def _load_dram(self, dram: Mapping[int, int]) -> None:
        """Load the case's DRAM words (byte address -> word) in runs of consecutive words."""
        words = sorted(((a >> 5) - self.dram_first, w) for a, w in dram.items())
        run: list[int] = []
        first = prev = None
        for idx, w in words:
            if not 0 <= idx < self.dram_words:
                raise ValueError(f"DRAM byte address {(idx + self.dram_first) * 32:#x} is outside the bench DRAM "
                                 f"({self.dram_base:#x} + {self.dram_words} words): move it, or raise "
                                 f"BAY_DRAM_WORDS in tb/run/benches.py")
            if prev is not None and idx == prev + 1:
                run.append(w)
            else:
                if run:
                    await self.dram.load_words(first, run)
                first, run = idx, [w]
            prev = idx
        if run:
            await self.dram.load_words(first, run)

    async def _writes_landed(self) -> list[str]:
        """Wait until the memory agent holds no write (every one in the DRAM); an error line past the bound."""
        idle = self.dut.g_bay_mag.u_mag.writes_idle
        for _ in range(LANDING_CYCLES_MAX):
            if int(idle.value):
                return []
            await RisingEdge(self.tb.clock.clk)
        return [f"the memory agent still held writes {LANDING_CYCLES_MAX} cycles after the case (writes_idle low; "
                f"the bound is every write its queue and slots can hold, 8 beats each)"]

    async def _compare_dram(self) -> tuple[int, list[str]]:
        errors = await self._writes_landed()
        if errors:
            return 1, errors
        got = await self.dram.read_words(0, self.dram_words)
        for idx, g in enumerate(got):
            w = self.model.dram.get(self.dram_first + idx, 0)
            if w != g:
                lanes = [f"lane {k}: model {int(a):#06x} RTL {int(b):#06x}"
                         for k, (a, b) in enumerate(zip(word_to_u16(w), word_to_u16(g))) if a != b]
                errors.append(f"DRAM word {idx} (byte {self.dram_base + idx * 32:#x}): " + "; ".join(lanes[:4]))
                if len(errors) >= 4:
                    break
        return self.dram_words, errors

    async def check_dram_now(self) -> None:
        """Compare the whole DRAM (e.g. at the end of a sequence whose cases skipped it when the model wrote
        nothing), into the verdict."""
        self.v.add_checks(*await self._compare_dram())

    def record(self, result: CaseResult) -> None:
        self.v.add_checks(result.checks, result.errors)


__all__ = ["CaseResult", "EAST", "HOST", "MAG", "SOUTH", "UNIT", "VectorTB", "compare_state", "flit_key", "program"]
