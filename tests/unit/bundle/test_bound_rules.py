"""The per-operation rules of the error analysis (models/bundle/bound/rules.py, lanes.py) hold against the golden arithmetic.

For each lane operation: exact operands x* (float64), machine operands x (x*
moved by a random error and rounded to E8M15), the golden result r
(models.numerics.e8m15_alu), and the rule's bound from (x, |x - x*|, r): the
rule must cover |r - f(x*)| on every lane, with no safety factor, and come
within a factor 3 of it somewhere (a bound that never comes close could not
fail a wrong result). The MXFP7 rule (0.516 steps of the lane's step) is
checked against the quantiser itself on lanes spanning FP16's range.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

from models.bundle.bound import rules
from models.bundle.bound.lanes import Lanes, alu, reduce
from models.numerics import e8m15
from models.numerics import mxfp7
from models.numerics.formats import E8M15, encode
from models.vector.isa import RedKind

RNG_SEED = 11
N = 4000

Exact = Callable[..., np.ndarray]
CASES: dict[str, tuple[int, int, Exact, tuple[float, float]]] = {
    # name: (opcode, operands, the exact function, range of the exact operands)
    "VADD": (e8m15.VADD, 2, lambda a, c: a + c, (-50.0, 50.0)),
    "VSUB": (e8m15.VSUB, 2, lambda a, c: a - c, (-50.0, 50.0)),
    "VMUL": (e8m15.VMUL, 2, lambda a, b: a * b, (-50.0, 50.0)),
    "VFMA": (e8m15.VFMA, 3, lambda a, b, c: a * b + c, (-20.0, 20.0)),
    "VMAX": (e8m15.VMAX, 2, np.maximum, (-5.0, 5.0)),
    "VMIN": (e8m15.VMIN, 2, np.minimum, (-5.0, 5.0)),
    "VEXP2": (e8m15.VEXP2, 1, lambda a: 2.0 ** a, (-30.0, 30.0)),
    "VINV": (e8m15.VINV, 1, lambda a: 1.0 / a, (0.01, 100.0)),
    "VRSQRT": (e8m15.VRSQRT, 1, lambda a: 1.0 / np.sqrt(a), (0.01, 100.0)),
    "VLOG2": (e8m15.VLOG2, 1, np.log2, (0.01, 100.0)),
}


def _machine(rng: np.random.Generator, exact: np.ndarray, rel: float) -> Lanes:
    """x* moved by up to `rel` of itself (and sometimes not at all), rounded to E8M15: the lanes and their
    true error |x - x*|."""
    moved = exact * (1.0 + rng.uniform(-rel, rel, exact.shape) * (rng.random(exact.shape) < 0.8))
    bits = encode(moved, E8M15).astype(np.uint32)
    return Lanes(bits, np.abs(rules.e8(bits) - exact))


@pytest.mark.parametrize("name", list(CASES))
def test_a_lane_rule_covers_the_golden_arithmetic(name: str) -> None:
    op, arity, fn, (lo, hi) = CASES[name]
    rng = np.random.default_rng(RNG_SEED)
    exact = [rng.uniform(lo, hi, N) for _ in range(arity)]
    lanes = [_machine(rng, x, 1e-3) for x in exact]
    a, b, c = (lanes + [None, None])[:3] if arity > 1 else (lanes[0], None, None)
    if op in (e8m15.VADD, e8m15.VSUB):  # a and c are the operands
        a, b, c = lanes[0], None, lanes[1]
    out, _ = alu(op, a, b, c)
    want = fn(*exact)
    err = np.abs(out.value - want)
    slack = 1e-12 * np.abs(want)  # f(x*) itself is a float64 result
    assert np.all(err <= out.err + slack), f"{name}: worst |r - f(x*)|/bound {np.max(err / out.err):.3f}"
    assert np.max(err / np.where(out.err > 0, out.err, 1.0)) > 1 / 3, f"{name}: the bound is never approached"
    assert out.floor is not None
    assert np.all(out.floor <= want + slack), f"{name}: a floor above the exact value"


def test_an_exact_result_adds_no_rounding() -> None:
    one, half = encode(np.array([1.0]), E8M15).astype(np.uint32), encode(np.array([0.5]), E8M15).astype(np.uint32)
    out, _ = alu(e8m15.VMUL, Lanes(one, np.zeros(1)), Lanes(half, np.zeros(1)), None)
    assert out.err[0] == 0.0
    third = encode(np.array([1 / 3]), E8M15).astype(np.uint32)
    out, _ = alu(e8m15.VMUL, Lanes(third, np.zeros(1)), Lanes(third, np.zeros(1)), None)
    assert 0.0 < out.err[0] <= rules.ue(np.array([1 / 9]))[0]


def test_a_compare_within_the_errors_may_flip_and_the_selection_pays_for_it() -> None:
    a, b = np.array([1.0, 1.0]), np.array([1.001, 3.0])
    maybe = rules.unsure(a, np.array([0.01, 0.01]), b, np.array([0.0, 0.0]))
    assert maybe.tolist() == [True, False]
    err = rules.flip(np.array([5.0, 5.0]), np.array([0.1, 0.1]), np.array([7.0, 7.0]), np.array([0.2, 0.2]), maybe)
    assert err.tolist() == [0.2 + 2.0, 0.1]


def test_an_extreme_whose_winner_is_certain_keeps_only_its_error() -> None:
    e = rules.extreme(np.array([-60000.0, 1.0]), np.array([9.0, 0.5]), np.array([3.0, 1.2]), np.array([0.4, 0.4]),
                      larger=True)
    assert e.tolist() == [0.4, 0.5]


def test_an_uncertain_input_outside_a_domain_is_unbounded() -> None:
    bits = encode(np.array([0.5]), E8M15).astype(np.uint32)
    out, _ = alu(e8m15.VINV, Lanes(bits, np.array([0.6])), None, None)
    assert np.isinf(out.err[0])


def test_the_tree_sum_covers_the_exact_sum() -> None:
    rng = np.random.default_rng(RNG_SEED)
    exact = rng.uniform(-3.0, 3.0, 128)
    lanes = _machine(rng, exact, 1e-3)
    top = reduce(RedKind.SUM, lanes, 128)
    assert abs(top.value[0] - np.add.reduce(exact)) <= top.err[0] + 1e-12
    with pytest.raises(rules.BoundError, match="VRED.SUMSQ"):
        reduce(RedKind.SUMSQ, lanes, 128)


def _random_lanes(rng: np.random.Generator, n: int) -> np.ndarray:
    """FP16 patterns (n, 4, 32): per lane a random binade span, subnormals, zeros and a lone large peak."""
    exp = rng.integers(-24, 16, size=(n, 4, 1)).astype(np.float64)
    spread = rng.integers(0, 12, size=(n, 4, 1))
    mags = 2.0 ** (exp - rng.uniform(0, 1, (n, 4, 32)) * spread)
    vals = mags * rng.choice([-1.0, 1.0], size=(n, 4, 32))
    vals[rng.random((n, 4, 32)) < 0.05] = 0.0
    lone = rng.random(n) < 0.2
    vals[lone, 0, 3] *= 64.0
    return np.clip(vals, -65504, 65504).astype(np.float16).view(np.uint16)


def test_the_mxfp7_rule_bounds_the_quantiser() -> None:
    rng = np.random.default_rng(7)
    h = _random_lanes(rng, 20_000)
    q, scale = mxfp7.quantise(h)
    sexp, sm = mxfp7.scale_fields(scale)
    step = (2.0 ** sexp * sm / 8.0)[..., None]
    err = np.abs(q.astype(np.float64) * step - h.view(np.float16).astype(np.float64))
    ratio = err / (rules.QUANT_STEPS * step)
    assert np.all(ratio <= 1.0), f"worst error {np.max(ratio):.3f} of the rule"
    assert np.max(ratio) > 0.9  # the rule is not vacuous


def test_a_held_fill_response_keeps_its_own_errors() -> None:
    """A MEM_RD_RESP that arrives before its FILL (held, units.md C.3) is applied later, with the errors it
    arrived with, not those of whatever flit was delivered last."""
    from models.bundle.bound.cluster import BoundCluster
    from models.cluster import isa
    from models.cu.base import cu_inst
    from models.noc.flit import FlitType, make_flit

    unit, mag, agent = (1, 1), (0, 1), (1, 0)
    core = BoundCluster(unit, mag)
    held = np.stack([np.full((4, 32), 7.0), np.full((4, 32), 0.5), np.full((4, 32), 0.25), np.full((4, 32), 0.01)])
    for w in range(4):
        core.inbound = held
        core.take(make_flit(unit, mag, FlitType.MEM_RD_RESP, 5, int(w == 3), 0x11 * (w + 1), rsvd=w))
    assert core.held
    core.inbound = None  # the instruction carries no data
    core.take(cu_inst(unit, agent, 0x40, 1, isa.fill(0x400, 1, 1, eoff=5)))
    key = (int(isa.Buf.L1B), 5)
    assert core.fill is None and np.array_equal(core.l1_planes[key], held)  # the entry's shadow, as it arrived


def test_the_fast_e8m15_decode_is_the_format_decode_on_every_pattern() -> None:
    """rules.e8 (float32 by a shift) against models.numerics.formats.decode on all 2^24 patterns: the same
    value, the same sign of zero, NaN where it is NaN."""
    from models.bundle.bound.rules import e8
    from models.numerics.formats import E8M15, decode

    bits = np.arange(1 << 24, dtype=np.int64)
    ref, fast = decode(bits, E8M15), e8(bits)
    same = ((ref == fast) & (np.signbit(ref) == np.signbit(fast))) | (np.isnan(ref) & np.isnan(fast))
    assert np.all(same), bits[~same][:5]

