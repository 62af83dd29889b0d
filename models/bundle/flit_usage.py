"""What a bundle's vector programs read of the state their flits write: the rule that proves a flip harmless.

Why: a DESC or IMEM flit writes state (a descriptor field, a program word)
that persists across RUNs; the hardware reads every bit of such a flit, yet a
change to it cannot matter when the program never reads what it wrote: a
descriptor no walk names, a word past the VHALT, a value the slot already
held. The damage classifier (tb/fuzz/flit_damage.py) must know such a flip by
a stated, checkable rule, not by a list of bit positions. The rule:

    **a flipped vector-core payload bit is unused when, with the flip, every RUN
    of every vector core of the plan fetches the same words (compared on the
    bits each word's opcode reads, models/bundle/flit_bits.py) from the same
    start pc and every walk reads the same descriptor view, as without it.**

The view of a descriptor is what the walk that names it reads (units.md V.3,
V.11): an L1 walk (VLD, VST) the addresses of the elements it takes (one per
chunk below VL, two for FP32; VL as the trace's VSETI and VSETVL words set
it, or all 16 when it comes from data) modulo 512; a memory walk (VFILL, VDRAIN to
memory) its DRAM word addresses (byte address >> 5, protocol.md §5), or
F_LEN past 256 elements; a VDRAIN to a node the record's granule offset and
ack (base [23:0]; its fin and mesh ride in the CU_DATA header's txn and rsvd,
which no receiver reads, V.12) and the walk's total (strides ignored).

Everything else the program computes follows from these (the same words on
the same descriptors, from the same state, in the same order), so equal
traces mean an equal run. The trace is static: from each RUN's pc, word after
word to the first VHALT (a VSETI skips its immediate; a D2/D4 chain gathers
its stages), at most 512 fetches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from models.bundle.flit_bits import Use, mg_fields, word_fields
from models.cluster.isa import Op as MgOp, decode_inst, emits, fault_of, one
from models.vector import isa
from models.vector.walk import walk_addresses, walk_total

MAX_WALK = isa.MAX_WALK
ALL_REGS: frozenset[int] = frozenset(range(isa.N_VREGS))
NO_EFFECT = (frozenset(), None, False)
OPAQUE = (ALL_REGS, None, False)  # a word the dataflow does not follow: it may read anything

Coord = tuple[int, int]
ADDR40 = (1 << 40) - 1
NODE_RECORD = (1 << 24) - 1
L1_STEPS = 16


@dataclass(frozen=True)
class StagedFlit:
    """One flit of a kick as the plan dispatches it: where it is in bundle.json and what the unit gets."""

    plan: int  # index into bundle.json "plan"
    step: int  # index into that round's "steps"
    index: int  # flit index within the kick
    round: int
    node: Coord
    unit: str  # "MG" or "VC"
    value: int  # the 288-bit flit as bundle.json holds it
    final: bool  # the kick's last flit (the loader sets `last`)
    slot: int
    restaged: bool  # an earlier kick of the round staged this slot already: the loader keeps that one (§H.2)


def staged_flits(meta: dict) -> list[StagedFlit]:
    """Every flit of every kick of a bundle.json plan, in dispatch order."""
    units = {tuple(c): kind for kind, coords in meta["machine"]["units"].items() for c in coords}
    out: list[StagedFlit] = []
    for pi, entry in enumerate(meta["plan"]):
        if entry.get("kind") != "round":
            continue
        staged: set[int] = set()
        for si, step in enumerate(entry["steps"]):
            if step["op"] != "kick":
                continue
            node = (int(step["node"][0]), int(step["node"][1]))
            n = len(step["flits"])
            for k, hexval in enumerate(step["flits"]):
                slot = int(step["base"]) + k
                out.append(StagedFlit(pi, si, k, int(entry["round"]), node, units.get(node, "?"), int(hexval, 16),
                                      k == n - 1, slot, slot in staged))
                staged.add(slot)
    return out


def effective(flits: Sequence[StagedFlit]) -> list[StagedFlit]:
    """The flits the units receive: a re-staged slot carries the value staged first in its round."""
    first: dict[tuple[int, int], StagedFlit] = {}
    out = []
    for f in flits:
        first.setdefault((f.plan, f.slot), f)
        out.append(f if not f.restaged else StagedFlit(f.plan, f.step, f.index, f.round, f.node, f.unit,
                                                       first[(f.plan, f.slot)].value, f.final, f.slot, True))
    return out


def read_mask(word: int, immediate: bool) -> int:
    """The bits of an IMEM word its role reads (flit_bits.word_fields)."""
    m = 0
    for f in word_fields(word, immediate):
        if f.use is Use.READ:
            m |= ((1 << (f.msb - f.lsb + 1)) - 1) << f.lsb
    return m


def _view(kind: str, base: int, dims: Sequence[tuple[int, int]], off: int = 0, steps: int = L1_STEPS) -> tuple:
    """What a walk reads of a descriptor (the module doc): the addresses it produces, as the unit uses them."""
    total = walk_total(tuple(b for _, b in dims))
    if kind == "l1":  # the elements a VLD / VST takes, addr[8:0] of each
        return (kind, tuple(a & 0x1FF for a in walk_addresses(base, tuple(dims), steps, off)))
    if total > MAX_WALK:
        return (kind, "F_LEN")
    if kind == "node":  # record [23:0]: granule offset and ack; fin and mesh ride in txn / rsvd (V.11, V.12)
        return (kind, base & NODE_RECORD, total)
    return (kind, tuple((a & ADDR40) >> 5 for a in walk_addresses(base, tuple(dims), total)))


class _Core:
    """One vector core's persistent state as the flits leave it (units.md V.1): IMEM, descriptors, mode."""

    def __init__(self) -> None:
        self.imem = [0] * isa.IMEM_WORDS
        self.base = [0] * isa.N_DESC
        self.dims = [[(0, 1)] * 4 for _ in range(isa.N_DESC)]
        self.mode = int(isa.Mode.FLAT)
        self.vl: int | None = isa.VL_MAX  # None: set from a scalar this trace does not know
        self.s: list[int | None] = [0] * isa.N_SREGS  # known only as VSETI leaves them
        self.k3 = 0
        self.written: set[int] = set()  # IMEM addresses an IMEM flit wrote
        self.fetched: list[tuple[int, bool]] = []
        self.filling = False  # a VFILL may have responses outstanding (until a VBAR or VHALT)

    def _l1_steps(self, w: isa.Word) -> int:
        """Walk elements a VLD / VST takes: one per chunk below VL (two for FP32), 16 when VL is unknown."""
        return L1_STEPS if self.vl is None else -(-self.vl // isa.LANES) * (2 if w.dt == isa.DT_FP32 else 1)

    def _effect(self, w: isa.Word) -> tuple:
        """(vector registers the word reads, (register, elements it overwrites whole) or None, whether it may be
        left out when that write is dead): the dataflow the dead-write rule follows. Anything it does not
        follow precisely reads every register (so no earlier write is dead past it)."""
        if w.op <= isa.ALU_LAST:
            if self.mode != isa.Mode.FLAT:
                return ALL_REGS, None, False
            reads = {w.va} if w.sa == isa.SRC_V else set()
            if w.op in isa.A_B_OPS | isa.A_B_C_OPS and w.sb == isa.SRC_V:
                reads.add(w.vb)
            if w.op in isa.A_C_OPS | isa.A_B_C_OPS and w.sc == isa.SRC_V:
                reads.add(w.vc)
            if w.op in isa.CMP_OPS:
                return frozenset(reads), None, False
            if w.pm or self.vl is None or isa.SRC_C in w.selectors:  # a merge, an unknown VL, or an F_CHAIN fault
                return frozenset(reads | {w.vd}), None, False
            return frozenset(reads), (w.vd, self.vl), True
        if w.op == isa.OP_VLD:
            cover = None if self.vl is None else -(-self.vl // isa.LANES) * isa.LANES
            return frozenset(), (None if cover is None else (w.vd, cover)), False
        if w.op == isa.OP_VST:
            return frozenset({w.vd}), None, False
        if w.op in (isa.OP_VSETI, isa.OP_VSETVL, isa.OP_VSETMODE, isa.OP_VBAR, isa.OP_VHALT, isa.OP_VFILL,
                    isa.OP_VDRAIN, isa.OP_VLOOP):
            return frozenset(), None, False
        return ALL_REGS, None, False  # VCVT, VRED, VBCAST, VSHUF: not followed

    def run(self, pc: int) -> tuple:
        """The static trace of a RUN from `pc`: (end pc, ((addr, read bits of the word, immediate?), ...),
        ((pc, walk view), ...)). A word whose only effect is to set what already holds that value (a VSETI of
        a known equal scalar or K3, a VSETVL to the VL in force, a VSETMODE to the mode in force), and a VBAR
        with no VFILL outstanding, and a RUN's only VLOOP when its body is empty, are left out; a word no IMEM flit wrote is marked (the model reports fetching it). ``fetched`` keeps every
        (addr, immediate?) fetched."""
        words: list[tuple] = []
        walks = []
        self.fetched: list[tuple[int, bool]] = []
        for _ in range(isa.IMEM_WORDS):
            raw = self.imem[pc]
            w = isa.word_of(raw)
            self.fetched.append((pc, False))
            here = [((pc, raw & read_mask(raw, False), False), self._effect(w)) if pc in self.written
                    else (("unwritten", pc), OPAQUE)]
            if w.op == isa.OP_VHALT:
                words += here
                self.filling = False
                break
            if w.op == isa.OP_VSETI:
                nxt = (pc + 1) % isa.IMEM_WORDS
                imm = self.imem[nxt] & isa.E8_MASK
                self.fetched.append((nxt, True))
                same = (self.k3 == imm) if w.sa == isa.SRC_K else (self.s[w.vd] == imm)
                if not same or pc not in self.written or nxt not in self.written:
                    words += here + [((nxt, self.imem[nxt] & read_mask(self.imem[nxt], True), True), NO_EFFECT)
                                     if nxt in self.written else (("unwritten", nxt), OPAQUE)]
                if w.sa == isa.SRC_K:
                    self.k3 = imm
                else:
                    self.s[w.vd] = imm
                pc = (pc + 2) % isa.IMEM_WORDS
                continue
            step, noop = 1, False
            if w.op <= isa.ALU_LAST and self.mode in (isa.Mode.D2, isa.Mode.D4):
                step = isa.CHAIN_DEPTH[isa.Mode(self.mode)]
                here += [(((pc + k) % isa.IMEM_WORDS, self.imem[(pc + k) % isa.IMEM_WORDS], False), OPAQUE)
                         for k in range(1, step)]
            elif w.op == isa.OP_VSETMODE:
                noop = self.mode == w.mode
                self.mode = w.mode
            elif w.op == isa.OP_VBAR:  # it only waits for fills: with none outstanding it does nothing
                noop, self.filling = not self.filling, False
            elif w.op == isa.OP_VSETVL:
                v = self.s[w.va]
                vl = v if v is not None and 1 <= v <= isa.VL_MAX else None
                noop = vl is not None and vl == self.vl
                self.vl = vl
            elif w.op == isa.OP_VRED or (w.op == isa.OP_VBCAST and w.sa != isa.SRC_S):
                self.s[w.vd] = None  # a scalar from the data
            elif w.op in isa.MEMORY_OPS:
                self.filling |= w.op == isa.OP_VFILL
                kind = ("l1" if w.op in (isa.OP_VLD, isa.OP_VST) else
                        "node" if w.op == isa.OP_VDRAIN and w.node else "mem")
                walks.append((pc, _view(kind, self.base[w.ad], self.dims[w.ad], w.off, self._l1_steps(w))))
            if not (noop and pc in self.written):
                words += here
            pc = (pc + step) % isa.IMEM_WORDS
        return (pc, _drop_empty_loops(words), tuple(walks))

    def take(self, payload: int) -> tuple | None:
        """Apply one CU_INST payload (units.md V.2); a RUN returns its trace."""
        op = payload >> 252 & 0xF
        if op == isa.INST_IMEM:
            self.imem[(payload >> 243) & 0x1FF] = payload & 0xFFFF_FFFF
            self.written.add((payload >> 243) & 0x1FF)
        elif op == isa.INST_DESC:
            ad, fld, value = (payload >> 249) & 7, (payload >> 246) & 7, isa.desc_value(payload)
            if fld == isa.FLD_BASE:
                self.base[ad] = value
            elif fld <= 4:
                self.dims[ad][fld - 1] = isa.unpack_dim(value)
        elif op == isa.INST_RUN:
            return self.run((payload >> 243) & 0x1FF)
        return None


def _is_op(key: tuple, op: int) -> bool:
    return isinstance(key[0], int) and not key[2] and isa.word_of(key[1]).op == op


def _drop_empty_loops(words: list[tuple]) -> list[tuple]:
    """A RUN's words without a VLOOP of body 0 that is the RUN's only VLOOP: it runs nothing (V.8), and the
    loop it may leave open matters only to a later VLOOP (F_LOOP), and every RUN closes it."""
    loops = [i for i, (key, _) in enumerate(words) if _is_op(key, isa.OP_VLOOP)]
    if len(loops) == 1 and isa.word_of(words[loops[0]][0][1]).vb == 0:
        return words[:loops[0]] + words[loops[0] + 1:]
    return words


def _reads_last_alu(key: tuple) -> bool:
    """A VRED EXPSUM, ANY or ALL word: it reads the pr / pm of the last ALU word (D4, D5), so no ALU word
    before it may be left out."""
    if not isinstance(key[0], int) or key[2]:
        return False
    w = isa.word_of(key[1])
    return w.op == isa.OP_VRED and w.kind >= isa.RedKind.EXPSUM


def _drop_dead(runs: list[tuple]) -> list[tuple]:
    """The RUN traces of one core without the words whose only effect is a dead write: a FLAT, unpredicated
    ALU word whose destination register is overwritten whole (for at least its VL) by a later word, in this
    RUN or a later one, before anything reads it, or never read again (then only the core's end state
    differs). Words are compared on their read bits otherwise."""
    entries = [(i, k, e) for i, run in enumerate(runs) for k, e in enumerate(run[1])]
    dead: set[tuple[int, int]] = set()
    if any(_reads_last_alu(key) for _, _, (key, _) in entries):
        return [(run[0], tuple(e[0] for e in run[1]), run[2]) for run in runs]  # D4 / D5: no word is dead
    state: dict[int, int | None] = {}  # register -> elements its next access overwrites whole (None: a read)
    for i, k, (key, (reads, write, droppable)) in reversed(entries):
        if write is not None:
            reg, cover = write
            nxt = state.get(reg, isa.VL_MAX)  # never accessed again: dead
            if droppable and nxt is not None and nxt >= cover:
                dead.add((i, k))
            state[reg] = cover
        for reg in (range(isa.N_VREGS) if reads is ALL_REGS else reads):
            state[reg] = None
    return [(run[0], tuple(e[0] for k, e in enumerate(run[1]) if (i, k) not in dead), run[2])
            for i, run in enumerate(runs)]


def vector_trace(flits: Iterable[StagedFlit]) -> dict[Coord, list[tuple]]:
    """Per vector core, the static trace of every RUN, in dispatch order, dead writes left out (only flits of
    CU_INST type reach a core: the caller decides that from the header, flit_bits)."""
    cores: dict[Coord, _Core] = {}
    out: dict[Coord, list[tuple]] = {}
    for f in effective(list(flits)):
        if f.unit != "VC":
            continue
        core = cores.setdefault(f.node, _Core())
        t = core.take(f.value & ((1 << 256) - 1))
        if t is not None:
            out.setdefault(f.node, []).append(t)
    return {node: _drop_dead(runs) for node, runs in out.items()}


def immediates(flits: Sequence[StagedFlit]) -> set[int]:
    """Positions (in `flits`) of the IMEM flits whose word the first RUN that fetches it fetches as a VSETI's
    immediate (its fields are then the immediate's, flit_bits.word_fields)."""
    cores: dict[Coord, _Core] = {}
    pending: dict[tuple[Coord, int], int] = {}  # (core, IMEM addr) -> position of the flit that wrote it, unfetched
    out: set[int] = set()
    for pos, f in enumerate(effective(flits)):
        if f.unit != "VC":
            continue
        core = cores.setdefault(f.node, _Core())
        p = f.value & ((1 << 256) - 1)
        if p >> 252 == isa.INST_IMEM:
            pending[(f.node, (p >> 243) & 0x1FF)] = pos
        t = core.take(p)
        if t is None:
            continue
        for addr, imm in core.fetched:
            at = pending.pop((f.node, addr), None)
            if at is not None and imm:
                out.add(at)
    return out


def _mask(fields: Iterable) -> int:
    m = 0
    for f in fields:
        if f.use is Use.READ:
            m |= ((1 << (f.msb - f.lsb + 1)) - 1) << f.lsb
    return m


class _Cluster:
    """One cluster's L1 entries and accumulator tiles as tags of where their values came from (units.md C)."""

    def __init__(self, coord: Coord, exact: bool) -> None:
        self.own = coord[1] << 4 | coord[0]
        self.exact = exact  # something drains into this cluster: no reasoning about dead entries or zero tiles
        self.l1: dict[tuple[int, int], tuple] = {}
        self.acc: dict[int, tuple] = {}
        self.fills = 0

    def take(self, payload: int) -> tuple | None:
        """Apply one CU_INST payload; return what it makes observable (None: nothing by itself)."""
        f = decode_inst(payload)
        read = payload & _mask(mg_fields(payload))
        fault = fault_of(payload)
        if fault is not None or self.exact:
            return ("inst", read, fault)
        if f["op"] == MgOp.FILL:
            self.fills += 1
            quant = not f["preq"]
            peers = [(f["peers"] >> (8 * k)) & 0xFF for k in range(f["npeer"])]
            for e in range(one(f["n"])):
                tag = (((f["addr"] >> 5) + e * (8 if quant else 4), quant, f["sel"] if quant else 0) if not peers
                       else ("multicast", self.fills, e))
                self.l1[(f["sel"], (f["fbank"] & 1) << 8 | (f["eoff"] + e) % 256)] = tag
            return ("fill", read) if peers else None
        if f["op"] == MgOp.GEMM:
            gm, gn, nk = one(f["gm"]), one(f["gn"]), one(f["nk"])
            for kb in range(nk):
                for g in range(gm):
                    for h in range(gn):
                        t = g * gn + h
                        term = (f["anchor"], self.l1.get((0, (f["abank"] & 1) << 8 | (f["aoff"] + g * nk + kb) % 256)),
                                self.l1.get((1, (f["bbank"] & 1) << 8 | (f["boff"] + h * nk + kb) % 256)))
                        add = kb > 0 or f["acc"]  # an ADD into a tile nothing wrote yet adds to +0: a LOAD (C.7)
                        self.acc[t] = (self.acc[t] + (term,)) if add and t in self.acc else (term,)
            if emits(f):
                return ("emit", read, tuple(self.acc.get(t) for t in range(gm * gn)))
            return None
        n = one(f["n"])  # DRAIN
        return ("drain", read, None if f["fuse"] else tuple(self.acc.get(t) for t in range(n)))


def node_targets(flits: Iterable[StagedFlit]) -> set[Coord]:
    """Units some flit of the plan drains into (a cluster DRAIN or emit to a node, a node-form VDRAIN)."""
    out: set[Coord] = set()
    for f in flits:
        p = f.value & ((1 << 256) - 1)
        if f.unit == "MG":
            d = decode_inst(p)
            if d["dnode"] and d["op"] in (MgOp.GEMM, MgOp.DRAIN):
                out.add((d["dst_x"], d["dst_y"]))
        elif p >> 252 == isa.INST_IMEM:
            w = isa.word_of(p & 0xFFFF_FFFF)
            if w.op == isa.OP_VDRAIN and w.node:
                out.add((w.dst_x, w.dst_y))
    return out


def cluster_trace(flits: Iterable[StagedFlit], exact: set[Coord] | None = None) -> dict[Coord, list[tuple]]:
    """Per cluster, what each instruction makes observable, in dispatch order: a drain's or an emit's read
    fields with the history of every tile it sends, a FILL's fields when it multicasts, any instruction of a
    cluster something drains into (`exact`, by default :func:`node_targets` of the flits), and every fault."""
    eff = effective(list(flits))
    exact = node_targets(eff) if exact is None else exact
    cl: dict[Coord, _Cluster] = {}
    out: dict[Coord, list[tuple]] = {}
    for f in eff:
        if f.unit != "MG":
            continue
        c = cl.setdefault(f.node, _Cluster(f.node, f.node in exact))
        t = c.take(f.value & ((1 << 256) - 1))
        if t is not None:
            out.setdefault(f.node, []).append(t)
    return out


@dataclass(frozen=True)
class Clean:
    """The undamaged plan's trace per unit, and the units something drains into."""

    traces: dict[Coord, list[tuple]]
    exact: set[Coord]


def plan_trace(flits: Sequence[StagedFlit]) -> Clean:
    """The vector and cluster traces of a plan (what the module's rule compares)."""
    exact = node_targets(effective(flits))
    return Clean({**vector_trace(flits), **cluster_trace(flits, exact)}, exact)


def unused_flip(flits: Sequence[StagedFlit], pos: int, bit: int, clean: Clean) -> bool:
    """Whether flipping `bit` (a payload bit) of flit `pos` leaves the plan's trace as `clean`
    (:func:`plan_trace` of the undamaged flits): the module's rule. Only the units that receive the flit
    (its slot may be kicked to several in its round) are traced again."""
    f = flits[pos]
    if bit >= 256:
        return False
    hit = StagedFlit(f.plan, f.step, f.index, f.round, f.node, f.unit, f.value ^ (1 << bit), f.final, f.slot,
                     f.restaged)
    nodes = {g.node for g in flits if g.plan == f.plan and g.slot == f.slot}
    mine = [g for g in effective([hit if i == pos else g for i, g in enumerate(flits)]) if g.node in nodes]
    exact = clean.exact | node_targets([hit])
    traces = {**vector_trace(mine), **cluster_trace(mine, exact)}
    return all(traces.get(n) == clean.traces.get(n) for n in nodes)


__all__ = ["Clean", "StagedFlit", "cluster_trace", "effective", "immediates", "node_targets", "plan_trace", "read_mask",
           "staged_flits", "unused_flip", "vector_trace"]
