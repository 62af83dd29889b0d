"""Measured coverage and timing-independence checks for the vector core's random programs.

``TracingCore`` is the golden ``VectorCore`` with a recorder around its
instruction step: every instruction it executes is logged with the state it
issued in (VL, mode, the chain words it gathered, the L1 words and memory bytes
it touches), and every fault with its context. Nothing about the behaviour
changes, so a bench may use it as its reference model. From that log:

* ``coverage(model)`` counts what a run of cases exercised (the opcode and fault
  tables come from the model's own ``Stats``; the finer points from the log);
* ``GOALS`` / ``missing(cov)`` name what a regression of the generator would
  silently lose;
* ``timing_violations(model)`` re-checks, from what actually executed, the rules
  that make a program's result independent of the RTL's timing (a VFILL's L1
  words untouched until VBAR/VHALT, no fault with fills in flight, fill sources
  never drained to, no node drain to the core or the memory agent).

The checks re-derive walks from units.md V.3 (``raw_walk``), not from the
model's walk code, so a walk bug there cannot hide a violation here.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

import numpy as np

from models.flit import FIELDS
from models.vc import isa
from models.vc.core import MAG_DEFAULT, Coord, VectorCore, _Fault
from models.vc.isa import (
    A_B_C_OPS, A_B_OPS, A_C_OPS, ALU_LAST, CHAIN_DEPTH, CMP_OPS, IMEM_WORDS, L1_WORDS, LANES, MAX_WALK,
    SRC_C, SRC_K, SRC_S, SRC_V, UNARY_OPS, Fault, Mode, RedKind, Word,
)
from models.vc.memory import CoreWithMemory

ADDR_MOD = 1 << 40
STEP_LIMIT = 200_000  # instructions per RUN before the tracer calls the program a runaway
TRANSC = {0x0E: "exp2", 0x0F: "log2", 0x10: "inv", 0x11: "rsqrt"}
SEL_NAME = {SRC_V: "V", SRC_S: "S", SRC_C: "C", SRC_K: "K"}


class RunawayProgram(RuntimeError):
    """A RUN executed more than STEP_LIMIT instructions: the generator built a program that does not halt."""


# ---------------------------------------------------------------- walks, re-derived from V.3
def walk_product(bounds: Iterable[int]) -> int:
    """The uncapped product of the bounds (0 read as 1): F_LEN's 65535 cap is visible against it."""
    total = 1
    for b in bounds:
        total *= b or 1
    return total


def raw_walk(base: int, dims, steps: int, off: int = 0) -> list[int]:
    """The first `steps` addresses of a walk as unreduced integers (no mod 2^40, no mod 512).

    units.md V.3: dimension 0 fastest, bound 0 reads as 1, steps past the last
    element repeat it. Callers reduce mod 2^40 (memory) or mod 512 (L1).
    """
    bounds = [b or 1 for _, b in dims]
    total = min(walk_product(bounds), 0xFFFF)
    out: list[int] = []
    for n in range(min(steps, total)):
        rest, addr = n, base + off
        for (stride, _), b in zip(dims, bounds):
            addr += (rest % b) * stride
            rest //= b
        out.append(addr)
    return out + out[-1:] * (steps - len(out))


def reads(op: int) -> tuple[bool, bool, bool]:
    """Which of the operands a, b, c an ALU opcode reads (V.6.2), so 'unread' selectors can be told apart."""
    if op in UNARY_OPS:
        return True, False, False
    if op in A_C_OPS:
        return True, False, True
    if op in A_B_OPS:
        return True, True, False
    assert op in A_B_C_OPS
    return True, True, True


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
        except _Fault as f:
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


# ---------------------------------------------------------------- coverage
@dataclass
class Coverage:
    """Measured counts of one model's history (the bench prints ``report()``)."""

    opcodes: Counter = field(default_factory=Counter)  # opcode 0x00..0x1F -> executions (from Stats)
    faults: Counter = field(default_factory=Counter)  # fault code 1..9 -> RUNs that faulted (from Stats)
    points: Counter = field(default_factory=Counter)  # finer cover points (from the TracingCore log)
    instructions: int = 0
    programs: int = 0
    chains: Counter = field(default_factory=Counter)

    def as_dict(self) -> dict:
        return {"opcodes": {f"{op:02X} {isa.OPNAMES[op]}": n for op, n in sorted(self.opcodes.items())},
                "faults": {f"{c} {isa.FAULT_NAMES[c]}": n for c, n in sorted(self.faults.items())},
                "instructions": self.instructions, "programs": self.programs,
                "chains": dict(self.chains), "points": dict(sorted(self.points.items()))}

    def report(self, width: int = 100) -> str:
        """A few lines a bench can print: totals, opcodes, faults, then every cover point with its count."""
        lines = [f"programs {self.programs}  instructions {self.instructions}  chains "
                 + " ".join(f"D{d}={n}" for d, n in sorted(self.chains.items())),
                 "opcodes  " + " ".join(f"{op:02X}:{self.opcodes.get(op, 0)}" for op in range(32)),
                 "faults   " + " ".join(f"{isa.FAULT_NAMES[c]}:{self.faults.get(c, 0)}" for c in range(1, 10))]
        line = "points  "
        for k, n in sorted(self.points.items()):
            item = f" {k}={n}"
            if len(line) + len(item) > width:
                lines.append(line)
                line = "        "
            line += item
        lines.append(line)
        gaps = missing(self)
        lines.append("missing  " + (", ".join(gaps) if gaps else "none"))
        return "\n".join(lines)


def _opcode_of(name: str) -> int | None:
    """Stats keys -> opcode: 'VRED.SUM', 'VSETMODE.D2', 'VSETI.K3', 'VDRAIN.node', 'VADD@stage'; CHAINn is not one."""
    base = name.split("@")[0].split(".")[0]
    return isa.OPCODES.get(base)


def _points(trace: Iterable[Executed], faults: Iterable[FaultRecord]) -> Counter:
    pts: Counter = Counter()
    for x in trace:
        w = Word(x.word)
        op = w.op
        for t in x.tags:
            pts[t] += 1
        if op <= ALU_LAST:
            _alu_points(pts, x, w)
        elif op == isa.OP_VRED:
            kind = RedKind(w.kind)
            pts[f"vred:{kind.name}" + (f"@{x.vl}" if kind <= RedKind.EXPSUM else "")] += 1
            if w.vc & 8:
                pts["vred:kind-bit3"] += 1
        elif op in (isa.OP_VLD, isa.OP_VST):
            _l1_walk_points(pts, x, w)
        elif op in (isa.OP_VFILL, isa.OP_VDRAIN):
            _transfer_points(pts, x, w)
        elif op == isa.OP_VCVT:
            pts[f"vcvt:dt{w.dt}"] += 1
        elif op == isa.OP_VBCAST:
            pts["bcast:S->V" if w.sa == SRC_S else "bcast:V->S"] += 1
        elif op == isa.OP_VSHUF:
            pts[f"shuf:shift{x.value}"] += 1
        elif op == isa.OP_VSETVL:
            v = x.value or 0
            pts["setvl:" + ("edge" if v in (1, 127, 128) else "mult16" if v % 16 == 0 else "ragged")] += 1
        elif op == isa.OP_VSETMODE:
            pts[f"mode:{Mode(w.mode).name}"] += 1
        elif op == isa.OP_VSETI:
            pts["seti:K3" if w.sa == SRC_K else "seti:S"] += 1
            if _special_e8(x.value or 0):
                pts["seti:special"] += 1
        elif op == isa.OP_VLOOP:
            pts[f"loop:count{min(x.value or 0, 6)}"] += 1
            pts[f"loop:body{w.vb}"] += 1
    for f in faults:  # every prefix of the variant: 'fault:F_LEN', 'fault:F_LEN:node', 'fault:F_LEN:node:cap'
        parts = f.variant.split(":")
        for n in range(1, len(parts) + 1):
            pts["fault:" + ":".join(parts[:n])] += 1
    return pts


def _special_e8(v: int) -> bool:
    e = v >> 15 & 0xFF
    return e in (0, 255) or (v & 0x7FFFFF) in (0x7F7FFF, 0x008000)


def _alu_points(pts: Counter, x: Executed, w: Word) -> None:
    """Chains: selectors per stage position, compares in the middle and last, the write mask of the last stage."""
    words = [Word(s) for s in x.stages] or [w]
    last = words[-1]
    if len(words) > 1:
        pts[f"chain:D{len(words)}"] += 1
        for k, g in enumerate(words):
            for sel in g.selectors:
                pts[f"chain:{'head' if k == 0 else 'stage'}-{SEL_NAME[sel]}"] += 1
            if g.op in CMP_OPS:
                pts["chain:cmp-last" if k == len(words) - 1 else "chain:cmp-mid"] += 1
            if g.op == 0x0A and k and g.sc == SRC_C:
                pts["chain:vsel-on-C"] += 1
    elif w.op in CMP_OPS:
        pts["flat:cmp"] += 1
    if last.op not in CMP_OPS:
        pts[f"pm:{last.pm}"] += 1
    if x.vl % LANES:
        pts["alu:ragged-vl"] += 1


def _l1_walk_points(pts: Counter, x: Executed, w: Word) -> None:
    kind = "ld" if w.op == isa.OP_VLD else "st"
    pts[f"{kind}:{isa.DT_NAMES[w.dt]}"] += 1
    if x.wrap:
        pts[f"{kind}:l1-wrap"] += 1
    if w.off < 0:
        pts[f"{kind}:neg-off"] += 1
    if x.vl % LANES:
        pts[f"{kind}:ragged-vl"] += 1


def _transfer_points(pts: Counter, x: Executed, w: Word) -> None:
    total = len(x.l1)
    if w.op == isa.OP_VFILL:
        kind = "fill"
    else:
        kind = "node" if w.node else "drain"
    pts[f"{kind}:n{'256' if total == 256 else '>64' if total > 64 else '<=64'}"] += 1
    if x.wrap:
        pts[f"{kind}:l1-wrap"] += 1
    if kind == "node":
        pts["node:signal" if w.signal else "node:nosignal"] += 1
    if x.mem:
        steps = {(b - a) % ADDR_MOD for a, b in zip(x.mem, x.mem[1:])}
        if any(s > ADDR_MOD // 2 for s in steps):
            pts[f"{kind}:neg-step"] += 1
        if 0 in steps:
            pts[f"{kind}:zero-step"] += 1
        if max(x.mem) - min(x.mem) > ADDR_MOD // 2:
            pts[f"{kind}:addr-wrap"] += 1


def coverage(model: CoreWithMemory | VectorCore) -> Coverage:
    """Measured coverage of everything `model` ran (opcodes and faults from its Stats, the rest from its log)."""
    core = model.core if isinstance(model, CoreWithMemory) else model
    st = core.stats
    cov = Coverage(instructions=st.instructions, programs=st.runs, chains=Counter(st.chains))
    for name, n in st.executed.items():
        op = _opcode_of(name)
        if op is not None:
            cov.opcodes[op] += n
    for name, n in st.faults.items():
        cov.faults[int(Fault[name])] += n
    if isinstance(core, TracingCore):
        cov.points = _points(core.trace, core.fault_log)
    return cov


# What a healthy generator reaches in a few hundred cases; each name is a key of Coverage.points
# (opcodes 00..1F and fault codes 1..9 are checked from the Stats tables as well).
_REDUCED = [f"vred:{k.name}@{16 * n}" for k in list(RedKind)[:6] for n in range(1, 9)]
GOALS: tuple[str, ...] = tuple(
    [f"mode:{m.name}" for m in Mode] + ["chain:D2", "chain:D4"]
    + [f"chain:stage-{s}" for s in "CSK"] + [f"chain:head-{s}" for s in "VSK"]
    + ["chain:cmp-mid", "chain:cmp-last", "chain:vsel-on-C", "flat:cmp", "alu:ragged-vl"]
    + [f"pm:{p}" for p in range(4)]
    + ["exp2:d1+", "exp2:d1-", "exp2:big+", "exp2:big-", "exp2:mid+", "exp2:mid-", "exp2:small+",
       "exp2:small-", "exp2:nan", "exp2:inf", "log2:neg", "log2:zero", "log2:pos",
       "inv:zero", "inv:normal", "inv:pow2", "rsqrt:even", "rsqrt:odd", "rsqrt:neg", "load:special"]
    + ["vcvt:dt1", "vcvt:dt2"] + _REDUCED + ["vred:ANY", "vred:ALL", "vred:kind-bit3"]
    + [f"loop:count{c}" for c in range(6)] + [f"loop:body{b}" for b in range(7)]
    + [f"{k}:{d}" for k in ("ld", "st") for d in ("FP16", "FP32")]
    + ["ld:l1-wrap", "st:l1-wrap", "ld:neg-off", "st:neg-off", "ld:ragged-vl", "st:ragged-vl"]
    + [f"{k}:{p}" for k in ("ld", "st", "fill") for p in ("dims2", "dims3", "dims4", "neg-stride", "zero-stride")]
    + ["bcast:S->V", "bcast:V->S", "shuf:shift0", "shuf:shift5", "shuf:shift15"]
    + ["setvl:edge", "setvl:mult16", "setvl:ragged", "seti:S", "seti:K3", "seti:special"]
    + ["fill:n256", "fill:n>64", "fill:l1-wrap", "fill:neg-step", "fill:zero-step",
       "drain:n<=64", "drain:neg-step", "drain:zero-step", "drain:dims2", "node:n<=64", "node:signal",
       "node:nosignal", "node:l1-wrap", "node:remote", "node:local"]
    + ["fault:F_DTYPE:VLD", "fault:F_DTYPE:VST", "fault:F_DTYPE:VCVT", "fault:F_VSRC:stage1",
       "fault:F_VSRC:stage3", "fault:F_VSRC:stage2:unread", "fault:F_CHAIN:flat", "fault:F_CHAIN:head",
       "fault:F_CHAIN:flat:unread", "fault:F_OPCODE:vred@FLAT", "fault:F_OPCODE:vred@D4",
       "fault:F_OPCODE:tree-alu", "fault:F_OPCODE:tree-alu:with-C", "fault:F_OPCODE:gathered:VLD",
       "fault:F_OPCODE:gathered:VHALT", "fault:F_LEN:VFILL", "fault:F_LEN:VFILL:cap", "fault:F_LEN:VDRAIN",
       "fault:F_LEN:node", "fault:F_LOOP:nested", "fault:F_LOOP:fallthrough", "fault:F_VL:0x0", "fault:F_VL:0x81",
       "fault:F_VL:0x800080", "fault:F_REDVL:TREE", "fault:F_REDVL:notTREE", "fault:F_CUDATA:run-start:rejected-buf",
       "fault:F_CUDATA:run-start:rejected-range", "fault:F_CUDATA:run-start:interleaved"]
)


def missing(cov: Coverage) -> list[str]:
    """Goals `cov` did not reach: opcodes (as 'op:XX'), fault codes ('fault:N') and GOALS points."""
    out = [f"op:{op:02X}" for op in range(32) if not cov.opcodes.get(op)]
    out += [f"fault:{c}" for c in range(1, 10) if not cov.faults.get(c)]
    if cov.points:
        out += [g for g in GOALS if not cov.points.get(g)]
    else:
        out.append("points (the model is not a TracingCore)")
    return out


# ---------------------------------------------------------------- timing independence
def timing_violations(model: CoreWithMemory, forbidden_nodes: Iterable[Coord] = ()) -> list[str]:
    """Rules whose breach would let the RTL's timing change a result, checked on what `model` executed.

    * a VFILL's L1 words are not read or written (VLD, VST, VDRAIN, another VFILL) until a VBAR or VHALT;
    * no RUN faults while fill responses are in flight;
    * no DRAM word is both a VFILL source and a VDRAIN destination (over the whole history);
    * no node-form VDRAIN goes to the core itself, the memory agent or `forbidden_nodes`.
    """
    core = model.core
    assert isinstance(core, TracingCore), "timing_violations needs a TracingCore"
    errors: list[str] = []
    pending: set[int] = set()
    run = 0
    fill_src: set[int] = set()
    drain_dst: set[int] = set()
    bad_nodes = {core.coord, core.mag, *forbidden_nodes}
    for x in core.trace:
        if x.run != run:
            run, pending = x.run, set()
        w = Word(x.word)
        op = w.op
        if op in (isa.OP_VBAR, isa.OP_VHALT):
            pending.clear()
            continue
        if op in (isa.OP_VLD, isa.OP_VST, isa.OP_VFILL, isa.OP_VDRAIN) and pending.intersection(x.l1):
            errors.append(f"RUN {x.run} pc {x.pc}: {w.name} touches L1 words {sorted(pending & set(x.l1))[:6]} "
                          "of a VFILL not yet ordered by VBAR/VHALT")
        if op == isa.OP_VFILL:
            pending.update(x.l1)
            fill_src.update(a >> 5 for a in x.mem)
        elif op == isa.OP_VDRAIN:
            drain_dst.update(a >> 5 for a in x.mem)
            if x.node_dst is not None and x.node_dst in bad_nodes:
                errors.append(f"RUN {x.run} pc {x.pc}: VDRAIN to node {x.node_dst}, which is forbidden")
    for f in core.fault_log:
        if f.fills_in_flight:
            errors.append(f"RUN {f.run} pc {f.pc}: {f.variant} raised with VFILL responses in flight")
    both = fill_src & drain_dst
    if both:
        errors.append(f"{len(both)} DRAM words are VFILL sources and VDRAIN destinations, e.g. byte "
                      f"{min(both) << 5:#x}")
    return errors


def new_model(unit: Coord = (1, 1), mag: Coord = MAG_DEFAULT) -> CoreWithMemory:
    """A fresh reference: a TracingCore with its memory agent."""
    return CoreWithMemory(TracingCore(unit, mag))


__all__ = ["Coverage", "Executed", "FaultRecord", "GOALS", "RunawayProgram", "STEP_LIMIT", "TracingCore",
           "coverage", "missing", "new_model", "raw_walk", "reads", "timing_violations", "walk_product"]
