"""The AHBM composite arithmetic as a compiled VPI module on Icarus (rtl/ahbm/vpi/ahbm_arith.c).

Why: Icarus interprets rtl/ahbm/fp32/fp32_lib.vh's functions at 1-2 us a call, and an ATTN_TILE's
S2 / S6 are ROWS x KEYS x D multiply-adds each; the C twins of pe_arith.vh's stages (same operations,
same order, same arrays, same edge) make the AHBM benches several times faster on Icarus and change no bit
and no cycle (docs/ahbm.md, "Speed on Icarus"). Verilator keeps the Verilog loops (it compiles them).

An Icarus build of a bench that holds pe_engine compiles the module into its build folder (under the
folder's build lock, keyed by the C source's digest), and adds `-L<folder> -m<module>` (iverilog records
the module in the .vvp, so vvp loads it with no option of its own) and the define AHBM_ARITH_VPI, which
makes pe_arith.vh call the twins. Without a C compiler the build goes on without them: the same
results, at the old speed, and one line that says so. AGSIM_ARITH_VPI=0 builds without them on purpose
(to time the Verilog arithmetic, or to rule the module out).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from tb.run.benches import ROOT
from tb.run.content_hash import files_digest

SOURCE = ROOT / "rtl" / "ahbm" / "vpi" / "ahbm_arith.c"
DEFINE = "AHBM_ARITH_VPI"
# the RTL file whose arithmetic the module serves (pe_arith.vh is included there)
USER = "rtl/ahbm/pe/pe_engine.v"
# -ffp-contract=off: a multiply and an add stay two roundings where the machine has a fused multiply-add
EXTRA_CFLAGS: tuple[str, ...] = ("-ffp-contract=off", "-fno-fast-math")
OFF_ENV = "AGSIM_ARITH_VPI"  # =0: the Verilog arithmetic on Icarus too


@dataclass(frozen=True)
class ArithVpi:
    """What a build adds for the module: iverilog options, Verilog defines, and the stamp's words."""

    args: tuple[str, ...] = ()
    defines: tuple[tuple[str, object], ...] = ()
    stamp: str = ""  # the module's digest ("" without the module): a change rebuilds the bench
    note: str = ""   # why the module is not used, when it is wanted and cannot be built


def wanted(sim: str, sources: tuple[str, ...] | list[str]) -> bool:
    """Icarus and a bench whose sources hold the composite engine, unless AGSIM_ARITH_VPI=0 (any other value
    than 0 or 1 is refused, naming it)."""
    off = os.environ.get(OFF_ENV, "1")
    if off not in ("0", "1"):
        raise ValueError(f"{OFF_ENV}={off!r}: use 1 (the compiled arithmetic on Icarus, the default) or 0 (the Verilog)")
    return off == "1" and sim == "icarus" and any(str(s).endswith(USER) for s in sources)


def compile_command(out: Path) -> list[str] | None:
    """The C compiler's command that builds the module into `out`, or None without a compiler or iverilog-vpi."""
    cc = shutil.which(os.environ.get("CC", "cc"))
    ivpi = shutil.which("iverilog-vpi")
    if not cc or not ivpi:
        return None

    def flags(kind: str) -> list[str]:
        return subprocess.run([ivpi, kind], capture_output=True, text=True, check=True).stdout.split()

    return [cc, *flags("--cflags"), *EXTRA_CFLAGS, "-o", str(out), str(SOURCE), *flags("--ldflags"),
            *flags("--ldlibs")]


def build_module(folder: Path) -> tuple[Path | None, str]:
    """The module for the current source in `folder` (compiled when missing), or (None, why not)."""
    digest = files_digest([SOURCE])[:16]
    out = folder / f"ahbm_arith_{digest}.vpi"
    if out.exists():
        return out, digest
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{out.name}.{os.getpid()}.tmp"
    try:
        cmd = compile_command(tmp)
    except (OSError, subprocess.CalledProcessError) as exc:
        return None, f"iverilog-vpi failed ({exc})"
    if cmd is None:
        return None, "no C compiler (cc) or no iverilog-vpi: install gcc (tools/bootstrap.sh does, as root)"
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        tmp.unlink(missing_ok=True)
        first = (proc.stderr.strip().splitlines() or ["?"])[0]
        return None, f"compiling {SOURCE.relative_to(ROOT)} failed: {first}"
    os.replace(tmp, out)
    for old in folder.glob("ahbm_arith_*.vpi"):  # an older source's module
        if old != out:
            old.unlink(missing_ok=True)
    return out, digest


def for_build(sim: str, sources: tuple[str, ...] | list[str], build_dir: Path) -> ArithVpi:
    """The module's part of a bench build in `build_dir` (nothing unless `wanted`)."""
    if not wanted(sim, sources):
        return ArithVpi()
    module, digest = build_module(build_dir)
    if module is None:
        return ArithVpi(note=f"AHBM arithmetic on Icarus without its compiled twins (slow, same results): {digest}")
    return ArithVpi(args=(f"-L{module.parent.resolve()}", f"-m{module.stem}"), defines=((DEFINE, 1),), stamp=digest)


__all__ = ["DEFINE", "OFF_ENV", "SOURCE", "ArithVpi", "build_module", "compile_command", "for_build", "wanted"]
