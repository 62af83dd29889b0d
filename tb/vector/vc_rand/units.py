"""The builder's instruction units: each ``u_*`` method returns the words of one instruction (and any it
needs first, e.g. a VBAR), having applied its effect to the tracking (VL, mode, fills in flight, D4/D5)."""

from __future__ import annotations

from typing import Callable, Sequence

from models.vector import (
    DT_FP16, DT_FP32, L1_WORDS, LANES, SRC_C, SRC_K, SRC_S, SRC_V, VL_MAX, Mode, RedKind, encode_alu, encode_mem,
    encode_seti, encode_vcvt, encode_vdrain_node, encode_vshuf,
)
from models.vector import isa

from .cases import Burst, Coord
from .spec import mem_walk, raw_walk, walk_in
from .tracking import Tracking
from .values import data_word, e8_value

CMP = (0x0B, 0x0C, 0x0D)
TRANSC = (0x0E, 0x0F, 0x10, 0x11)
VSEL = 0x0A
ALU_OPS = tuple(range(0x12))


class Units(Tracking):
    """The builder's emitters: state words, ALU words and chains, vector words, transfers, bursts."""

    # -------------------------------------------------- state words
    def seti_raw(self, sreg: int, value: int) -> list[int]:
        """VSETI S[sreg] (sa 0, 1 or 2 all write S) with a raw 24-bit immediate."""
        word = encode_alu("VSETI", vd=sreg, sa=self.rng.choice((SRC_V, SRC_S, SRC_C)))
        return [word, value & 0xFFFFFF]

    def u_seti(self) -> list[int]:
        """VSETI of a data scalar or K3, often a special E8M15 value."""
        if self.chance(0.25):
            return encode_seti(e8_value(self.rng), k3=True)
        return self.seti_raw(self.reg(), e8_value(self.rng))

    def u_setvl(self, vl: int | None = None) -> list[int]:
        """VSETI then VSETVL of a legal VL (given, or random with ragged values and the edges)."""
        if vl is None:
            r = self.rng.random()
            vl = (self.rng.choice((1, 127, 128, 15, 17, 33)) if r < 0.2 else 16 * self.rng.randint(1, 8)
                  if r < 0.5 else self.rng.randint(1, VL_MAX))
        s = self.reg()
        self.vl = vl
        return self.seti_raw(s, vl) + [encode_alu("VSETVL", va=s)]

    def u_setmode(self, mode: int) -> list[int]:
        """VSETMODE; ir[16:15] (va[3:2]) is ignored, so it is random."""
        self.mode = int(mode)
        return [encode_alu("VSETMODE", va=int(mode) | self.rng.randrange(4) << 2)]

    def mode_to(self, mode: int, again: float = 0.15) -> list[int]:
        """VSETMODE only when the mode differs (sometimes a redundant one)."""
        return self.u_setmode(mode) if mode != self.mode or self.chance(again) else []

    def leave_tree(self) -> list[int]:
        return self.u_setmode(self.rng.choice((Mode.FLAT, Mode.D2, Mode.D4))) if self.mode == Mode.TREE else []

    # -------------------------------------------------- ALU words and chains
    def alu_op(self, chain: bool) -> int:
        """An ALU opcode; compares and VSEL are heavier in chains (predicate writes, selects on C)."""
        r = self.rng.random()
        if r < (0.25 if chain else 0.15):
            return self.rng.choice(CMP)
        if r < (0.33 if chain else 0.22):
            return VSEL
        return self.rng.choice(ALU_OPS)

    def alu_word(self, op: int, head: bool, **force: int) -> int:
        """One ALU word: a head / FLAT word takes V, S or K operands, a stage C, S or K; pm 0..3 at random."""
        rng = self.rng
        pool, weights = ((SRC_V, SRC_S, SRC_K), (6, 3, 1.5)) if head else ((SRC_C, SRC_S, SRC_K), (6, 2, 1.5))
        f = dict(vd=self.reg(), va=self.reg(), vb=self.reg(), vc=self.reg(), pr=rng.randrange(4),
                 pm=rng.choices((0, 1, 2, 3), (4, 2, 2, 1.5))[0], bit0=int(rng.random() < 0.05))
        f.update(sa=rng.choices(pool, weights)[0], sb=rng.choices(pool, weights)[0], sc=rng.choices(pool, weights)[0])
        if not head and SRC_C not in (f["sa"], f["sb"], f["sc"]) and rng.random() < 0.7:
            f["sa"] = SRC_C
        f.update(force)
        return encode_alu(op, **f)

    def u_alu(self, ops: Sequence[int] | None = None, force: Sequence[dict] | None = None) -> list[int]:
        """One ALU instruction in the current mode: a FLAT word or a D2/D4 chain (never in TREE)."""
        assert self.mode != Mode.TREE, "ALU words fault in TREE mode"
        depth = isa.CHAIN_DEPTH[Mode(self.mode)]
        ops = list(ops) if ops is not None else [self.alu_op(depth > 1) for _ in range(depth)]
        force = list(force) if force is not None else [{}] * depth
        assert len(ops) == len(force) == depth
        self.pr_known = self.pm_known = True
        return [self.alu_word(op, k == 0, **fk) for k, (op, fk) in enumerate(zip(ops, force))]

    def chain_pattern(self) -> tuple[list[int], list[dict]]:
        """A chain shape worth hitting: compare feeding VSEL on C, compare last (predicate write), transcendental."""
        depth = isa.CHAIN_DEPTH[Mode(self.mode)]
        rng = self.rng
        pick = rng.randrange(4)
        ops = [self.alu_op(True) for _ in range(depth)]
        force: list[dict] = [{} for _ in range(depth)]
        if pick == 0:  # compare, then VSEL selecting on its 1.0 / +0
            k = rng.randrange(depth - 1)
            ops[k], ops[k + 1] = rng.choice(CMP), VSEL
            force[k + 1] = {"sc": SRC_C, "sa": rng.choice((SRC_S, SRC_K)), "sb": rng.choice((SRC_S, SRC_K, SRC_C))}
        elif pick == 1:  # the last stage a compare: the chain writes P[pr]
            ops[-1] = rng.choice(CMP)
        elif pick == 2:  # a compare in the middle, its value used by the next stage
            k = rng.randrange(depth - 1)
            ops[k] = rng.choice(CMP)
        else:  # transcendentals along the chain (the SiLU shape: VMUL, VEXP2, VADD 1, VINV)
            ops = ([0x05, 0x0E, 0x03, 0x10] if depth == 4 else [0x05, rng.choice(TRANSC)])
            force[0] = {"sb": SRC_S}
            if depth == 4:
                force[2] = {"sa": SRC_C, "sc": SRC_K, "vc": 1}
        return ops, force

    # -------------------------------------------------- vector words
    def u_vld(self, dt: int | None = None, vd: int | None = None, ad: int | None = None, off: int | None = None,
              ) -> list[int]:
        dt = dt or self.rng.choice((DT_FP16, DT_FP32))
        return self._l1_op("VLD", dt, self.reg() if vd is None else vd, ad, off)

    def u_vst(self, dt: int | None = None, vd: int | None = None) -> list[int]:
        return self._l1_op("VST", dt or self.rng.choice((DT_FP16, DT_FP32)), self.reg() if vd is None else vd)

    def _l1_op(self, name: str, dt: int, vd: int, ad: int | None = None, off: int | None = None) -> list[int]:
        if ad is None:
            ad = self.slot(lambda d: True, self.l1_desc)
        d = self.desc[ad]
        off = self.l1_off(d) if off is None else off
        steps = -(-self.vl // LANES) * (2 if dt == DT_FP32 else 1)
        footprint = [a % L1_WORDS for a in raw_walk(d.base, d.full_dims, steps, off)]
        return self.bar_if(footprint) + [encode_mem(name, ad, off, vd, dt)]

    def u_vbcast(self) -> list[int]:
        """VBCAST: sa = 1 broadcasts S to V; sa 0, 2 or 3 copies element 0 to S."""
        if self.chance(0.5):
            return [encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=SRC_S)]
        return [encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=self.rng.choice((SRC_V, SRC_C, SRC_K)))]

    def u_vshuf(self, with_shift: bool = True, shift: int | None = None) -> list[int]:
        """VSHUF by S[vb][3:0]; the shift scalar is often set just before (upper bits random, ignored)."""
        s = self.reg()
        shift = self.rng.randrange(16) if shift is None else shift
        pre = self.seti_raw(s, self.rng.getrandbits(20) << 4 | shift) if with_shift else []
        return pre + [encode_vshuf(self.reg(), self.reg(), s)]

    def u_vcvt(self) -> list[int]:
        return [encode_vcvt(self.reg(), self.reg(), self.rng.choice((isa.DT_CVT_ROUND, isa.DT_CVT_RAW)))]

    def ensure_pr(self) -> list[int]:
        """Make the most recent ALU/VRED word one of this RUN's (ANY/ALL read its pr, quirk D4)."""
        if self.pr_known:
            return []
        if self.mode != Mode.TREE:
            return self.u_alu()
        pre = [] if self.vl % LANES == 0 else self.u_setvl(16 * self.rng.randint(1, 8))
        return pre + self.u_vred(RedKind.SUM)

    def u_anyall(self) -> list[int]:
        pre = self.ensure_pr()
        kind = self.rng.choice((RedKind.ANY, RedKind.ALL))
        vc = int(kind) | (8 if self.chance(0.2) else 0)
        self.pr_known = True
        return pre + [encode_alu("VRED", vd=self.reg(), va=self.reg(), vc=vc, pr=self.rng.randrange(4))]

    def u_vred(self, kind: int) -> list[int]:
        """VRED kind 0..5 (needs TREE and VL % 16 == 0); sa/sb/sc/pm are not read, so they are random."""
        assert self.mode == Mode.TREE and self.vl % LANES == 0
        rng = self.rng
        if kind == RedKind.EXPSUM and not self.pm_known:
            kind = RedKind.SUM  # EXPSUM's write mask takes the pm of the last ALU word (D5): one of this RUN
        va = self.reg()
        vb = va if kind == RedKind.SUMSQ and rng.random() < 0.7 else self.reg()
        self.pr_known = True
        return [encode_alu("VRED", vd=self.reg(), va=va, vb=vb, vc=int(kind) | (8 if rng.random() < 0.15 else 0),
                           pr=rng.randrange(4), sa=rng.randrange(4), sb=rng.randrange(4), sc=rng.randrange(4),
                           pm=rng.randrange(4))]

    # -------------------------------------------------- transfers
    def u_fill(self, lo: int = 1, hi: int = 48, start: int | None = None, zero: bool = False,
               nd: int | None = None) -> list[int]:
        """VFILL of lo..hi elements from a multi-dimensional walk in the fill region; its L1 words become pending.

        `nd`: a new walk of exactly nd stepping dimensions (otherwise 1..4, and a suitable one may be reused)."""
        shape = nd is not None or zero
        ad = self.slot(lambda d: walk_in(d, self.geo.in_fill, lo, hi),
                       lambda: self.mem_desc(self.bounds(lo, hi, nd or self.rng.choice((1, 2, 3, 4)), nd is not None),
                                             "fill", zero), reuse=0.0 if shape else 0.25)
        d = self.desc[ad]
        start = self.rng.randrange(L1_WORDS) if start is None else start
        footprint = [(start + n) % L1_WORDS for n in range(d.total)]
        pre = self.bar_if(footprint)
        self.pending.update(footprint)
        for a in mem_walk(d):
            self.dram.setdefault(a, data_word(self.rng))
        return pre + [encode_mem("VFILL", ad, start)]

    def u_drain(self, lo: int = 1, hi: int = 32, start: int | None = None, zero: bool = False,
                nd: int | None = None) -> list[int]:
        """VDRAIN to memory: lo..hi L1 words to a walk in the drain region (`zero`: one dimension rewrites a word;
        `nd`: a new walk with nd dimensions that all step)."""
        ad = self.slot(lambda d: walk_in(d, self.geo.in_drain, lo, hi),
                       lambda: self.mem_desc(self.bounds(lo, hi, nd or (2 if zero else None), zero or bool(nd)),
                                             "drain", zero),
                       reuse=0.0 if zero else 0.3)
        return self._drain_words(ad, start, lambda s: encode_mem("VDRAIN", ad, s))

    def u_node(self, lo: int = 1, hi: int = 24, start: int | None = None) -> list[int]:
        """VDRAIN in the node form to the host or a peer (buf, signal bit random)."""
        ad = self.slot(lambda d: lo <= d.total <= hi, lambda: self.node_desc(lo, hi), reuse=0.3)
        dst = self.rng.choice(self.geo.node_targets)
        buf, sig = self.rng.randrange(16), self.rng.randrange(2)
        return self._drain_words(ad, start, lambda s: encode_vdrain_node(ad, s, dst, buf, sig))

    def _drain_words(self, ad: int, start: int | None, word: Callable[[int], int]) -> list[int]:
        total = self.desc[ad].total
        start = self.rng.randrange(L1_WORDS) if start is None else start
        return self.bar_if([(start + n) % L1_WORDS for n in range(total)]) + [word(start)]

    # -------------------------------------------------- bursts
    def burst(self, off: int, words: Sequence[int], **kw) -> Burst:
        b = Burst(off, tuple(words), txn=self.rng.randrange(256), **kw)
        self.bursts.append(b)
        return b

    def ack_target(self) -> Coord:
        return (0, 0) if self.chance(0.5) else self.rng.choice(self.geo.node_targets)
