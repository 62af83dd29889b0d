"""The vector core with an error shadow: every L1 lane, vector lane, scalar and predicate lane carries a bound.

:class:`BoundVectorCore` is models.vector.core.VectorCore unchanged (its bits are
the golden model's: it only adds state and reads the golden state), plus the
error of every value the program moves or computes:

* L1 (512 words x 16 FP16 lanes), V (16 x 128), S, K3: absolute bounds;
  P: which predicate lanes may have flipped (a compare of operands within
  their errors of each other);
* ALU words and chains through models/bundle/bound/lanes.py (the hook
  ``_observe_alu`` the core calls before it writes); VRED SUM/MAX/MIN by the
  same tree; VLD FP16 exact; VST FP16 and VCVT round half an FP16 ulp;
  VBCAST, VSHUF, VFILL, CU_DATA and VDRAIN move errors with their data;
  VSETI immediates within half an E8M15 ulp of the constant they stand for;
* any other word or mode (VLD/VST FP32, VRED SUMSQ/DOT/EXPSUM/ANY/ALL) is a
  :class:`~models.bundle.bound.rules.BoundError` naming it.
"""

from __future__ import annotations

import numpy as np

from models.noc.flit import FIELDS
from models.numerics import e8m15_cvt
from models.vector import isa
from models.vector.core import Sources, VectorCore, _Run
from models.vector.link import Event
from models.vector.isa import CMP_OPS, IMEM_WORDS, L1_WORDS, LANES, N_PREGS, N_SREGS, N_VREGS, SRC_C, SRC_K, SRC_S, \
    SRC_V, VL_MAX, RedKind, Word
from models.vector.lanes import chunk_mask, shuffle
from models.vector.walk import walk_total

from . import lanes as bound_lanes
from .lanes import Lanes
from .ledger import Ledger
from .port import ErrorPort
from .rules import U, BoundError, e8, f16, flip, fp16_store



class BoundVectorCore(ErrorPort, VectorCore):
    """VectorCore plus the error of every value it holds (module doc)."""

    ledger: Ledger | None = None  # each operation's own error, kept by the machine (bound/machine.py) if set

    def reset(self) -> None:
        super().reset()
        self._init_port()
        self.l1_err = np.zeros((L1_WORDS, LANES))
        self.l1_floor = np.full((L1_WORDS, LANES), -np.inf)
        self.v_err = np.zeros((N_VREGS, VL_MAX))
        self.v_floor = np.full((N_VREGS, VL_MAX), -np.inf)  # a lower bound of each lane's exact value (lanes.py)
        self.s_err = np.zeros(N_SREGS)
        self.s_floor = np.full(N_SREGS, -np.inf)
        self.k3_err = 0.0
        self.p_maybe = np.zeros((N_PREGS, VL_MAX), dtype=bool)
        # the exact (float64) value of every lane as the program's math evaluates it (all zero, as the state)
        self.l1_x = np.zeros((L1_WORDS, LANES))
        self.v_x = np.zeros((N_VREGS, VL_MAX))
        self.s_x = np.zeros(N_SREGS)
        self.k3_x = 0.0
        self.p_x = np.zeros((N_PREGS, VL_MAX), dtype=bool)

    # ------------------------------------------------------------ ALU
    def _operand_lanes(self, sel: int, idx: int, stage0: bool) -> Lanes | None:
        bits = self._operand(sel, idx, stage0)
        if sel == SRC_C:
            return None
        assert bits is not None
        if sel == SRC_V:
            return Lanes(bits, self.v_err[idx], self.v_floor[idx], self.v_x[idx])
        elif sel == SRC_S:
            return Lanes(bits, np.full(VL_MAX, self.s_err[idx]), np.full(VL_MAX, self.s_floor[idx]),
                         np.full(VL_MAX, self.s_x[idx]))
        else:
            assert sel == SRC_K
            k3 = idx & 3 == 3
            err = np.full(VL_MAX, self.k3_err if k3 else 0.0)
            return Lanes(bits, err, None, np.full(VL_MAX, self.k3_x) if k3 else None)

    def _observe_alu(self, words: list[Word], sources: list[Sources], written: np.ndarray) -> None:
        stages = [(g.op, *(self._operand_lanes(sel, idx, k == 0) for sel, idx in src))
                  for k, (g, src) in enumerate(zip(words, sources))]
        res, maybe = bound_lanes.chain(stages, self._note)
        assert res.exact is not None
        last = words[-1]
        live = np.arange(VL_MAX) < self.vl
        written_x = live  # the lanes the exact math writes: under the exact predicate
        if last.op not in CMP_OPS and last.pm:
            written_x = live & (self.p_x[last.pr] if last.pm == 1 else ~self.p_x[last.pr])
        if last.op in CMP_OPS:
            assert maybe is not None
            self.p_maybe[last.pr] = np.where(written, maybe, self.p_maybe[last.pr])
            self.p_x[last.pr] = np.where(written_x, res.exact != 0, self.p_x[last.pr])
            return
        self.v_x[last.vd] = np.where(written_x, res.exact, self.v_x[last.vd])
        old, old_err = e8(self.v[last.vd]), self.v_err[last.vd]
        err = np.where(written, res.err, old_err)
        assert res.floor is not None
        floor = np.where(written, res.floor, self.v_floor[last.vd])
        if last.pm:  # a lane whose predicate may have flipped could hold the other candidate
            new = res.value
            chosen, other = np.where(written, new, old), np.where(written, old, new)
            ce, oe = np.where(written, res.err, old_err), np.where(written, old_err, res.err)
            maybe = self.p_maybe[last.pr] & live
            err = np.where(live, flip(chosen, ce, other, oe, maybe), err)
            floor = np.where(maybe, -np.inf, floor)
        self.v_err[last.vd] = err
        self.v_floor[last.vd] = floor

    def _note(self, op: str, own: np.ndarray, result: np.ndarray) -> None:
        """An operation's own error into the machine's ledger (models/bundle/bound/ledger.py), if it keeps one."""
        if self.ledger is not None:
            self.ledger.note(op, own, result)

    def _set_v(self, vd: int, err: np.ndarray, floor: np.ndarray | None = None,
               exact: np.ndarray | None = None) -> None:
        """A non-ALU write of V[vd]'s errors, floors and exact values (no floor given: forgotten, never left
        stale; no exact value given: the lane's own value)."""
        self.v_err[vd] = err
        self.v_floor[vd] = -np.inf if floor is None else floor
        self.v_x[vd] = e8(self.v[vd]) if exact is None else exact

    # ------------------------------------------------------------ non-ALU words
    def _step(self, w: Word, r: _Run, out: list[Event]) -> bool:
        imm_pc = (r.pc + 1) % IMEM_WORDS
        halted = super()._step(w, r, out)
        if w.op == isa.OP_VSETI:  # an immediate stands for a constant within half an ulp of it
            value = float(e8(np.array([self.imem[imm_pc] & isa.E8_MASK]))[0])
            err = 0.5 * U * abs(value)
            if w.sa == SRC_K:
                self.k3_err, self.k3_x = err, value
            else:
                self.s_err[w.vd], self.s_floor[w.vd], self.s_x[w.vd] = err, -np.inf, value
        return halted

    def _vcvt(self, w: Word) -> None:
        src, err, mask = self.v[w.va], self.v_err[w.va], chunk_mask(self.vl)
        if w.dt == isa.DT_CVT_ROUND:
            value, stored = e8(src), f16(e8m15_cvt.e8m15_to_fp16(src))
            err = err + fp16_store(value, stored)
            self._note("VCVT round", np.abs(stored - value)[mask], value[mask])
        floor = self.v_floor[w.va].copy()  # the exact value is what it was: only the machine's rounds
        exact = self.v_x[w.va].copy()
        super()._vcvt(w)
        self._set_v(w.vd, np.where(mask, err, self.v_err[w.vd]), np.where(mask, floor, self.v_floor[w.vd]),
                    np.where(mask, exact, self.v_x[w.vd]))

    def _vred(self, w: Word) -> None:
        kind = RedKind(w.kind)
        if kind not in bound_lanes.KNOWN_REDUCTIONS:
            raise BoundError(f"the error analysis knows no rule for VRED.{kind.name}")
        src = Lanes(self.v[w.va], self.v_err[w.va], self.v_floor[w.va], self.v_x[w.va])
        top = bound_lanes.reduce(kind, src, self.vl) if self.vl % LANES == 0 else None
        super()._vred(w)
        if top is None or int(top.bits[0]) != int(self.s[w.vd]):
            raise BoundError(f"the shadow VRED.{kind.name} differs from the golden tree: a rule left its order")
        if kind == RedKind.SUM:  # the tree's own roundings: its result against the float64 sum of its inputs
            inputs = e8(self.v[w.va, : self.vl])
            own = abs(float(top.value[0]) - float(np.sum(inputs)))
            self._note("VRED.SUM", np.array([own]), np.array([float(np.sum(np.abs(inputs)))]))
        self.s_err[w.vd] = top.err[0]
        assert top.floor is not None and top.exact is not None
        self.s_floor[w.vd] = top.floor[0]
        self.s_x[w.vd] = top.exact[0]

    def _vld(self, w: Word) -> None:
        if w.dt != isa.DT_FP16:
            raise BoundError(f"the error analysis knows no rule for VLD with dtype {w.dt} (FP16 only)")
        super()._vld(w)
        n = self._nchunk()
        err, floor, exact = self.v_err[w.vd].copy(), self.v_floor[w.vd].copy(), self.v_x[w.vd].copy()
        walk = self._l1_walk(w, n)
        err[: n * LANES] = self.l1_err[walk].reshape(-1)  # FP16 -> E8M15: exact
        floor[: n * LANES] = self.l1_floor[walk].reshape(-1)
        exact[: n * LANES] = self.l1_x[walk].reshape(-1)
        self._set_v(w.vd, err, floor, exact)

    def _vst(self, w: Word) -> None:
        if w.dt != isa.DT_FP16:
            raise BoundError(f"the error analysis knows no rule for VST with dtype {w.dt} (FP16 only)")
        super()._vst(w)
        n = self._nchunk()
        src = self.v[w.vd, : n * LANES]
        value, stored = e8(src), f16(e8m15_cvt.e8m15_to_fp16(src))
        err = self.v_err[w.vd, : n * LANES] + fp16_store(value, stored)
        self._note("VST FP16", np.abs(stored - value), value)
        floor = self.v_floor[w.vd, : n * LANES].reshape(n, LANES)
        exact = self.v_x[w.vd, : n * LANES].reshape(n, LANES)
        for addr, chunk, low, x in zip(self._l1_walk(w, n), err.reshape(n, LANES), floor, exact):
            self.l1_err[addr], self.l1_floor[addr], self.l1_x[addr] = chunk, low, x  # walk order, as the golden store

    def _vbcast(self, w: Word) -> None:
        if w.sa == SRC_S:
            mask = chunk_mask(self.vl)
            exact = np.where(mask, self.s_x[w.va], self.v_x[w.vd])
            super()._vbcast(w)
            self._set_v(w.vd, np.where(mask, self.s_err[w.va], self.v_err[w.vd]),
                        np.where(mask, self.s_floor[w.va], self.v_floor[w.vd]), exact)
        else:
            self.s_err[w.vd], self.s_floor[w.vd], self.s_x[w.vd] = \
                self.v_err[w.va, 0], self.v_floor[w.va, 0], self.v_x[w.va, 0]
            super()._vbcast(w)

    def _vshuf(self, w: Word) -> None:
        mask, shift = chunk_mask(self.vl), self.s[w.vb]
        planes = [np.where(mask, shuffle(p[w.va], shift), p[w.vd]) for p in (self.v_err, self.v_floor, self.v_x)]
        super()._vshuf(w)
        self._set_v(w.vd, *planes)

    # ------------------------------------------------------------ the link
    def _fill_response(self, flit: int) -> list[Event]:
        addr = self.fills.get(FIELDS["txn"].extract(flit))
        if addr is not None:
            self.l1_err[addr], self.l1_floor[addr], self.l1_x[addr] = self.take_inbound("a VFILL response")
        return super()._fill_response(flit)

    def _cu_data(self, flit: int) -> list[Event]:
        b = self.burst
        src = (FIELDS["src_x"].extract(flit), FIELDS["src_y"].extract(flit))
        if b is not None and not b.drop and src == b.src:
            self.l1_err[b.ptr], self.l1_floor[b.ptr], self.l1_x[b.ptr] = self.take_inbound("a CU_DATA word")
        return super()._cu_data(flit)

    def _transfer(self, w: Word, out: list[Event]) -> None:
        super()._transfer(w, out)
        if w.op == isa.OP_VFILL:
            return
        total = walk_total(tuple(b for _, b in self.dims[w.ad]))
        for n in range(total):
            addr = (w.l1_start + n) % L1_WORDS
            self.send(self.l1_word(addr), np.stack([self.l1_err[addr], self.l1_floor[addr], self.l1_x[addr]]))


__all__ = ["BoundVectorCore"]
