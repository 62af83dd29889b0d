"""One instance's unit programs: the cluster's CU_INST payloads, the vector core's words and descriptors.

Vector core L1 (per the seed): slot r (accumulator r's tile) at word
``r*span_w``, the result at ``plan.result_word``; both forms use the same words.

**Vector program**, shaped like the public compiler's (its listings of the
seed case, ``program.txt`` of the client bundles
``linear_silu_{fused,unfused}_m32k64n32``; for the seed's fused case our IMEM
words are the compiler's, word for word: tests/unit/bundle/test_flit_ledger.py)::

    VSETI s0, 128             # VL, raw integer: VSETVL reads S[va]
    VSETI s4, 0xbfb8aa        # every non-built-in constant, once, from S4 up (E8M15 pattern)
    VSETVL s0                 # VL = 128: one VLD / VST moves 8 L1 words, one ALU word 128 elements
    VSETMODE FLAT             # the mode persists across RUNs: set it, never assume it
    VFILL A{r}, {slot_r}      # unfused: one per accumulator, temp_r -> L1 words slot_r..
    VBAR                      # unfused: wait for the fills
    for each 8-word chunk c < span_w/8:
        VLD v{i}, A{slot}+{8c}        # each accumulator the epilogue reads, into v0, v1, ...
        ... the epilogue, one ALU word per operation (SiLU = 5), results from v7 up ...
        VST v{res}, A{result}+{8c}
    VDRAIN A{drain}, {result_word}    # gm*gn words from L1 word result_word to this instance's y tile
    VHALT

Descriptors, in the compiler's order (:func:`descriptor_roles`): the unfused
form's temp fills first, then one L1 descriptor per accumulator read (base
= its slot word, dim (1, 8)), the result's L1 descriptor (base =
result_word, dim (1, 8)), the y drain (base = the tile's byte address, dim
(32, gm*gn), memory target). The fused seed program thus uses A0 (slot 0),
A1 (result), A2 (drain), as the compiler's. The chunk offset is the VLD / VST
``off`` field. There is no loop in these programs (VLOOP exists, but the
compiler unrolls, and so do we); span_w is a whole number of 8-word chunks
by construction, so the last chunk computes on the padding words and stores
into result padding, which the VDRAIN does not send.

**DESC writes** (``desc_writes``): ``"minimal"`` (default) writes exactly the
fields the instructions using a descriptor read (:class:`DescUse`), so stale
descriptor state left by an earlier program cannot change the result
(fields persist across RUNs, units.md V.1): a VLD / VST moving VL/16 = 8
words through a dim-1 bound of 8 reads base and dim 1 only (the walk never
carries into dims 2..4); a VFILL / VDRAIN to memory reads base and all four
dims (the bounds make the walk total, the strides the addresses).
``"full"`` writes base and dims 1..4 of every descriptor. DESC fields 5..7
have no effect (units.md V.2) and are never written.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping, Optional, Sequence

from models.cluster import ANCHOR_NEUTRAL, FILL_MAX, Op, decode_inst, drain, fill, gemm
from models import vector as vector_core
from models.machine.layouts import Coord, Machine
from models.machine.planner import FIXES, Expr, Plan

from .layout import ENTRY_BYTES, WORD_BYTES, DramLayout, _refuse
from .lowering import Lowered, lower_epilogue

ANCHOR = ANCHOR_NEUTRAL  # 40: with 0xA0 scales the GEMM is the exact integer dot product
VL_CHUNK = vector_core.VL_MAX  # VL = 128: one VLD / VST moves 8 L1 words (FP16), one ALU word covers 128 elements
CHUNK_WORDS = VL_CHUNK // vector_core.LANES  # 8
VL_SREG = 0  # S0 holds VL (VSETI s0, 128; VSETVL s0), as in the compiler's programs
# DESC fields (0 base, 1..4 dims) an instruction reads. A VLD / VST of VL/16 = 8 words through a dim-1
# bound of 8 never leaves dim 1: base and dim 1 only. A VFILL / VDRAIN to memory reads all four bounds
# (the walk total) and all four strides (the addresses) besides the base.
L1_FIELDS = (0, 1)
MEMORY_FIELDS = (0, 1, 2, 3, 4)
DESC_POLICIES = ("minimal", "full")  # every field an instruction reads / every field of every descriptor
FILL_REACH = 256  # our FILLs use bank 0 only: L1 entries 0..255 (the entry is {fbank, txn}, units.md C.4)


@dataclass(frozen=True)
class ClusterProgram:
    cluster: Coord
    payloads: tuple[int, ...]

    def ops(self) -> tuple[str, ...]:
        return tuple(Op(decode_inst(p)["op"]).name for p in self.payloads)

    def fields(self) -> list[dict[str, int]]:
        return [decode_inst(p) for p in self.payloads]


@dataclass(frozen=True)
class DescUse:
    """One descriptor of a vector program: what it walks, and the DESC fields its instructions read."""

    ad: int
    role: str  # "fill r" (temp_r -> L1, unfused), "slot r" (L1 of accumulator r), "result" (L1), "drain" (y)
    descriptor: vector_core.Descriptor
    reads: tuple[int, ...]  # DESC fields (0 = base, 1..4 = dims) the instructions using it read


@dataclass(frozen=True)
class VectorProgram:
    core: Coord
    lines: tuple[str, ...]
    words: tuple[int, ...]
    uses: tuple[DescUse, ...]  # in descriptor order
    desc_writes: tuple[tuple[int, int, int], ...]  # (ad, fld, value), in write order

    @property
    def descriptors(self) -> Mapping[int, vector_core.Descriptor]:
        return MappingProxyType({u.ad: u.descriptor for u in self.uses})

    def use(self, role: str) -> DescUse:
        for u in self.uses:
            if u.role == role:
                return u
        raise KeyError(f"no descriptor with role {role!r}; roles: {', '.join(u.role for u in self.uses)}")

    def payloads(self) -> list[int]:
        """IMEM writes from address 0, then the DESC writes, then RUN pc 0: the host's flits in order."""
        out = [vector_core.imem_payload(i, w) for i, w in enumerate(self.words)]
        out += [vector_core.desc_payload(ad, fld, v) for ad, fld, v in self.desc_writes]
        return out + [vector_core.run_payload(0)]

    @property
    def flits(self) -> dict[str, int]:
        return {"imem": len(self.words), "desc": len(self.desc_writes), "run": 1}

    def mnemonics(self) -> list[str]:
        return [line.split()[0] for line in self.lines]

    def listing(self) -> list[str]:
        """The program's words as ``pc: word  text`` lines."""
        return vector_core.listing(self.words)

    def kick_listing(self) -> list[str]:
        """The host's flits to this core in the public compiler's program.txt form (IMEM, DESC, RUN and the
        program the RUN runs)."""
        return vector_core.describe_kick(self.payloads())


def program_words(words: Sequence[int]) -> list[tuple[int, vector_core.Word]]:
    """(pc, word) of every instruction of a program, a VSETI's immediate skipped (it is data)."""
    out: list[tuple[int, vector_core.Word]] = []
    pc = 0
    while pc < len(words):
        w = vector_core.Word(words[pc])
        out.append((pc, w))
        pc += 2 if w.op == vector_core.OPCODES["VSETI"] else 1
    return out


@dataclass(frozen=True)
class InstancePrograms:
    index: int
    row: int
    col: int
    cluster: ClusterProgram
    vector: VectorProgram


def _fills(addr: int, n: int, sel: int) -> list[int]:
    """FILLs of n entries from `addr` into eoff 0.. of one side (255 per FILL, entries 0..255 reachable)."""
    if n > FILL_REACH:
        side = "A (gm*nk)" if sel == 0 else "B (gn*nk)"
        raise _refuse(f"{n} L1{'AB'[sel]} entries for side {side}: a FILL reaches entries 0..{FILL_REACH - 1} "
                      f"only (its tag is the 8-bit txn)", f"retile with a smaller gm, gn or nk, or {FIXES}")
    out, done = [], 0
    while done < n:
        k = min(FILL_MAX, n - done)
        # preq: our DRAM images hold the operands already as MXFP7 entries (layout.operand_images), so the
        # request carries no QUANT (units.md C.2: flags 0x40 / 0x60)
        out.append(fill(addr + done * ENTRY_BYTES, k, sel, eoff=done, preq=1))
        done += k
    return out


def cluster_program(plan: Plan, index: int, machine: Machine, layout: DramLayout, *, fused: bool = True,
                    anchor: int = ANCHOR) -> ClusterProgram:
    """The cluster program of instance `index`: FILL A, then per accumulator r FILL B_r, GEMM, DRAIN.

    Order: sweep, drain, sweep, drain (each drain lifted above the next sweep,
    whose LOAD would clear the accumulator). Fused drains go to the paired
    vector core's slot r (dnode 1, dbuf 0, dflags 1, dack = agent, addr =
    slot*32); unfused drains go to temp_r in DRAM (dnode 0).
    """
    inst = plan.instances[index]
    if fused and machine.agent is None:
        raise _refuse(f"machine {machine.name} has no agent coordinate: the acknowledgements would go back to "
                      f"the cluster and be dropped", FIXES)
    if not fused and len(layout.temp_bases) < plan.accumulators:
        raise _refuse(f"the unfused form needs {plan.accumulators} temp region(s); the layout has "
                      f"{len(layout.temp_bases)}", "build the layout with temps=True")
    tiles = plan.gm * plan.gn
    out = _fills(layout.x_fill_addr(inst.row), plan.gm * plan.nk, 0)
    for r in range(plan.accumulators):
        out += _fills(layout.w_fill_addr(r, inst.col), plan.gn * plan.nk, 1)
        out.append(gemm(plan.gm, plan.gn, plan.nk, anchor=anchor))
        if fused:
            out.append(drain(tiles, addr=plan.slots[r] * WORD_BYTES, dnode=1, dst=inst.vector_core, dbuf=0,
                                dflags=1, dack=machine.agent))
        else:
            out.append(drain(tiles, addr=layout.temp_addr(r, inst.row, inst.col), dnode=0))
    return ClusterProgram(inst.cluster, tuple(out))


def descriptor_roles(accumulators: int, slots: Sequence[int], *, fused: bool) -> list[tuple[int, str]]:
    """(ad, role) in the compiler's order: the unfused temp fills first, then one L1 descriptor per slot
    read, the result's L1 descriptor, the y drain (fused: A0 slot 0, A1 result, A2 drain)."""
    roles = [] if fused else [f"fill {r}" for r in range(accumulators)]
    roles += [f"slot {s}" for s in slots] + ["result", "drain"]
    if len(roles) > vector_core.N_DESC:
        raise _refuse(f"the {'fused' if fused else 'unfused'} program needs {len(roles)} descriptors "
                      f"({', '.join(roles)}); the core has {vector_core.N_DESC}",
                      f"fewer accumulators per kernel, or {FIXES}")
    return list(enumerate(roles))


def vector_program(plan: Plan, index: int, epilogue: Expr, layout: DramLayout, *, fused: bool = True,
                   desc_writes: str = "minimal", lowered: Optional[Lowered] = None) -> VectorProgram:
    """The vector program of instance `index` (see the module docstring for its shape)."""
    if desc_writes not in DESC_POLICIES:
        raise ValueError(f"desc_writes must be one of {', '.join(DESC_POLICIES)}, got {desc_writes!r}")
    inst = plan.instances[index]
    low = lowered if lowered is not None else lower_epilogue(epilogue)
    if max(low.slots, default=0) >= plan.accumulators:
        raise _refuse(f"the epilogue reads accumulator {max(low.slots)} but the plan has {plan.accumulators}",
                      "plan with the same epilogue")
    tiles = plan.gm * plan.gn
    if plan.span_w % CHUNK_WORDS:
        raise _refuse(f"span_w={plan.span_w} is not a whole number of {CHUNK_WORDS}-word chunks",
                      "plan with models.machine.planner (span_w rounds gm*gn up to 8)")
    roles = descriptor_roles(plan.accumulators, low.slots, fused=fused)
    ad = {role: a for a, role in roles}
    y_desc = vector_core.Descriptor(layout.y_addr(inst.row, inst.col), ((WORD_BYTES, tiles),))
    described = {"result": (vector_core.Descriptor(plan.result_word, ((1, CHUNK_WORDS),)), L1_FIELDS),
                 "drain": (y_desc, MEMORY_FIELDS)}
    for s in low.slots:
        described[f"slot {s}"] = (vector_core.Descriptor(plan.slots[s], ((1, CHUNK_WORDS),)), L1_FIELDS)
    fills = [] if fused else list(range(plan.accumulators))
    for r in fills:
        temp = vector_core.Descriptor(layout.temp_addr(r, inst.row, inst.col), ((WORD_BYTES, tiles),))
        described[f"fill {r}"] = (temp, MEMORY_FIELDS)
    uses = tuple(DescUse(a, role, *described[role]) for a, role in roles)

    lines = [f"VSETI s{VL_SREG}, {VL_CHUNK}"]
    lines += [f"VSETI s{sreg}, {pattern:#08x}" for sreg, pattern in low.scalars]
    lines += [f"VSETVL s{VL_SREG}", "VSETMODE FLAT"]
    lines += [f"VFILL A{ad[f'fill {r}']}, {plan.slots[r]}" for r in fills]
    if fills:
        lines.append("VBAR")
    for c in range(plan.span_w // CHUNK_WORDS):
        lines += [f"VLD v{i}, A{ad[f'slot {s}']}+{CHUNK_WORDS * c}" for i, s in enumerate(low.slots)]
        lines += list(low.body)
        lines.append(f"VST v{low.result}, A{ad['result']}+{CHUNK_WORDS * c}")
    lines += [f"VDRAIN A{ad['drain']}, {plan.result_word}", "VHALT"]
    try:
        words = vector_core.assemble(lines)
    except ValueError as exc:
        raise _refuse(f"the vector program does not assemble: {exc}", f"a smaller tile (fewer chunks), a simpler "
                      f"epilogue, or {FIXES}") from None
    writes = tuple((u.ad, fld, v) for u in uses
                   for fld, v in u.descriptor.writes(u.reads if desc_writes == "minimal" else MEMORY_FIELDS))
    return VectorProgram(inst.vector_core, tuple(lines), tuple(words), uses, writes)
