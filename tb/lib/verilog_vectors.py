"""Drive a pure-Verilog vector bench (rtl/bench/*_tb.v on rtl/bench/vector_bench.vh).

Unit-level proof that an arithmetic block equals its Python model: write the
input vectors to vin.hex, elaborate the bench with the block selected by OP,
run it with vvp (no cocotb: one process, no per-vector round trip), read
vout.hex back. A word with x or z bits reads as None, so a checker such as
models.numerics.reference.bit_mismatches reports it as a mismatch.
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

UNIT_TB_DIR = Path(__file__).resolve().parents[2] / "rtl" / "bench"


def read_hex_words(text: str) -> list[int | None]:
    """The words of a $writememh file (address lines and comments skipped; x/z -> None)."""
    words: list[int | None] = []
    for line in text.splitlines():
        line = line.split("//")[0].strip()
        if not line or line.startswith("@"):
            continue
        try:
            words.append(int(line, 16))
        except ValueError:
            words.append(None)
    return words


@dataclass(frozen=True)
class VerilogVectors:
    """One vector bench: its file and top, the RTL library it elaborates, its OP table."""

    tb_file: Path
    top: str
    rtl_dir: Path
    ops: Mapping[str, tuple[int, int, int]]  # op name -> (OP parameter, input bits, output bits)
    build_root: Path
    lib_dirs: tuple[Path, ...] = ()  # further -y library folders (rtl/vector for vc_alu)

    def run(self, op: str, vectors: Iterable[int], tag: str = "") -> list[int | None]:
        """Apply `vectors` to block `op`; return its outputs, one per vector."""
        code, in_w, out_w = self.ops[op]
        vectors = [int(v) for v in vectors]
        d = self.build_root / f"{self.top}_{op}{tag}"
        d.mkdir(parents=True, exist_ok=True)
        digits = (in_w + 3) // 4
        (d / "vin.hex").write_text("".join(f"{v:0{digits}x}\n" for v in vectors))
        out = d / "vout.hex"
        if out.exists():
            out.unlink()
        t = self.top
        # -I rtl_dir: blocks may include headers of their library (rtl/ahbm/fp32/fp32_lib.vh)
        libs = [a for lib in (self.rtl_dir, *self.lib_dirs) for a in ("-y", str(lib))]
        build = ["iverilog", "-g2012", "-o", str(d / "sim.vvp"), "-s", t, *libs,
                 "-I", str(self.rtl_dir), "-I", str(UNIT_TB_DIR), f"-P{t}.OP={code}", f"-P{t}.IN_W={in_w}",
                 f"-P{t}.OUT_W={out_w}", f"-P{t}.N={len(vectors)}", str(self.tb_file)]
        proc = subprocess.run(build, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, f"iverilog failed for {op}:\n{proc.stderr}"
        proc = subprocess.run(["vvp", "-n", "sim.vvp"], cwd=d, capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0 and out.exists(), f"vvp failed for {op}:\n{proc.stdout}\n{proc.stderr}"
        return read_hex_words(out.read_text())
