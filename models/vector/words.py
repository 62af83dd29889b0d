"""The vector core's non-ALU program words (units.md V.8, V.9): VCVT, VRED, VLD, VST, VBCAST, VSHUF,
VSETVL, VSETMODE, VLOOP, as a mixin of models.vector.core.VectorCore (they read and write its state).

A handler raises ``WordFault(code)`` to end the RUN with that fault code (V.10).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from models.numerics import e8m15_cvt

from . import isa
from .isa import IMEM_WORDS, L1_WORDS, LANES, SRC_S, VL_MAX, Fault, Mode, RedKind, Word
from .lanes import any_all, chunk_mask, reduce_tree, shuffle
from .walk import walk_addresses


@dataclass
class LoopState:
    """The one loop level (V.8 VLOOP): deactivated at every RUN."""

    active: bool = False
    count: int = 0
    top: int = 0
    end: int = 0
    mark: int = 0  # the RUN's travel at the body's top (models/vector/runaway.py)



class WordFault(Exception):
    """A word faults: the RUN retires as FAULT(code)."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = int(code)


class WaitFills(Exception):
    """The instruction waits for outstanding fill responses; it re-executes when they land."""



class WordsMixin:
    """VectorCore's handlers of the non-ALU words (state lives in VectorCore)."""

    def _nchunk(self) -> int:
        return -(-self.vl // LANES)

    def _vcvt(self, w: Word) -> None:
        if w.dt not in (isa.DT_CVT_ROUND, isa.DT_CVT_RAW):
            raise WordFault(Fault.F_DTYPE)
        src = self.v[w.va]
        res = src if w.dt == isa.DT_CVT_RAW else e8m15_cvt.fp16_to_e8m15(e8m15_cvt.e8m15_to_fp16(src))
        self.v[w.vd] = np.where(chunk_mask(self.vl), np.asarray(res, dtype=np.uint32), self.v[w.vd])

    def _vred(self, w: Word) -> None:
        kind = RedKind(w.kind)
        q = self.last_pr
        self.last_pr = w.pr
        if kind in (RedKind.ANY, RedKind.ALL):
            self._check_pred(q, self.run.pc, w, "H1-ANYALL")
            self.s[w.vd] = any_all(kind, self.p[q], self.vl)
            return
        if self.vl % LANES:
            raise WordFault(Fault.F_REDVL)
        if self.mode != Mode.TREE:
            raise WordFault(Fault.F_OPCODE)
        result, expo = reduce_tree(kind, self.v[w.va], self.v[w.vb], self.vl)
        if expo is not None:  # EXPSUM also writes V[vb] = VEXP2(V[va]), mask from P[pr] and the last pm (D5)
            mask = np.arange(VL_MAX) < self.vl
            if self.last_pm:
                self._check_pred(w.pr, self.run.pc, w)
                p = self.p[w.pr]
                mask &= p if self.last_pm == 1 else ~p
            self.v[w.vb] = np.where(mask, expo, self.v[w.vb])
        self.s[w.vd] = result

    def _l1_walk(self, w: Word, steps: int) -> list[int]:
        return [a & (L1_WORDS - 1) for a in walk_addresses(self.base[w.ad], tuple(self.dims[w.ad]), steps, w.off)]

    def _vld(self, w: Word) -> None:
        if w.dt not in (isa.DT_FP16, isa.DT_FP32):
            raise WordFault(Fault.F_DTYPE)
        n = self._nchunk()
        if w.dt == isa.DT_FP16:
            words = self.l1[self._l1_walk(w, n)]
            vals = e8m15_cvt.fp16_to_e8m15(words.reshape(-1))
        else:
            words = self.l1[self._l1_walk(w, 2 * n)].reshape(2 * n, 8, 2).astype(np.uint32)
            vals = e8m15_cvt.fp32_to_e8m15((words[..., 1] << 16 | words[..., 0]).reshape(-1))
        self.v[w.vd, : n * LANES] = np.asarray(vals, dtype=np.uint32)

    def _vst(self, w: Word) -> None:
        if w.dt not in (isa.DT_FP16, isa.DT_FP32):
            raise WordFault(Fault.F_DTYPE)
        n = self._nchunk()
        src = self.v[w.vd, : n * LANES]  # VST's source register is vd
        if w.dt == isa.DT_FP16:
            lanes = np.asarray(e8m15_cvt.e8m15_to_fp16(src), dtype=np.uint16).reshape(n, LANES)
        else:
            f = np.asarray(e8m15_cvt.e8m15_to_fp32(src), dtype=np.uint32).reshape(2 * n, 8)
            lanes = np.stack([f & 0xFFFF, f >> 16], axis=-1).reshape(2 * n, LANES).astype(np.uint16)
        for addr, word in zip(self._l1_walk(w, len(lanes)), lanes):
            self.l1[addr] = word  # in walk order: a repeated address keeps the last chunk

    def _vbcast(self, w: Word) -> None:
        if w.sa == SRC_S:
            self.v[w.vd] = np.where(chunk_mask(self.vl), np.uint32(self.s[w.va]), self.v[w.vd])
        else:
            self.s[w.vd] = int(self.v[w.va, 0])

    def _vshuf(self, w: Word) -> None:
        self.v[w.vd] = np.where(chunk_mask(self.vl), shuffle(self.v[w.va], self.s[w.vb]), self.v[w.vd])

    def _vsetvl(self, w: Word) -> None:
        value = self.s[w.va]
        if not 1 <= value <= VL_MAX:
            raise WordFault(Fault.F_VL)
        self.vl = value

    def _vsetmode(self, w: Word) -> None:
        self.mode = w.mode

    def _vloop(self, w: Word) -> None:
        if self.loop.active:
            raise WordFault(Fault.F_LOOP)
        pc = self.run.pc
        self.loop = LoopState(True, self.s[w.va], (pc + 1) % IMEM_WORDS, (pc + 1 + w.vb) % IMEM_WORDS,
                              self.run.travel + 1)  # + VLOOP's own word, counted once it retires


__all__ = ["LoopState", "WaitFills", "WordFault", "WordsMixin"]
