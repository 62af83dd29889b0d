"""float64 references and the checkers that compare model or RTL output with them.

Two kinds of checker, each returning a list of human-readable failures (empty
means pass) so a test can print the first few:

* :func:`bit_mismatches` - exact, pattern for pattern (model vs RTL);
* :func:`ulp_failures` - tolerance against a float64 reference, in units in the
  last place of the output format at the reference value (:func:`ulp_error`).
"""

from __future__ import annotations

import numpy as np

from .formats import Format, decode


def ulp(ref, fmt: Format) -> np.ndarray:
    """Spacing of ``fmt`` at |ref| (the spacing at the smallest normal below it)."""
    r = np.abs(np.asarray(ref, np.float64))
    _, e = np.frexp(np.where(np.isfinite(r) & (r > 0), r, 1.0))
    e = np.maximum(e.astype(np.int64) - 1, fmt.emin)
    return np.ldexp(1.0, (e - fmt.man_bits).astype(np.int32))


def ulp_error(bits, fmt: Format, ref) -> np.ndarray:
    """|value(bits) - ref| in ulps of ``fmt`` at ref; 0 for equal infinities or both NaN."""
    got = decode(bits, fmt)
    ref = np.asarray(ref, np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.abs(got - ref) / ulp(ref, fmt)
    same = (got == ref) | (np.isnan(got) & np.isnan(ref))
    return np.where(same, 0.0, np.where(np.isnan(err), np.inf, err))


def ulp_failures(bits, fmt: Format, ref, max_ulps: float, inputs=None, limit: int = 10) -> list[str]:
    """Elements whose error exceeds ``max_ulps`` (inputs, if given, are named in the message)."""
    err = ulp_error(bits, fmt, ref)
    bad = np.flatnonzero(~(err.reshape(-1) <= max_ulps))
    b = np.asarray(bits).reshape(-1)
    r = np.asarray(ref, np.float64).reshape(-1)
    inp = None if inputs is None else np.asarray(inputs).reshape(-1)
    out = []
    for i in bad[:limit]:
        where = f"input {int(inp[i]):#x}" if inp is not None else f"element {i}"
        out.append(f"{where}: got {int(b[i]):#x} ({decode(b[i], fmt)!r}) ref {r[i]!r}: "
                   f"{err.reshape(-1)[i]:.3f} ulp > {max_ulps}")
    if len(bad) > limit:
        out.append(f"... {len(bad) - limit} more")
    return out


def bit_mismatches(expected, got, inputs=None, limit: int = 10, what: str = "") -> list[str]:
    """Exact pattern comparison; a length difference is itself a mismatch."""
    e = [int(v) for v in np.asarray(expected, dtype=object).reshape(-1)]
    g = [None if v is None else int(v) for v in np.asarray(got, dtype=object).reshape(-1)]
    out = []
    if len(e) != len(g):
        out.append(f"{what}: {len(g)} results for {len(e)} vectors")
    bad = [i for i in range(min(len(e), len(g))) if e[i] != g[i]]
    inp = None if inputs is None else list(inputs)
    for i in bad[:limit]:
        src = f" input {int(inp[i]):#x}" if inp is not None else ""
        gv = "x/z" if g[i] is None else f"{g[i]:#x}"
        out.append(f"{what} vector {i}{src}: expected {e[i]:#x}, got {gv}")
    if len(bad) > limit:
        out.append(f"{what}: ... {len(bad) - limit} more mismatches")
    return out


def exp2_ref(x) -> np.ndarray:
    with np.errstate(over="ignore"):
        return np.exp2(np.asarray(x, np.float64))


def inv_ref(x) -> np.ndarray:
    with np.errstate(divide="ignore"):
        return 1.0 / np.asarray(x, np.float64)
