"""The tracing core: the golden ``VectorCore`` with a recorder around its instruction step.

Every instruction it executes is logged (``Executed``) with the state it issued
in (VL, mode, the chain words it gathered, the L1 words and memory bytes it
touches), and every fault (``FaultRecord``) with its context. Nothing about the
behaviour changes, so a bench may use it as its reference model (``new_model``).
cover.py counts the log, timing.py re-checks the timing rules on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.noc.flit import FIELDS
from models.vector import isa
from models.vector.core import MAG_DEFAULT, Coord, VectorCore
from models.vector.isa import (
    ALU_LAST, CHAIN_DEPTH, IMEM_WORDS, L1_WORDS, LANES, MAX_WALK, SRC_C, SRC_S, SRC_V, Fault, Mode, Word,
)
from models.vector.memory import CoreWithMemory
from models.vector.words import WordFault

from .spec import ADDR_MOD, raw_walk, reads, walk_product

STEP_LIMIT = 200_000  # instructions per RUN before the tracer calls the program a runaway
TRANSC = {0x0E: "exp2", 0x0F: "log2", 0x10: "inv", 0x11: "rsqrt"}


class RunawayProgram(RuntimeError):
    """A RUN executed more than STEP_LIMIT instructions: the generator built a program that does not halt."""


def _unread(w: Word, sel: int) -> str:
    """':unread' when selector `sel` appears only on operands the word's op does not read (V.4: still checked)."""
    on = [rd for s, rd in zip(w.selectors, reads(w.op)) if s == sel]
    return ":unread" if on and not any(on) else ""


# ---------------------------------------------------------------- the log
@dataclass(frozen=True, slots=True)
class Executed:
    """One executed instruction and the state it issued in."""

    run: int
    pc: int
    word: int
    vl: int
    mode: int
    stages: tuple[int, ...] = ()  # chain words, head first (ALU words in D2 / D4)
    l1: tuple[int, ...] = ()  # L1 words read or written (VLD, VST, VFILL target, VDRAIN source)
    mem: tuple[int, ...] = ()  # byte addresses mod 2^40 (VFILL source, VDRAIN-to-memory destination)
    node_dst: Coord | None = None
    value: int | None = None  # VSETI immediate, VLOOP count, VSHUF shift, VSETVL value
    wrap: bool = False  # an L1 walk whose unreduced address left 0..511 / a VFILL/VDRAIN L1 range past 511
    tags: frozenset[str] = frozenset()  # operand classes seen (transcendental ranges, special loads)


@dataclass(frozen=True, slots=True)
class FaultRecord:
    """A RUN that faulted: where, on what, and in which context."""

    run: int
    code: int
    variant: str  # e.g. "F_OPCODE:gathered:VLD", "F_LEN:cap", "F_CUDATA:run-start"
    pc: int | None = None
    word: int | None = None
    fills_in_flight: bool = False


def _shape(kind: str, dims) -> set[str]:
    """A walk's shape: how many dimensions step (bound > 1) and whether one of them steps by < 0 or by 0."""
    used = [(s, b) for s, b in dims if (b or 1) > 1]
    out = {f"{kind}:dims{len(used)}"}
    if any(s < 0 for s, _ in used):
        out.add(f"{kind}:neg-stride")
    if any(s == 0 for s, _ in used):
        out.add(f"{kind}:zero-stride")
    return out


def _classes(op: int, x: np.ndarray) -> set[str]:
    """Which interesting input ranges (units.md V.6.4) the elements of a transcendental's operand fall in."""
    s, e, m = x >> 23 & 1, x >> 15 & 0xFF, x & 0x7FFF
    name = TRANSC[op]
    out: set[str] = set()
    nan = (e == 255) & (m != 0)
    if nan.any():
        out.add(f"{name}:nan")
    if ((e == 255) & (m == 0)).any():
        out.add(f"{name}:inf")
    if (e == 0).any():
        out.add(f"{name}:zero")
    fin = (e > 0) & (e < 255)
    if name == "exp2":
        for cls, sel in (("big", fin & (e > 134)), ("d1", fin & (e == 134)), ("mid", fin & (e >= 127) & (e < 134)),
                         ("small", fin & (e < 127))):
            for sign, name_s in ((0, "+"), (1, "-")):
                if (sel & (s == sign)).any():
                    out.add(f"exp2:{cls}{name_s}")
    elif name in ("log2", "rsqrt"):
        if (fin & (s == 1)).any():
            out.add(f"{name}:neg")
        pos = fin & (s == 0)
        if name == "rsqrt":
            for cls, sel in (("even", pos & (e % 2 == 0)), ("odd", pos & (e % 2 == 1))):
                if sel.any():
                    out.add(f"rsqrt:{cls}")
        elif pos.any():
            out.add("log2:pos")
    elif fin.any():
        out.add("inv:normal")
    if (fin & (m == 0)).any():
        out.add(f"{name}:pow2")
    return out


class TracingCore(VectorCore):
    """VectorCore plus a log of every executed instruction and fault (behaviour unchanged).

    It hooks the model's private ``_step`` / ``_start_run`` / ``_finish``: a
    word that waits for fill responses raises out of ``_step`` and runs again
    later, so it is logged once, when it executes.
    """

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT) -> None:
        self.trace: list[Executed] = []
        self.fault_log: list[FaultRecord] = []
        self.run_index = 0
        self.step_limit = STEP_LIMIT
        self._steps = 0
        self._cud_causes: list[str] = []  # why F_CUDATA is pending, oldest first
        super().__init__(coord, mag)

    # -------------------------------------------------- hooks
    def _start_run(self, inst: int, pc: int):
        self.run_index += 1
        self._steps = 0
        if self.cud_pending:
            cause = self._cud_causes[0] if self._cud_causes else "?"
            self.fault_log.append(FaultRecord(self.run_index, Fault.F_CUDATA, f"F_CUDATA:run-start:{cause}"))
            self._cud_causes.clear()
        return super()._start_run(inst, pc)

    def _cu_data(self, flit: int):
        """Note why a burst leaves F_CUDATA pending (V.12): rejected by buf or range, or interleaved."""
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        if self.burst is None:
            buf, off, ln = (flit >> 248) & 0xFF, (flit >> 232) & 0xFFFF, (flit >> 224) & 0xFF
            if buf:
                self._cud_causes.append("rejected-buf")
            elif off + ln >= L1_WORDS:
                self._cud_causes.append("rejected-range")
        elif src != self.burst.src:
            self._cud_causes.append("interleaved")
        return super()._cu_data(flit)

    def _step(self, w: Word, r, out) -> bool:
        self._steps += 1
        if self._steps > self.step_limit:
            raise RunawayProgram(f"RUN {self.run_index}: more than {self.step_limit} instructions (pc {r.pc})")
        rec = self._observe(w, r.pc)
        try:
            halted = super()._step(w, r, out)
        except WordFault as f:
            self.fault_log.append(FaultRecord(self.run_index, f.code, self._variant(f.code, w, r.pc), r.pc, w.raw,
                                              bool(self.fills)))
            raise
        self.trace.append(rec)
        return halted

    # -------------------------------------------------- what an instruction touches
    def _observe(self, w: Word, pc: int) -> Executed:
        op, vl, mode = w.op, self.vl, self.mode
        kw: dict = {}
        if op <= ALU_LAST:
            if mode in (Mode.D2, Mode.D4):
                kw["stages"] = tuple(self.imem[(pc + k) % IMEM_WORDS] for k in range(CHAIN_DEPTH[Mode(mode)]))
            elif op in TRANSC and w.sa != SRC_C:
                kw["tags"] = frozenset(_classes(op, self._operand_a(w)[:vl].astype(np.int64)))
        elif op in (isa.OP_VLD, isa.OP_VST) and w.dt in (isa.DT_FP16, isa.DT_FP32):
            steps = -(-vl // LANES) * (2 if w.dt == isa.DT_FP32 else 1)
            raw = raw_walk(self.base[w.ad], self.dims[w.ad], steps, w.off)
            kw["l1"] = tuple(a % L1_WORDS for a in raw)
            kw["wrap"] = len({a // L1_WORDS for a in raw}) > 1  # the walk crosses a multiple of 512
            kind = "ld" if op == isa.OP_VLD else "st"
            tags = _shape(kind, self.dims[w.ad])
            if op == isa.OP_VLD and self._special_load(kw["l1"], w.dt):
                tags.add("load:special")
            kw["tags"] = frozenset(tags)
        elif op in (isa.OP_VFILL, isa.OP_VDRAIN):
            dims = self.dims[w.ad]
            total = min(walk_product(b for _, b in dims), 0xFFFF)
            if total <= MAX_WALK:
                kw["l1"] = tuple((w.l1_start + n) % L1_WORDS for n in range(total))
                kw["wrap"] = w.l1_start + total > L1_WORDS
                if op == isa.OP_VFILL or not w.node:
                    kw["mem"] = tuple(a % ADDR_MOD for a in raw_walk(self.base[w.ad], dims, total))
                    kw["tags"] = frozenset(_shape("fill" if op == isa.OP_VFILL else "drain", dims))
                else:
                    kw["node_dst"] = (w.dst_x, w.dst_y)
                    remote = (self.base[w.ad] >> 26) & 0xFF
                    kw["tags"] = frozenset({"node:remote" if remote else "node:local"})
        elif op == isa.OP_VSETI:
            kw["value"] = self.imem[(pc + 1) % IMEM_WORDS] & isa.E8_MASK
        elif op in (isa.OP_VLOOP, isa.OP_VSETVL):
            kw["value"] = self.s[w.va]
        elif op == isa.OP_VSHUF:
            kw["value"] = self.s[w.vb] & 0xF
        return Executed(self.run_index, pc, w.raw, vl, mode, **kw)

    def _operand_a(self, w: Word) -> np.ndarray:
        if w.sa == SRC_V:
            return self.v[w.va]
        value = self.s[w.va] if w.sa == SRC_S else (self.k3 if w.va & 3 == 3 else isa.K_CONST[w.va & 3])
        return np.full(isa.VL_MAX, value, dtype=np.uint32)

    def _special_load(self, words: tuple[int, ...], dt: int) -> bool:
        """Whether a VLD reads a zero, infinity or NaN lane (the special values the generator sprinkles)."""
        lanes = self.l1[list(words)].astype(np.uint32)
        if dt == isa.DT_FP16:
            e = lanes >> 10 & 0x1F
            return bool(((e == 31) | ((lanes & 0x7FFF) == 0)).any())
        hi = lanes[:, 1::2]
        e = hi >> 7 & 0xFF
        return bool(((e == 255) | (e == 0)).any())

    # -------------------------------------------------- fault context
    def _variant(self, code: int, w: Word, pc: int) -> str:
        """A short name of how a fault was reached (trigger and precedence, units.md V.10)."""
        name = isa.FAULT_NAMES[code]
        op, mode = w.op, Mode(self.mode)
        if code == Fault.F_DTYPE:
            return f"{name}:{w.name}"
        if code == Fault.F_REDVL:
            return f"{name}:{'TREE' if mode == Mode.TREE else 'notTREE'}"
        if code == Fault.F_VL:
            return f"{name}:{self.s[w.va]:#x}"
        if code == Fault.F_LEN:
            prod = walk_product(b for _, b in self.dims[w.ad])
            kind = "node" if op == isa.OP_VDRAIN and w.node else w.name
            return f"{name}:{kind}" + (":cap" if prod > 0xFFFF else "")
        if code == Fault.F_LOOP:
            lp = self.loop
            inside = (pc - lp.top) % IMEM_WORDS < (lp.end - lp.top) % IMEM_WORDS
            return f"{name}:{'nested' if inside else 'fallthrough'}"
        if code == Fault.F_CHAIN:
            return f"{name}:{'flat' if mode == Mode.FLAT else 'head'}" + _unread(w, SRC_C)
        if code == Fault.F_OPCODE:
            if op == isa.OP_VRED:
                return f"{name}:vred@{mode.name}"
            if mode == Mode.TREE:
                return f"{name}:tree-alu" + (":with-C" if SRC_C in w.selectors else "")
            for k in range(1, CHAIN_DEPTH[mode]):
                g = Word(self.imem[(pc + k) % IMEM_WORDS])
                if g.op > ALU_LAST:
                    return f"{name}:gathered:{g.name}"
            return f"{name}:?"
        if code == Fault.F_VSRC:
            for k in range(1, CHAIN_DEPTH[mode]):
                g = Word(self.imem[(pc + k) % IMEM_WORDS])
                if SRC_V in g.selectors:
                    return f"{name}:stage{k}" + _unread(g, SRC_V)
        return name


def new_model(unit: Coord = (1, 1), mag: Coord = MAG_DEFAULT) -> CoreWithMemory:
    """A fresh reference: a TracingCore with its memory agent."""
    return CoreWithMemory(TracingCore(unit, mag))
