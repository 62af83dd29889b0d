"""RTL vs model, bit for bit: the memory agent's QUANT block (rtl/mag/mag_quant.v) through Icarus.

Writes the entries to sim_build/unit/mag_quant_tb_<op>/vin.hex, builds the
pure-Verilog bench rtl/bench/mag_quant_tb.v (tb/lib/verilog_vectors.py), runs it
with vvp and compares every output bit with models/numerics/mxfp7.py, which
tests/unit/numerics/test_mxfp7.py holds to the spec's text. Entries: 10,000 drawn by
tb/mag/mxfp7_stim.py (every kind of lane M.3 distinguishes) plus 8,192 whose
lanes take every 15-bit magnitude once as their peak, each in a random
packing; the element rule alone under random scale bytes and every FP16
pattern under a few. No cocotb.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from models.numerics import mxfp7
from tb.mag.mxfp7_stim import peak_sweep_entries, random_entries
from tb.lib.verilog_vectors import VerilogVectors

ROOT = Path(__file__).resolve().parents[3]
OPS = {"entry": (0, 2049, 1024), "element": (1, 24, 7)}
BENCH = VerilogVectors(ROOT / "rtl" / "bench" / "mag_quant_tb.v", "mag_quant_tb", ROOT / "rtl" / "mag", OPS,
                    ROOT / "sim_build" / "unit")


def _entry_int(words: np.ndarray) -> int:
    """Four big-endian response words (4, 32) -> the block's 1024-bit output, word w at [256w +: 256]."""
    return sum(int.from_bytes(words[w].tobytes(), "big") << (256 * w) for w in range(4))


def _first_mismatches(what: str, inputs: list[int], got: list[int | None], want: list[int], n: int = 3) -> str:
    bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
    lines = [f"{what}: {len(bad)} of {len(want)} vectors differ"]
    for i in bad[:n]:
        g = "x/z" if got[i] is None else f"{got[i]:x}"
        lines.append(f"  vector {i}: in {inputs[i]:x}\n    rtl   {g}\n    model {want[i]:x}")
    return "\n".join(lines)


def test_entries_rtl_equals_model() -> None:
    rng = np.random.default_rng(20250602)
    entries = np.concatenate([random_entries(rng, 10_000), peak_sweep_entries(rng)])
    blayout = rng.integers(0, 2, len(entries)).astype(bool)
    words = mxfp7.quantise_entries(entries, blayout)
    vin = [int(b) << 2048 | int.from_bytes(e.tobytes(), "little") for e, b in zip(entries, blayout)]
    want = [_entry_int(w) for w in words]
    got = BENCH.run("entry", vin)
    assert got == want, _first_mismatches("QUANT entries", vin, got, want)
    assert len(want) >= 10_000


def test_element_rule_rtl_equals_model() -> None:
    rng = np.random.default_rng(7)
    h = np.concatenate([rng.integers(0, 1 << 16, 40_000), np.tile(np.arange(1 << 16), 4)])
    scale = np.concatenate([rng.integers(0, 256, 40_000), np.repeat([0x00, 0x71, 0xA0, 0xFD], 1 << 16)])
    want = (mxfp7.quantise_elements(h, scale).astype(np.int64) & 0x7F).tolist()
    vin = [int(a) << 8 | int(b) for a, b in zip(h, scale)]
    got = BENCH.run("element", vin)
    assert got == want, _first_mismatches("element rule", vin, got, want)


def test_the_comparison_sees_a_wrong_word() -> None:
    """The entry comparison is exact: one flipped bit in one word is a reported mismatch."""
    rng = np.random.default_rng(1)
    entries = random_entries(rng, 3)
    words = mxfp7.quantise_entries(entries, False)
    want = [_entry_int(w) for w in words]
    got: list[int | None] = list(want)
    got[1] = want[1] ^ (1 << 700)
    assert got != want and "1 of 3 vectors differ" in _first_mismatches("x", [0, 0, 0], got, want)
