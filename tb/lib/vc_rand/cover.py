"""Measured coverage of the random programs and the goals a healthy generator reaches.

``coverage(model)`` counts what a run of cases exercised (the opcode and fault
tables come from the model's own ``Stats``; the finer points from the
``TracingCore`` log); ``GOALS`` / ``missing(cov)`` name what a regression of
the generator would silently lose.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from models.vc import isa
from models.vc.core import VectorCore
from models.vc.isa import ALU_LAST, CMP_OPS, LANES, SRC_C, SRC_K, SRC_S, SRC_V, Fault, Mode, RedKind, Word
from models.vc.memory import CoreWithMemory

from .spec import ADDR_MOD
from .tracing import Executed, FaultRecord, TracingCore

SEL_NAME = {SRC_V: "V", SRC_S: "S", SRC_C: "C", SRC_K: "K"}


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

    def counts(self) -> dict:
        """Every count, keyed so that two runs' counts add up key by key (tb.farm merges shards with it)."""
        return {"opcodes": {str(k): n for k, n in self.opcodes.items()},
                "faults": {str(k): n for k, n in self.faults.items()},
                "points": dict(self.points), "chains": {str(k): n for k, n in self.chains.items()},
                "instructions": self.instructions, "programs": self.programs}

    @classmethod
    def merged(cls, counts: list[dict]) -> "Coverage":
        """The coverage of several runs (shards of one differential) from their `counts()`."""
        cov = cls()
        for c in counts:
            cov.opcodes.update({int(k): n for k, n in c["opcodes"].items()})
            cov.faults.update({int(k): n for k, n in c["faults"].items()})
            cov.points.update(c["points"])
            cov.chains.update({int(k): n for k, n in c["chains"].items()})
            cov.instructions += c["instructions"]
            cov.programs += c["programs"]
        return cov

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
        for hz in core.hazards:  # upstream hazard reports (units.md V.8), by id
            cov.points[f"hazard:{hz.hid}"] += 1
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
    + ["hazard:H2", "hazard:H3", "hazard:H4"]
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
