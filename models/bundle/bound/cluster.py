"""The cluster with an error shadow: every L1 element and accumulator lane carries a bound.

:class:`BoundCluster` is models.cluster.core.ClusterCore unchanged (bits are
the golden model's) plus:

* L1: per entry and element (lane, k), the shadow the memory agent's
  quantising read handed on (models/bundle/bound/mag.py ``quant_err``): the
  error of the quantiser's input, its exact value, its FP16 value and the
  quantiser's worst case;
* GEMM (C.5-C.7): per K block, the block's own error measured: the exact dot
  of the dequantised operands against the exact dot of the FP16 inputs they
  were quantised from (both exact in float64: 7-bit codes times E5M3 scales,
  FP16 times FP16), held against its worst case ``sum_k |a| qb + |b| qa + qa
  qb`` (q: the quantiser's worst case per element; past it the derivation is
  refused by name); plus the inputs' own errors ``sum_k |x_a| eb + |x_b| ea +
  ea eb``; one unit of the 14-bit fraction for the conversion to S1E7M14 and
  one for each accumulator add; the golden accumulator must stay within that
  rounding of the exact sum (quirks A1/A3, an exponent wrap or saturation,
  are refused by name);
* the FP16 emit (C.7.5): half an FP16 ulp, flushed below 2^-14.

FILL of pre-quantised entries (preq), CU_DATA into L1 or the accumulator
(ADD_PEER) and OP_SEND drains are not analysed: a :class:`BoundError` names them.
"""

from __future__ import annotations

from collections import deque
from typing import Mapping

import numpy as np

from models.cluster.core import BASE_TYPES, ClusterCore, gemm_blocks, gemm_tiles, l1_entry
from models.cluster.isa import ACC_TILES, ANCHOR_NEUTRAL, ENTRY_GRANULES, Buf, one
from models.noc.flit import FIELDS, FlitType
from models.numerics.cluster import acc_emit, emit_granule, gemm_entry
from models.numerics.formats import ACC, decode, e5m3_decode
from models.numerics.layout import unpack_a_entry, unpack_b_entry
from models.vector.link import Event

from .ledger import Ledger
from .mag import Q_ERR, Q_EXACT, Q_INPUT, Q_PLANES, Q_WORST
from .port import ErrorPort
from .rules import BoundError, f16, fp16_emit, ue14

Entry = tuple[int, int]  # (side, L1 entry)


def _dot(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """(..., 4, 32) x (..., 32, 4) in float64, summed along k in a fixed order (no BLAS)."""
    return np.add.reduce(x[..., :, :, None] * y[..., None, :, :], axis=-2)


class BoundCluster(ErrorPort, ClusterCore):
    """ClusterCore plus the error of every L1 element and accumulator lane (module doc)."""

    ledger: Ledger | None = None  # each operation's own error, kept by the machine (bound/machine.py) if set

    def __init__(self, *args, **kwargs) -> None:
        # L1 and the accumulator survive a reset, so do their errors (ClusterCore.__init__ calls reset)
        self.l1_planes: dict[Entry, np.ndarray] = {}  # per entry, the (Q_PLANES, 4, 32) shadow quant_err handed on
        self.acc_err = np.zeros((ACC_TILES, 4, 4))
        self.acc_x = np.zeros((ACC_TILES, 4, 4))  # each accumulator lane's exact value
        super().__init__(*args, **kwargs)

    def reset(self) -> None:
        super().reset()
        self._init_port()
        self.pending_err: deque[np.ndarray | None] = deque()  # the errors of the flits waiting in `pending`

    def _entry_planes(self, side: Buf, e: int, value: np.ndarray) -> np.ndarray:
        """An entry's shadow, lane-major (Q_PLANES, 4, 32); an entry nothing filled holds its own values
        exactly (zero codes: 0), with no error."""
        got = self.l1_planes.get((int(side), e))
        if got is not None:
            return got
        zero = np.zeros((4, 32))
        planes = [zero] * Q_PLANES
        planes[Q_EXACT] = planes[Q_INPUT] = value
        return np.stack(planes)

    # ------------------------------------------------------------ inbound
    def take(self, flit: int) -> list[Event]:
        """As the golden take; a flit that enters the receive queue keeps its errors beside it (a response
        held until its FILL starts is applied long after the network delivered it)."""
        ftype = FIELDS["type"].extract(flit)
        if ftype != FlitType.CU_INST and ftype not in BASE_TYPES:
            self.pending_err.append(self.inbound)
        return super().take(flit)

    def _receive(self, flit: int) -> list[Event]:
        self.inbound = self.pending_err.popleft()  # the golden pump applies `pending` in order
        return super()._receive(flit)

    def _fill_word(self, flit: int) -> list[Event]:
        fl = self.fill
        assert fl is not None
        if fl.f["preq"]:
            raise BoundError("the error analysis knows no rule for a cluster FILL of pre-quantised entries (preq)")
        if FIELDS["rsvd"].extract(flit) & 3 == ENTRY_GRANULES - 1:
            side = Buf.L1B if fl.f["sel"] else Buf.L1A
            key = (int(side), l1_entry(fl.f["fbank"], FIELDS["txn"].extract(flit)))
            self.l1_planes[key] = np.array(self.take_inbound("a quantised FILL entry"), dtype=np.float64)
        return super()._fill_word(flit)

    def _land(self, buf: int, off: int, data: int) -> None:
        raise BoundError(f"the error analysis knows no rule for CU_DATA into the cluster's buffer {buf} "
                         f"(L1 words or an ADD_PEER)")

    # ------------------------------------------------------------ GEMM
    def _operands(self, side: Buf, idx: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """The dequantised values of the entries `idx` and their shadows (Q_PLANES first), as the GEMM
        multiplies them: A (T, 4, 32) lane-major, B (T, 32, 4) k-major."""
        granules = np.array([self.entry(side, e) for e in idx], dtype=object)
        if side == Buf.L1A:
            codes, scale = unpack_a_entry(granules)
            value = codes * e5m3_decode(scale)[..., :, None]
            return value, np.stack([self._entry_planes(side, e, v) for e, v in zip(idx, value)], axis=1)
        codes, scale = unpack_b_entry(granules)
        value = codes * e5m3_decode(scale)[..., None, :]
        planes = np.stack([self._entry_planes(side, e, v.T) for e, v in zip(idx, value)], axis=1)
        return value, np.swapaxes(planes, -1, -2)

    def sweep(self, f: Mapping[str, int]) -> list[int]:
        tiles = gemm_tiles(f)
        scale = 2.0 ** (ANCHOR_NEUTRAL - int(f["anchor"]))
        acc_bits = self.acc[tiles].copy()
        acc_err = self.acc_err[tiles].copy()
        acc_x = self.acc_x[tiles].copy()
        for kb, a_idx, b_idx, add in gemm_blocks(f):
            va, pa = self._operands(Buf.L1A, a_idx)
            vb, pb = self._operands(Buf.L1B, b_idx)
            acc_x = (acc_x if add else 0.0) + _dot(pa[Q_EXACT], pb[Q_EXACT]) * scale  # the math: no quantisation
            exact = _dot(va, vb) * scale  # the K block's dot, exact in float64 (7-bit codes, E5M3 scales)
            err = self._block_own_error(kb, va, vb, pa, pb, scale, exact)
            self._note("MXFP7 K-block dot", err, _dot(np.abs(pa[Q_INPUT]), np.abs(pb[Q_INPUT])) * scale)
            ea, eb = pa[Q_ERR], pb[Q_ERR]
            err = err + (_dot(np.abs(pa[Q_INPUT]), eb) + _dot(ea, np.abs(pb[Q_INPUT])) + _dot(ea, eb)) * scale \
                + ue14(exact)
            old = decode(acc_bits, ACC) if add else 0.0
            a = np.array([self.entry(Buf.L1A, e) for e in a_idx], dtype=object)
            b = np.array([self.entry(Buf.L1B, e) for e in b_idx], dtype=object)
            acc_bits = np.asarray(gemm_entry(a, b, f["anchor"], acc_bits, add), dtype=np.uint32)
            new = decode(acc_bits, ACC)
            rounding = ue14(exact) + (ue14(new) if add else 0.0)
            left = np.abs(new - (old + exact))  # the accumulator's own rounding of this block
            self._note("accumulator (S1E7M14)", left, np.abs(old) + np.abs(exact))
            if np.any(left > rounding):
                raise BoundError(f"GEMM K block {kb}: the accumulator left the exact sum by more than its rounding "
                                 f"(an exponent wrap or saturation, quirks A1/A3 of units.md C.7.6)")
            acc_err = (acc_err if add else 0.0) + err + (ue14(new) if add else 0.0)
        flits = super().sweep(f)
        if not np.array_equal(self.acc[tiles], acc_bits):
            raise BoundError("the shadow GEMM's accumulator differs from the golden model's: a rule left its order")
        self.acc_err[tiles] = acc_err
        self.acc_x[tiles] = acc_x
        if flits:
            for t in tiles:
                self._send_emitted(t)
        return flits

    @staticmethod
    def _block_own_error(kb: int, va: np.ndarray, vb: np.ndarray, pa: np.ndarray, pb: np.ndarray, scale: float,
                         exact: np.ndarray) -> np.ndarray:
        """A K block's own error: its dot of the quantised operands against the dot of the FP16 values they
        were quantised from, measured (both dots exact in float64), never past the quantiser's worst case
        summed term by term (a measured error past it is a quantiser the derivation cannot trust: refused)."""
        own = np.abs(exact - _dot(pa[Q_INPUT], pb[Q_INPUT]) * scale)
        qa, qb = pa[Q_WORST], pb[Q_WORST]
        worst = (_dot(np.abs(va), qb) + _dot(qa, np.abs(vb)) + _dot(qa, qb)) * scale
        if np.any(own > worst):
            raise BoundError(f"GEMM K block {kb}: the quantised operands' dot is {float(np.max(own - worst)):.3g} "
                             f"past the MXFP7 worst case (0.516 steps an element) from the dot of their inputs")
        return own

    def _note(self, op: str, own: np.ndarray, result: np.ndarray) -> None:
        if self.ledger is not None:
            self.ledger.note(op, own, result)

    def _send_emitted(self, t: int) -> None:
        value = decode(self.acc[t], ACC)
        emitted = f16(acc_emit(self.acc[t]))
        self._note("FP16 emit", np.abs(emitted - value), value)
        err = (self.acc_err[t] + fp16_emit(value, emitted)).reshape(16)
        self.send(emit_granule(self.acc[t]), np.stack([err, np.full(16, -np.inf), self.acc_x[t].reshape(16)]))

    def drain_flits(self, f: Mapping[str, int]) -> list[int]:
        if f["dnode"] and f["dbuf"] == Buf.ACC:
            raise BoundError("the error analysis knows no rule for a cluster OP_SEND drain (accumulator to a peer)")
        flits = super().drain_flits(f)
        for t in range(one(f["n"])):
            self._send_emitted(t)
        return flits


__all__ = ["BoundCluster"]
