"""The house rules measured from the code itself: file lengths, clocked-process lengths, import circles.

`python -m tb.run.house` prints the three measurements; tests/unit/run/test_house.py holds the rules:

* a source file (Python or Verilog) past FILE_LINES lines has a stated reason in LONG_FILES, and every
  reason there still names a file past the limit (a file split below it drops its reason);
* no clocked process (`always @(posedge ...)`, `always_ff`) is longer than PROCESS_LINES lines;
* no two modules of the product (models, tb) import each other, directly or through others (imports inside
  functions count: a lazy import hides a circle from the interpreter, not from a reader); the graph is
  grimp's.

Why: a file or process a reader cannot hold in one view is where the next bug hides; a circle means two
modules are one concern split badly. The limits are the style guide's (guides/style.md: ~500 lines a file,
~150 a process); the measurement reads text and imports, so it runs in the unit tests without a simulator.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Sequence

import grimp

ROOT = Path(__file__).resolve().parents[2]
FILE_LINES = 500
PROCESS_LINES = 150
PY_ROOTS = ("models", "tb", "tests", "tools")  # where Python sources are measured for length
PY_PACKAGES = ("models", "tb")  # the product, whose imports are measured for circles
RTL_ROOT = "rtl"
VERILOG_SUFFIXES = (".v", ".vh", ".sv")

# Files past FILE_LINES, and why they stay whole.
LONG_FILES: dict[str, str] = {
    "rtl/vector/vc_exec.v":
        "the vector core's architectural state (IMEM, L1, V, S, P, descriptors) and the processes that write it, "
        "each register by exactly one of six processes (longest 69 lines); its decoder and sub-blocks (walk, "
        "transfer, lanes, reduction, timing, hazard reports) are modules of their own; a module boundary inside "
        "the rest would have to carry the register file through ports",
    "rtl/cluster/cluster_cu.v":
        "the cluster's storage (L1A, L1B, the accumulator) and the four processes that write it (receive, "
        "accumulator engine, send register, sequencer; longest 74 lines); FILL, the receiver, the sweep, the drain "
        "queue, the write port, the MAC, the emit and the monitor are modules of their own",
    "rtl/ahbm/fp32/fp32_lib.vh":
        "the PE's fp32/bf16 numerics as Verilog functions (add, sub, mul, div, max, exp, bf16 conversions), bit "
        "for bit as models/ahbm/numerics.py, one library included in each computing module; each function is "
        "declared twice (static for Icarus' speed, automatic and not inlined for Verilator's), and the header "
        "states the include contract, the special values and the measured speed once",
    "rtl/ahbm/pe/pe_engine.v":
        "the PE engine: one command's stages and its timing model as one combinational decision and its "
        "registers; the command queue, front-end, links, faults and counters are modules of their own",
    "tb/system/test_mm_mesh_sys.py":
        "the mm_mesh_sys bench's cocotb module: a bench runs one module, and its seven tests (scenarios 3, 7a-7e "
        "and the reference epilogue) are its cases; what they share is tb/system/mm_mesh_case.py",
    "tb/ahbm/test_pe.py":
        "the pe bench's cocotb module: a bench runs one module, and its tests are the composite bit exact, one "
        "ADR §8 feature each, the kernel commands, the faults and monitors; what they share is tb/ahbm/pe_bench.py",
    "tb/mag/test_mag.py":
        "the mag bench's cocotb module: a bench runs one module, and its tests are one service, monitor or timing "
        "fact each; what they share is tb/mag/bench.py",
    "tests/unit/numerics/test_arith_rtl.py":
        "the arithmetic RTL of the cluster and the vector core against the models, one test per unit or chain "
        "(exhaustive where the input space allows) and the checker's own corruption test; the drivers are at its top",
    "tests/unit/ahbm/test_ahbm_arith_rtl.py":
        "the PE's fp32/bf16 RTL functions against models/ahbm/numerics.py, one test per function or chain "
        "(exhaustive where the input space allows) and the checker's own corruption test",
}


def line_count(path: Path) -> int:
    return len(path.read_text(errors="replace").splitlines())


def source_files(root: Path = ROOT) -> list[Path]:
    """Every Python and Verilog source of the project (not .venv, not build folders)."""
    out = [p for r in PY_ROOTS for p in (root / r).rglob("*.py")]
    out += [p for p in (root / RTL_ROOT).rglob("*") if p.suffix in VERILOG_SUFFIXES]
    return sorted(out)


def long_files(root: Path = ROOT, limit: int = FILE_LINES) -> dict[str, int]:
    """{path relative to root: lines} of every source past `limit`."""
    return {str(p.relative_to(root)): n for p in source_files(root) if (n := line_count(p)) > limit}


_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_CLOCKED = re.compile(r"\balways\s*@\s*\(\s*(posedge|negedge)\b|\balways_ff\b")


def clocked_processes(text: str) -> list[tuple[int, int]]:
    """(first line, lines) of every clocked process in Verilog text, its extent found by begin/end nesting
    (strings and // comments are not read; a process without begin ends at its first semicolon)."""
    lines = [_STRING.sub('""', re.sub(r"//.*", "", ln)) for ln in text.splitlines()]
    out: list[tuple[int, int]] = []
    i = 0
    while i < len(lines):
        if not _CLOCKED.search(lines[i]):
            i += 1
            continue
        depth, opened, j = 0, False, i
        while j < len(lines):
            depth += len(re.findall(r"\bbegin\b", lines[j])) - len(re.findall(r"\bend\b", lines[j]))
            opened = opened or bool(re.search(r"\bbegin\b", lines[j]))
            if (opened and depth <= 0) or (not opened and lines[j].rstrip().endswith(";")):
                break
            j += 1
        out.append((i + 1, j - i + 1))
        i = j + 1
    return out


def long_processes(root: Path = ROOT, limit: int = PROCESS_LINES) -> dict[str, int]:
    """{"path:line": lines} of every clocked process longer than `limit`."""
    out: dict[str, int] = {}
    for p in source_files(root):
        if p.suffix in VERILOG_SUFFIXES:
            for first, n in clocked_processes(p.read_text(errors="replace")):
                if n > limit:
                    out[f"{p.relative_to(root)}:{first}"] = n
    return out


def import_graph(packages: Sequence[str] = PY_PACKAGES) -> grimp.ImportGraph:
    """The product's import graph (grimp: every import statement, those inside functions included)."""
    return grimp.build_graph(*packages, cache_dir=None)


def circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """The sets of modules that import each other, directly or through others: a module's circle is every
    module it depends on that depends on it back."""
    upstream = {m: graph.find_upstream_modules(m) for m in graph.modules}
    out: list[list[str]] = []
    placed: set[str] = set()
    for m in sorted(graph.modules):
        loop = {u for u in upstream[m] if m in upstream[u]}
        if loop and m not in placed:
            out.append(sorted(loop | {m}))
            placed.update(out[-1])
    return out


def main() -> int:
    files = long_files()
    procs = long_processes()
    loops = circles(import_graph())
    print(f"files past {FILE_LINES} lines: {len(files)}")
    for path, n in sorted(files.items(), key=lambda kv: -kv[1]):
        print(f"  {n:5d} {path}: {LONG_FILES.get(path, 'NO STATED REASON')}")
    print(f"clocked processes past {PROCESS_LINES} lines: {len(procs)}")
    for where, n in procs.items():
        print(f"  {n:5d} {where}")
    print(f"import circles: {len(loops)}")
    for loop in loops:
        print("  " + " <-> ".join(loop))
    unexplained = [p for p in files if p not in LONG_FILES]
    return 1 if unexplained or procs or loops else 0


if __name__ == "__main__":
    sys.exit(main())
