"""The AHBM arithmetic's compiled twins (rtl/ahbm/vpi/ahbm_arith.c) against the Verilog, bit for bit, on Icarus.

On Icarus the AHBM benches compute pe_arith.vh's stages with these C functions (tb/run/arith_vpi.py), on
Verilator with the Verilog loops and fp32_lib.vh; the benches judge both against the Python model, and these
tests hold the C to the Verilog directly, where a bench's data would never reach:

* every elementary function (+ - * / max exp, the bf16 conversions; and the streamed MERGE's
  x*y + z*w, on the operands and their halves crossed) on the operands test_ahbm_arith_rtl.py
  proves the Verilog functions on (signed zeros, subnormals, inf, NaNs, overflow and underflow edges,
  rounding ties, the exp range ends and rint ties, random patterns), the Verilog function and its twin
  called side by side in one run (rtl/bench/ahbm_arith_vpi_tb.v);
* every stage (S2, S3+S4 with and without the mask, S6, MERGE of two sets and of a set with itself, a
  streamed MERGE and an IPCQ_POP of a packet word by word, NORM_STORE's staging, zero l rows included,
  INIT) on random tiles sprinkled with NaN, inf, subnormal and zero operands, run once with the twins and
  once with the loops (rtl/bench/ahbm_stage_tb.v): every array the stages write must be the same word for
  word;
* an x operand word: the twin leaves the stage to the loop (the streamed MERGE's O element to the
  functions), so both runs give the same words again.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from tb.lib.verilog_vectors import read_hex_words
from tb.run import arith_vpi
from tests.unit.ahbm.test_ahbm_arith_rtl import F32_EDGE, div_stimulus, exp_vectors, pair_stimulus

ROOT = Path(__file__).resolve().parents[3]
BUILD = ROOT / "sim_build" / "unit" / "ahbm_arith_vpi"
INCLUDES = ("rtl/ahbm/fp32", "rtl/ahbm/pe", "rtl/bench")
OPS = ("add", "sub", "mul", "div", "max", "exp", "to_bf16", "bf16_to_f32", "mac2")
STAGE_ARRAYS = ("sp", "st_m", "st_l", "st_o", "obuf", "mea", "meb")
STAGES = 13  # the dumps rtl/bench/ahbm_stage_tb.v writes


@pytest.fixture(scope="module")
def module() -> Path:
    """The twins' VPI module, built as a bench build would build it."""
    out, why = arith_vpi.build_module(BUILD)
    assert out is not None, why
    return out


def _iverilog(out: Path, top: str, tb: str, module: Path | None, *args: str) -> None:
    load = [f"-L{module.parent}", f"-m{module.stem}", f"-D{arith_vpi.DEFINE}"] if module else []
    cmd = ["iverilog", "-g2012", "-o", str(out), "-s", top, *[f"-I{ROOT / i}" for i in INCLUDES], *load, *args,
           str(ROOT / "rtl" / "bench" / tb)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, f"iverilog failed:\n{proc.stderr}"


def _vvp(folder: Path, *plusargs: str) -> str:
    proc = subprocess.run(["vvp", "-n", "sim.vvp", *plusargs], cwd=folder, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0, f"vvp failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


# ------------------------------------------------------------------ elementary functions

def pair_mismatches(words: list[int | None], a: np.ndarray, b: np.ndarray, limit: int = 8) -> list[str]:
    """Each (Verilog, twin) pair of vout.hex that differs (an x/z word differs from everything), named."""
    width = 2 * len(OPS)
    out = []
    if len(words) != width * len(a):
        out.append(f"{len(words)} words for {len(a)} vectors of {width}")
    for i in range(min(len(a), len(words) // width)):
        for k, op in enumerate(OPS):
            ver, twin = words[width * i + 2 * k], words[width * i + 2 * k + 1]
            if ver is None or twin is None or ver != twin:
                show = (lambda w: "x/z" if w is None else f"{w:#010x}")
                out.append(f"{op}({int(a[i]):#010x}, {int(b[i]):#010x}): Verilog {show(ver)}, C {show(twin)}")
                if len(out) >= limit:
                    return out
    return out


def _operands() -> tuple[np.ndarray, np.ndarray]:
    """The operand pairs of test_ahbm_arith_rtl.py's add/sub/mul/max and div tests, and its exp operands
    (as a, with b a random pattern), all masked to 32 bits."""
    _, a0, b0 = pair_stimulus(21, 12000, 26)
    a1, b1 = div_stimulus()
    x = exp_vectors()
    r = np.random.default_rng(4_242)
    a = np.concatenate([a0, a1, x]) & 0xFFFFFFFF
    b = np.concatenate([b0, b1, r.integers(0, 1 << 32, x.size, dtype=np.int64)]) & 0xFFFFFFFF
    return a, b


def test_functions_equal_their_twins(module: Path) -> None:
    a, b = _operands()
    d = BUILD / "ops"
    d.mkdir(parents=True, exist_ok=True)
    (d / "vin.hex").write_text("".join(f"{int(x):08x}{int(y):08x}\n" for x, y in zip(a, b)))
    _iverilog(d / "sim.vvp", "ahbm_arith_vpi_tb", "ahbm_arith_vpi_tb.v", module, f"-Pahbm_arith_vpi_tb.N={a.size}")
    _vvp(d)
    words = read_hex_words((d / "vout.hex").read_text())
    bad = pair_mismatches(words, a, b)
    assert not bad, "\n".join(bad)
    assert a.size > 60_000 and np.isin(F32_EDGE, a).all()  # the edge set is all there


def test_pair_checker_catches_a_wrong_word() -> None:
    a, b = np.array([0x3F800000]), np.array([0x40000000])
    good = [0x40400000, 0x40400000] + [0] * (2 * len(OPS) - 2)
    assert pair_mismatches(good, a, b) == []
    for i, wrong in ((1, 0x40400001), (6, None)):
        words = list(good)
        words[i] = wrong
        assert pair_mismatches(words, a, b), f"word {i} = {wrong} not caught"
    assert pair_mismatches(good[:-1], a, b)


# ------------------------------------------------------------------ the stages

D, MAXROWS, MAXKEYS, NSLOT = 32, 8, 16, 3
SPECIALS_F32 = np.array([0x7FC00000, 0x7F800000, 0xFF800000, 0x00000001, 0x80000000, 0x00000000, 0x007FFFFF],
                        dtype=np.int64)
SPECIALS_BF16 = np.array([0x7FC0, 0x7F80, 0xFF80, 0x0001, 0x8000, 0x0000, 0x007F, 0x8081], dtype=np.int64)


def _bf16(r: np.random.Generator, n: int, specials: float) -> np.ndarray:
    """bf16 patterns of moderate size (exponents 120..131), a share of them replaced by special values."""
    h = (r.integers(0, 2, n) << 15) | (r.integers(120, 132, n) << 7) | r.integers(0, 128, n)
    pick = r.random(n) < specials
    return np.where(pick, r.choice(SPECIALS_BF16, n), h)


def _f32(r: np.random.Generator, n: int, lo: int, hi: int, specials: float, sign: bool = True) -> np.ndarray:
    x = ((r.integers(0, 2, n) << 31) if sign else 0) | (r.integers(lo, hi + 1, n) << 23) | r.integers(0, 1 << 23, n)
    pick = r.random(n) < specials
    return np.where(pick, r.choice(SPECIALS_F32, n), x)


def stage_inputs(seed: int, specials: float) -> dict[str, np.ndarray]:
    """pe_engine's input arrays: tiles, Q, mask and state sets; some rows start as INIT leaves them (m = -inf,
    l = 0, O = 0), some l are zero (NORM_STORE's +0 rows)."""
    r = np.random.default_rng(seed)
    st_m = _f32(r, 8 * MAXROWS, 120, 132, specials)
    st_l = _f32(r, 8 * MAXROWS, 120, 135, specials, sign=False)
    st_o = _f32(r, 8 * MAXROWS * D, 110, 135, specials)
    init = r.random(8 * MAXROWS) < 0.25
    st_m[init], st_l[init] = 0xFF800000, 0
    st_o.reshape(8 * MAXROWS, D)[init] = 0
    st_l[r.random(8 * MAXROWS) < 0.1] = 0x80000000
    mask = np.where(r.random(NSLOT * MAXROWS * 128) < 0.3, 0xFF80, _bf16(r, NSLOT * MAXROWS * 128, specials))
    return {"qbuf": _bf16(r, 4 * MAXROWS * D, specials), "kbuf": _bf16(r, NSLOT * MAXKEYS * D, specials),
            "vbuf": _bf16(r, NSLOT * MAXKEYS * D, specials), "mbuf": mask, "st_m": st_m, "st_l": st_l,
            "st_o": st_o}


def run_stages(folder: Path, module: Path | None, inputs: dict[str, np.ndarray], rows: int, keys: int,
               *plusargs: str) -> dict[str, str]:
    """Build rtl/bench/ahbm_stage_tb.v (with the twins when `module`), run it, return every dump's text."""
    folder.mkdir(parents=True, exist_ok=True)
    for old in folder.glob("out*.hex"):
        old.unlink()
    for name, words in inputs.items():
        digits = 4 if name in ("qbuf", "kbuf", "vbuf", "mbuf") else 8
        (folder / f"in.{name}.hex").write_text("".join(f"{int(w):0{digits}x}\n" for w in words))
    t = "ahbm_stage_tb"
    _iverilog(folder / "sim.vvp", t, "ahbm_stage_tb.v", module, f"-P{t}.D={D}", f"-P{t}.MAXROWS={MAXROWS}",
              f"-P{t}.MAXKEYS={MAXKEYS}", f"-P{t}.ROWS={rows}", f"-P{t}.KEYS={keys}")
    log = _vvp(folder, *plusargs)
    assert log.count("stage ") == STAGES, log
    return {f"{n}.{a}": (folder / f"out{n}.{a}.hex").read_text() for n in range(STAGES) for a in STAGE_ARRAYS}


def dump_differences(loops: dict[str, str], twins: dict[str, str], limit: int = 8) -> list[str]:
    """The dumps whose words differ between the two runs, with the first differing word of each."""
    out = []
    for name in sorted(set(loops) | set(twins)):
        a = read_hex_words(loops.get(name, ""))
        b = read_hex_words(twins.get(name, ""))
        if a != b:
            i = next((k for k in range(min(len(a), len(b))) if a[k] != b[k]), min(len(a), len(b)))
            out.append(f"stage dump {name}: word {i}: loops {a[i] if i < len(a) else 'none'}, "
                       f"twins {b[i] if i < len(b) else 'none'}")
            if len(out) >= limit:
                break
    return out


@pytest.mark.parametrize("seed,specials,rows,keys", [(1, 0.0, 8, 16), (2, 0.03, 8, 16), (3, 0.1, 5, 11),
                                                     (4, 0.01, 1, 1)])
def test_stages_equal_their_twins(module: Path, seed: int, specials: float, rows: int, keys: int) -> None:
    inputs = stage_inputs(seed, specials)
    loops = run_stages(BUILD / f"stages{seed}_loops", None, inputs, rows, keys)
    twins = run_stages(BUILD / f"stages{seed}_twins", module, inputs, rows, keys)
    bad = dump_differences(loops, twins)
    assert not bad, "\n".join(bad)
    # the stages computed numbers, not x: the comparison is not between two empty runs
    final = read_hex_words(twins["10.obuf"])[: rows * D]
    assert all(w is not None for w in final) and any(w for w in final)


def test_x_operand_leaves_the_stage_to_the_loop(module: Path) -> None:
    inputs = stage_inputs(5, 0.0)
    xk = MAXKEYS * D + 7  # K slot 1, key 0: the first S2 reads it
    xo = 4 * MAXROWS * D + 3  # set 4, row 0, element 3: the streamed MERGE's target
    xc = 7 * MAXROWS * D + 2 * D + 5  # set 7, row 2, element 5: a word of the packet it merges
    args = (f"+xk={xk}", f"+xo={xo}", f"+xc={xc}")
    loops = run_stages(BUILD / "stagesx_loops", None, inputs, 8, 16, *args)
    twins = run_stages(BUILD / "stagesx_twins", module, inputs, 8, 16, *args)
    assert not dump_differences(loops, twins)
    # the merged O word was x going in: the functions' result, and the other elements numbers
    merged = read_hex_words(twins["8.st_o"])
    assert merged[xo + 1] is not None and merged[xo - 1] is not None
    # the loop's S2 takes the x word through fp32_lib.vh's branches to a number; a twin that had used the word's
    # bits (0xFFFF, a bf16 NaN) would have made row 0's score of key 0 the NaN
    assert read_hex_words(twins["0.sp"])[0] not in (None, 0x7FC00000)


def test_dump_checker_catches_a_wrong_word() -> None:
    same = {"0.sp": "3f800000\n00000001\n"}
    assert dump_differences(same, dict(same)) == []
    assert dump_differences(same, {"0.sp": "3f800000\n00000002\n"})
    assert dump_differences(same, {"0.sp": "3f800000\nxxxxxxxx\n"})
    assert dump_differences(same, {"0.sp": "3f800000\n"})
