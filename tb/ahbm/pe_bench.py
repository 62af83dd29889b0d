"""What the PE module benches share (tb/ahbm/test_pe.py, test_pe_merge.py): PE 0's slice as an operand
allocator with the golden model beside it, the bounded waits on a PE, and the (m,l,O) header check."""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from cocotb.triggers import FallingEdge, Timer

from models.ahbm.attention import State, attn_tile, empty_state, finalize
from models.ahbm.launch import BF16_NEG_INF, align, mask_stride, put_bf16
from models.ahbm.numerics import bf16_to_f32
from models.ahbm.ipcq import COMMON_FIELDS, KIND_MLO, OP_FIELDS, Header, mlo_words
from tb.ahbm.case import bf16_rand
from tb.ahbm.cube import FAULT_NAMES, PERIOD_NS, CubeTB
from tb.lib.verdict import Verdict, begin_test

MAX_CYCLES = 200_000


@dataclass
class Tile:
    keys: int
    k_addr: int
    v_addr: int
    k: np.ndarray
    v: np.ndarray
    mask_addr: int | None = None
    mask: np.ndarray | None = None      # bf16 [rows, keys] 0 / -inf


def mask_f32(m: np.ndarray | None) -> np.ndarray | None:
    return None if m is None else bf16_to_f32(m)


class PeTB:
    """One PE's slice (PE 0 unless told) as a bump allocator of operands, and the model run alongside;
    its commands go to that PE unless a call names another."""

    def __init__(self, cube: CubeTB, verdict: Verdict, seed: int, pe: int = 0) -> None:
        self.cube, self.v, self.pe = cube, verdict, pe
        self.rng = np.random.default_rng(seed)
        self.d = cube.p["D"]
        self.top = 0
        self.image: list[tuple[int, np.ndarray]] = []
        self.t0 = cube.now()                     # this test's reset: its cycles are counted from here

    def alloc(self, arr: np.ndarray) -> int:
        addr = self.top
        self.image.append((addr, np.ascontiguousarray(arr, dtype=np.uint16)))
        self.top = align(addr + arr.nbytes)
        return addr

    def q(self, rows: int) -> tuple[int, np.ndarray]:
        q = bf16_rand(self.rng, rows, self.d)
        return self.alloc(q), q

    def tile(self, keys: int, rows: int = 8, masked: bool = False) -> Tile:
        k = bf16_rand(self.rng, keys, self.d)
        v = bf16_rand(self.rng, keys, self.d)
        t = Tile(keys, self.alloc(k), self.alloc(v), k, v)
        if masked:
            m = np.where(self.rng.random((rows, keys)) < 0.4, BF16_NEG_INF, 0).astype(np.uint16)
            m[:, 0] = 0                              # no fully masked row unless a test wants one
            self.set_mask(t, m)
        return t

    def set_mask(self, t: Tile, m: np.ndarray) -> None:
        stored = np.zeros((m.shape[0], mask_stride(t.keys)), dtype=np.uint16)
        stored[:, :t.keys] = m
        t.mask, t.mask_addr = m, self.alloc(stored)

    async def load(self) -> None:
        blob = np.zeros(self.top, dtype=np.uint8)
        for addr, arr in self.image:
            put_bf16(blob, addr, arr)
        await self.cube.load(self.pe, 0, blob)

    async def attn(self, t: Tile, rows: int, sreg: int = 0, qreg: int = 0, init: bool = False,
                   push: int | None = None, tag: int = 0, pe: int | None = None, fence: bool = False) -> None:
        f = dict(rows=rows, keys=t.keys, sreg=sreg, qreg=qreg, k_addr=t.k_addr, v_addr=t.v_addr,
                 init=int(init), tag=tag, fence=int(fence))
        if t.mask_addr is not None:
            f.update(mask_en=1, mask_addr=t.mask_addr)
        if push is not None:
            f.update(push_en=1, dir=push, push_tag=tag)
        await self.cube.cmd(self.pe if pe is None else pe, "ATTN_TILE", **f)

    async def store(self, sreg: int, rows: int, pe: int | None = None) -> tuple[int, int]:
        pe = self.pe if pe is None else pe
        o_addr = self.top
        self.top = align(self.top + rows * self.d * 2)
        await self.cube.cmd(pe, "NORM_STORE", sreg=sreg, rows=rows, o_addr=o_addr)
        return o_addr, rows

    async def read_o(self, o_addr: int, rows: int, pe: int | None = None) -> np.ndarray:
        pe = self.pe if pe is None else pe
        return (await self.cube.read_bf16(pe, o_addr, rows * self.d)).reshape(rows, self.d)

    def check_o(self, got: np.ndarray, state: State, what: str) -> None:
        exp = finalize(state)
        bad = int(np.count_nonzero(got != exp))
        at0 = tuple(int(i) for i in np.argwhere(got != exp)[0]) if bad else ()
        self.v.check(bad == 0, f"{what}: {bad} of {exp.size} bf16 outputs differ from the model"
                     + ("" if bad == 0 else f" (first at {at0}: {int(got[at0]):#06x} vs {int(exp[at0]):#06x})"))

    def check_counts(self, pe: int, **expect: int) -> dict[str, int]:
        c = self.cube.counters(pe)
        for k, e in expect.items():
            self.v.check(c[k] == e, f"PE {pe} {k} = {c[k]}, expected {e}")
        return c

    def trace(self, n: int, pe: int = 0) -> list[dict[str, int]]:
        """The first n composites' cycles: kiss, kland, viss, vland, s2, s6."""
        out = []
        for i in range(n):
            w = int(self.cube.stats(pe).tlog[i].value)
            names = ("s6", "s2", "vland", "viss", "kland", "kiss")
            out.append({nm: (w >> (32 * j)) & 0xFFFFFFFF for j, nm in enumerate(names)})
        return out

    async def finish(self, *pes: int) -> None:
        for p in pes or (0,):
            await self.cube.wait_idle(p, MAX_CYCLES)
            f = self.cube.fault(p)
            self.v.check(f.code == 0, f"PE {p} faulted: {f.name} tag {f.tag}")
        self.v.check(not self.cube.mon_err(), "a PE, DMA or IPCQ monitor fired (see ERROR lines)")
        self.v.cycles = self.cube.now() - self.t0


async def start_session(dut, bench: str, prefetch: int | None = None) -> tuple[CubeTB, PeTB, Verdict]:
    """Reset the CUBE and open a test: the verdict named after the bench, PE 0's operand allocator."""
    verdict = begin_test(os.environ.get("AGSIM_BENCH", bench), bench, dut._log)
    cube = CubeTB(dut, PREFETCH=prefetch)
    await cube.reset()
    return cube, PeTB(cube, verdict, verdict.seed), verdict


def model_sweep(q: np.ndarray, tiles: list[Tile], state: State | None = None) -> State:
    st = empty_state(q.shape[0], q.shape[1]) if state is None else state
    for t in tiles:
        st = attn_tile(q, t.k, t.v, mask_f32(t.mask), st)
    return st


async def wait_cycles(cube: CubeTB, n: int) -> None:
    """n cycles as one timer event, ending on a falling edge."""
    await Timer(n * PERIOD_NS, "ns")
    await FallingEdge(cube.clk)


async def wait_pop_avail(cube: CubeTB, p: int, d: int, what: str) -> None:
    await cube.wait_for(p, lambda: bool(cube.pop_avail(p) >> d & 1), what, MAX_CYCLES,
                        also=cube.core(p).pop_avail)


async def wait_done(cube: CubeTB, p: int, n: int, what: str) -> None:
    """Until PE p has completed n commands in all (or faulted)."""
    await cube.wait_for(p, lambda: int(cube.core(p).cmd_done.value) >= n or cube.fault(p).code != 0, what,
                        MAX_CYCLES)


def check_header(v: Verdict, word: int, d: int, rows: int, src: int, push_tag: int, what: str,
                 width: int = 64) -> None:
    """A POP_INFO word against the (m,l,O) header of docs/ahbm.md §6 (LEN in words of `width` bits)."""
    h = Header.unpack(word)
    want = mlo_words(d, rows, 1, width)
    v.check(h.length == want, f"{what}: header LEN {h.length}, expected mlo_words = {want}")
    v.check(h.kind == KIND_MLO, f"{what}: header KIND {h.kind:#x}, expected {KIND_MLO:#x}")
    v.check(h.src == src, f"{what}: header source PE {h.src}, expected {src}")
    v.check(h.tag & 0xFF == rows - 1, f"{what}: header ROWS-1 field {h.tag & 0xFF}, expected {rows - 1}")
    v.check(h.tag >> 8 & 0xFF == push_tag, f"{what}: header PUSH_TAG {h.tag >> 8 & 0xFF:#x}, "
            f"expected {push_tag:#x}")
    v.check(h.tag >> 16 == 0, f"{what}: header bits [63:48] = {h.tag >> 16:#x}, expected 0")


FAULT_CODES = {name: code for code, name in FAULT_NAMES.items()}
UNCHANGED = ("cnt_k", "cnt_v", "cnt_mask", "cnt_q", "cnt_comp", "cnt_push", "cnt_pop", "cnt_merge", "cnt_store",
             "cnt_score", "dma_bytes")


def reserved_bit(op: str) -> int:
    """The lowest bit of [127:32] that no field of `op` uses (docs/ahbm.md §4: must be 0, else F_RSVD)."""
    used = 0
    for lsb, width in {**COMMON_FIELDS, **OP_FIELDS[op]}.values():
        used |= ((1 << width) - 1) << lsb
    return next(b for b in range(32, 128) if not used >> b & 1)


async def expect_fault(cube: CubeTB, v: Verdict, word: int, name: str, tag: int, what: str,
                       pop_info_kept: bool = True) -> None:
    """Write `word` to PE 0 (queue empty, no fault): it must fault `name` with `tag`, do nothing, stop the
    queue (a NOP behind it stays undone), count in cnt_fault; fault_clr resumes the queue."""
    core = cube.core(0)
    before = cube.counters(0)
    info = int(core.pop_info.value)
    await cube.send(0, word)
    await cube.wait_for(0, lambda: cube.fault(0).code != 0 or int(core.cmd_done.value) != before["cmd_done"],
                        f"{what}: a fault", 20_000)
    f = cube.fault(0)
    v.check(f.code == FAULT_CODES[name], f"{what}: fault {f.name}, expected {name}")
    v.check(f.tag == tag, f"{what}: fault tag {f.tag:#x}, expected {tag:#x}")
    nop_tag = tag ^ 0xFF
    await cube.cmd(0, "NOP", tag=nop_tag)
    await wait_cycles(cube, 64)
    mid = cube.counters(0)
    v.check(mid["cmd_done"] == before["cmd_done"], f"{what}: {mid['cmd_done'] - before['cmd_done']} "
            "command(s) completed: the faulting command or the NOP behind it ran while faulted")
    v.check(cube.fault(0).code == FAULT_CODES[name], f"{what}: the fault did not stay until cleared")
    v.check(not cube.idle(0), f"{what}: PE 0 idle with a NOP queued behind the fault")
    v.check(mid["cnt_fault"] == before["cnt_fault"] + 1, f"{what}: cnt_fault {before['cnt_fault']} -> "
            f"{mid['cnt_fault']}, expected +1")
    for k in UNCHANGED:
        v.check(mid[k] == before[k], f"{what}: {k} {before[k]} -> {mid[k]}: the faulting command did something")
    if pop_info_kept:
        v.check(int(core.pop_info.value) == info, f"{what}: POP_INFO changed")
    await cube.clear_fault(0)
    await cube.wait_for(0, lambda: int(core.cmd_done.value) == before["cmd_done"] + 1,
                        f"{what}: the NOP behind the fault after fault_clr", 1000)
    v.check(int(core.last_tag.value) == nop_tag, f"{what}: last completed tag {int(core.last_tag.value):#x}, "
            f"expected the NOP's {nop_tag:#x}")
    v.check(cube.fault(0).code == 0, f"{what}: FAULT not cleared by fault_clr")


# ---------------------------------------------------------------- sizes, fields and lines the feature tests use


def kv_bytes(keys: int, d: int) -> int:
    """Bytes of one K (or V) tile: keys x d bf16 (docs/ahbm.md §3 S1/S5)."""
    return keys * d * 2


def mask_bytes(rows: int, keys: int) -> int:
    """Bytes of one stored mask tile: rows x mask_stride(keys) bf16."""
    return rows * mask_stride(keys) * 2


def mm_cycles(cube: CubeTB, rows: int, keys: int) -> int:
    """An MM stage's length in the PE's timing model (rtl/ahbm/pe/pe_engine.v header)."""
    return -(-rows * keys * cube.p["D"] // cube.p["MM_MACS"])


def set_field(word: int, field: tuple[int, int], value: int) -> int:
    """The 128-bit command word with one (lsb, width) field replaced by a raw value."""
    lsb, width = field
    mask = ((1 << width) - 1) << lsb
    return (word & ~mask) | ((value << lsb) & mask)


def bf16_nan(x: np.ndarray) -> np.ndarray:
    """Which bf16 patterns are NaNs (exponent all ones, mantissa not zero)."""
    return ((x & 0x7F80) == 0x7F80) & ((x & 0x007F) != 0)


def report(dut, text: str) -> None:
    """A line of the pe bench that tb.run.regress prints on the console (REPORT tag)."""
    dut._log.info("REPORT pe %s", text)
