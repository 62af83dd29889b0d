"""The vector core's lane result by ISA opcode (units.md V.6.2, V.6.4, V.8): :func:`alu` for
opcodes 0x00..0x11 and :func:`compare` for the predicates a compare writes to P.

The dispatch sits above both halves of the lane arithmetic, the FMA datapath's
ops (models.numerics.e8m15) and the transcendentals
(models.numerics.e8m15_transcendental, which use e8m15's PACK): in either half
it would make the two import each other.
"""

from __future__ import annotations

from typing import Callable, Optional

import numpy as np

from .e8m15 import (
    K0, OP_NAMES, VADD, VCMPEQ, VCMPGT, VCMPLT, VEXP2, VFMA, VFNMA, VINV, VLOG2, VMAX, VMIN, VMUL, VRSQRT, VSEL,
    VSUB, _fma_op, _u32, cmp_eq, cmp_gt, cmp_lt,
)
from .e8m15_transcendental import vexp2, vinv, vlog2, vrsqrt

# ----------------------------------------------------------------- dispatch by opcode
_UNARY: dict[int, Callable[[object], np.ndarray]] = {VEXP2: vexp2, VLOG2: vlog2, VINV: vinv, VRSQRT: vrsqrt}
_READS_B = frozenset({VMUL, VFMA, VFNMA, VMAX, VMIN, VSEL, VCMPLT, VCMPGT, VCMPEQ})
_READS_C = frozenset({VADD, VSUB, VFMA, VFNMA, VSEL})
_CMP_PRED = {VCMPLT: cmp_lt, VCMPGT: cmp_gt, VCMPEQ: cmp_eq}


def _op_name(op) -> str:
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool):
        return f"{int(op):#04x}" + (f" ({OP_NAMES[int(op)]})" if 0 <= int(op) < len(OP_NAMES) else "")
    return repr(op)


def _checked(op, allowed, what: str) -> int:
    """The opcode as an int, or ValueError naming it."""
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool) and int(op) in allowed:
        return int(op)
    raise ValueError(f"{what}: opcode {_op_name(op)} is not one of "
                     f"{', '.join(f'{o:#04x}' for o in sorted(allowed))}")


def _alu_one(op: int, a, b, c) -> np.ndarray:
    for name, val, used in (("b", b, op in _READS_B), ("c", c, op in _READS_C)):
        if used and val is None:
            raise ValueError(f"alu: opcode {_op_name(op)} reads operand {name}, got None")
    if op in _UNARY:
        return _UNARY[op](a)
    return _fma_op(op, a, K0 if b is None else b, K0 if c is None else c)


def alu(op, a, b=None, c=None) -> np.ndarray:
    """The lane result of ISA opcode 0x00..0x11 (V.6.2 / V.6.4) on patterns a, b, c.

    ``op`` is normally a Python int; an integer array selects the op per lane (each
    distinct opcode is evaluated once over the whole vector, then selected). Operands
    an op does not read may be None. Anything else than 0x00..0x11 is a ValueError.
    """
    if type(op) is int and 0 <= op < len(OP_NAMES):  # the vector core's case, without the generic checks
        return _alu_one(op, a, b, c)
    if np.ndim(op) == 0:
        return _alu_one(_checked(op, range(len(OP_NAMES)), "alu"), a, b, c)
    ops = np.asarray(op)
    if ops.dtype.kind not in "iu":
        raise ValueError(f"alu: opcodes must be integers, got dtype {ops.dtype}")
    codes = [int(o) for o in np.unique(ops)]
    for o in codes:
        _checked(o, range(len(OP_NAMES)), "alu")
    out: Optional[np.ndarray] = None
    for o in codes:
        res = _alu_one(o, a, b, c)
        out = res if out is None else np.where(ops == o, res, out)
    return _u32(np.broadcast_to(out, np.broadcast_shapes(ops.shape, out.shape)))


def compare(op, a, b) -> np.ndarray:
    """The predicate (bool array) of VCMPLT, VCMPGT or VCMPEQ (0x0B..0x0D), for P writes."""
    return _CMP_PRED[_checked(op, _CMP_PRED, "compare")](a, b)


__all__ = ["alu", "compare"]
