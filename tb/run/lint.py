"""`make lint`: verilator --lint-only -Wall on every RTL unit and every bench top.

What is linted comes from the bench table (each bench's top, sources and
parameters, so every parametrisation that runs is also linted) plus each RTL
unit alone, side by side (one verilator process per core, `--jobs`). Bench tops need --timing (they hold the clock generator); their
few waivers are written, with reasons, next to the code they cover.
"""

from __future__ import annotations

import argparse
import functools
import os
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from tb.run.benches import BENCHES, HARNESS_RTL, INCLUDE_DIRS, MAG_AGENT_DEPS, NOC_RTL, PE_CORE_RTL, ROOT, get_bench
from tb.run.content_hash import files_digest


@dataclass(frozen=True)
class LintJob:
    name: str
    top: str
    sources: tuple[str, ...]
    parameters: tuple[tuple[str, int], ...] = ()
    timing: bool = False
    include_dirs: tuple[str, ...] = ()  # besides INCLUDE_DIRS
    # --timescale: the default for modules that declare none. rtl/arith mixes blocks with a
    # `timescale (the vector core's lane arithmetic) and the cluster's, which have none and
    # inherit it from whatever file precedes them in a build; linted alone as a library, the
    # latter would otherwise be reported (TIMESCALEMOD) for the order the files are listed in.
    timescale: str = ""
    defines: tuple[str, ...] = ()


def lint_jobs() -> list[LintJob]:
    """RTL units alone, then every bench of the table as it is built."""
    jobs = [
        LintJob("noc_fifo", "noc_fifo", ("rtl/noc/noc_fifo.v",)),
        LintJob("noc_link_mon", "noc_link_mon", ("rtl/noc/noc_link_mon.v",)),
        LintJob("noc_router", "noc_router", NOC_RTL[:3]),
        LintJob("noc_router(2,3)/3x4", "noc_router", NOC_RTL[:3],
                (("X", 2), ("Y", 3), ("NX", 3), ("NY", 4), ("PORT_EDGE", 0b10000))),
        LintJob("noc_mesh 14x14", "noc_mesh", NOC_RTL, (("NX", 14), ("NY", 14))),
        LintJob("mag_dram", "mag_dram", ("rtl/mag/mag_dram.v",)),
        LintJob("mag_quant", "mag_quant", ("rtl/mag/mag_quant.v",)),
        LintJob("mag_entry", "mag_entry", ("rtl/arith/clock_gate.v", "rtl/mag/mag_quant.v", "rtl/mag/mag_entry.v")),
        LintJob("mag_write", "mag_write", ("rtl/noc/noc_fifo.v", "rtl/mag/mag_write.v")),
        LintJob("mag", "mag", MAG_AGENT_DEPS),
        LintJob("mag BASE 0x8000_0000 WR_SLOTS 1, 1-cycle port", "mag",
                MAG_AGENT_DEPS,
                (("BASE", 0x8000_0000), ("WR_SLOTS", 1), ("DRAM_WORDS", 1 << 20), ("AR_FIFO_LAT", 1),
                 ("R_FIFO_LAT", 1), ("W_FIFO_LAT", 1), ("B_FIFO_LAT", 1), ("QUANT_LAT", 1))),
        LintJob("cluster_cu", "cluster_cu", tuple(s for s in get_bench("cluster").sources
                                                  if s != "rtl/bench/cl_harness.v")),
        LintJob("vector_core", "vector_core", tuple(s for s in get_bench("vector_core").sources
                                                    if s not in HARNESS_RTL and s != "rtl/bench/vc_harness.v")),
        LintJob("ipcq_mesh", "ipcq_mesh", ("rtl/ahbm/ipcq/ipcq.v", "rtl/ahbm/ipcq/ipcq_node.v", "rtl/ahbm/ipcq/ipcq_mesh.v")),
        LintJob("pe_dma", "pe_dma", ("rtl/ahbm/pe/pe_dma.v",)),
        LintJob("pe_slice", "pe_slice", ("rtl/ahbm/pe/pe_slice.v",)),
        LintJob("pe_cmdq", "pe_cmdq", ("rtl/ahbm/pe/pe_cmdq.v",)),
        LintJob("pe_front", "pe_front", ("rtl/ahbm/pe/pe_front.v",)),
        LintJob("pe_engine", "pe_engine", ("rtl/ahbm/pe/pe_engine.v",)),
        LintJob("pe_link TX", "pe_link", ("rtl/ahbm/pe/pe_link.v",)),
        LintJob("pe_link RX IPCQ_W 512", "pe_link", ("rtl/ahbm/pe/pe_link.v",), (("RECV", 1), ("IPCQ_W", 512))),
        LintJob("pe_fault", "pe_fault", ("rtl/ahbm/pe/pe_fault.v",)),
        LintJob("pe_stats", "pe_stats", ("rtl/ahbm/pe/pe_stats.v",)),
        LintJob("pe_core", "pe_core", PE_CORE_RTL),
        LintJob("pe_core P4 d32", "pe_core", PE_CORE_RTL, (("PREFETCH", 4), ("D", 32), ("MAXROWS", 16))),
        LintJob("pe_core IPCQ_W 256", "pe_core", PE_CORE_RTL, (("IPCQ_W", 256),)),
        LintJob("pe_core IPCQ_W 512 d32", "pe_core", PE_CORE_RTL, (("IPCQ_W", 512), ("D", 32))),
        LintJob("pe", "pe", ("rtl/ahbm/pe/pe_slice.v", "rtl/ahbm/pe/pe_dma.v", *PE_CORE_RTL, "rtl/ahbm/pe/pe.v")),
        LintJob("cu_base", "cu_base", ("rtl/noc/noc_fifo.v", "rtl/noc/noc_link_mon.v", "rtl/cu/cu_base.v")),
        LintJob("harness_clock", "harness_clock", ("rtl/bench/harness_clock.v",), timing=True),
        LintJob("harness_clock (cocotb's clock, Verilator benches)", "harness_clock", ("rtl/bench/harness_clock.v",),
                timing=True, defines=("AGSIM_COCOTB_CLOCK",)),
        LintJob("orchestrator", "orchestrator", ("rtl/noc/noc_fifo.v", "rtl/noc/noc_link_mon.v",
                                                 "rtl/orch/orch_axil_mon.v", "rtl/orch/orch_addr_dec.v",
                                                 "rtl/orch/orchestrator.v")),
    ]
    # the arithmetic blocks: the shared ones (rtl/arith) and the cluster's and vector core's own datapath blocks
    arith = tuple(sorted(str(p.relative_to(ROOT)) for pattern in ("rtl/arith/*.v", "rtl/cluster/acc_*.v",
                                                                  "rtl/cluster/cu_gemm_subtile.v",
                                                                  "rtl/vector/vc_coeff_rom.v")
                         for p in ROOT.glob(pattern)))
    for path in arith:
        top = Path(path).stem
        jobs.append(LintJob(f"arith {top}", top, arith, timescale="1ns/1ps"))
    ahbm_arith = tuple(sorted(str(p.relative_to(ROOT)) for pattern in ("fp32_*.v", "bf16_*.v")
                              for p in (ROOT / "rtl/ahbm/fp32").glob(pattern)))
    for path in ahbm_arith:  # the wrappers include rtl/ahbm/fp32/fp32_lib.vh
        top = Path(path).stem
        jobs.append(LintJob(f"ahbm arith {top}", top, ahbm_arith, include_dirs=("rtl/ahbm/fp32",)))
    benches: dict[tuple, int] = {}  # a design (top, sources, parameters) -> its job's index
    for b in BENCHES:
        sources = b.sources
        if b.machine:  # lint the generated top and harness as they are built (one folder per machine)
            from models.machine.layouts import get_machine
            from tb.system.machine_top import write_machine_sources

            gen = write_machine_sources(get_machine(b.machine), ROOT / "sim_build" / "lint" / b.machine)
            sources = sources + tuple(str(p) for p in gen)
        job = LintJob(f"bench {b.name}", b.toplevel, sources, tuple(b.parameters.items()), timing=True)
        design = (job.top, job.sources, job.parameters)
        if design in benches:  # benches that build the same design (a machine's, a run-time variant's): one lint
            i = benches[design]
            jobs[i] = replace(jobs[i], name=f"{jobs[i].name}, {b.name}")
            continue
        benches[design] = len(jobs)
        jobs.append(job)
    perf = get_bench("mesh_4x4")
    jobs.append(LintJob("benchmark mesh_pure_tb", "mesh_pure_tb", perf.sources + ("rtl/bench/mesh_pure_tb.v",),
                        tuple(perf.parameters.items()), timing=True))
    jobs.append(LintJob("benchmark mesh_load_tb", "mesh_load_tb", NOC_RTL + ("rtl/bench/mesh_load_tb.v",),
                        timing=True))
    return jobs


# Vector parameters must be given sized on the command line, or -Wall reports
# a width mismatch against their declaration.
VECTOR_PARAMS = {"EDGE_MASK": 64, "PORT_EDGE": 5, "PORT_PRESENT": 5, "BASE": 40}


def _literal(name: str, value: int) -> str:
    width = VECTOR_PARAMS.get(name)
    return f"{width}'d{value}" if width else str(value)


def command(job: LintJob) -> list[str]:
    cmd = ["verilator", "--lint-only", "-Wall"]
    if job.timing:
        cmd.append("--timing")
    if job.timescale:
        cmd += ["--timescale", job.timescale]
    cmd += [f"-I{ROOT / d}" for d in dict.fromkeys(INCLUDE_DIRS + job.include_dirs)]
    cmd += [f"-G{k}={_literal(k, v)}" for k, v in job.parameters]
    cmd += [f"-D{d}" for d in job.defines]
    cmd += ["--top-module", job.top]
    cmd += [str(ROOT / s) for s in job.sources]  # absolute paths stay absolute
    return cmd


LINT_CACHE = ROOT / "sim_build" / "lint-clean"


@functools.cache
def _linter_version() -> str:
    return subprocess.run(["verilator", "--version"], capture_output=True, text=True).stdout


def lint_key(job: LintJob) -> str:
    """A hash of everything a lint verdict depends on: the command, the linter's version, and the text of the
    job's sources and of every file in the include folders (any of them may be `include`d)."""
    files = {ROOT / src for src in job.sources}
    for folder in dict.fromkeys(INCLUDE_DIRS + job.include_dirs):
        files.update(p for p in (ROOT / folder).iterdir() if p.is_file() and p.suffix in (".v", ".vh", ".sv"))
    return files_digest(files, *command(job), _linter_version())


def clean_before(key: str) -> bool:
    """True when a lint of the inputs hashed to `key` (lint_key) was clean before (recorded by `remember_clean`)."""
    return (LINT_CACHE / key).exists()


def remember_clean(key: str, job: LintJob) -> None:
    """Record a clean lint of the inputs hashed to `key` (a failure is never recorded, so it is always re-run)."""
    LINT_CACHE.mkdir(parents=True, exist_ok=True)
    (LINT_CACHE / key).write_text(job.name + "\n")


def run_job(job: LintJob) -> tuple[LintJob, bool, str]:
    """One lint job: (job, clean, verilator's messages)."""
    proc = subprocess.run(command(job), capture_output=True, text=True)
    return job, proc.returncode == 0 and "%Warning" not in proc.stderr, proc.stderr.rstrip()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.run.lint", description=__doc__)
    ap.add_argument("--jobs", "-j", type=int, default=os.cpu_count() or 1,
                    help="lint jobs run side by side (default: the machine's cores, %(default)s)")
    args = ap.parse_args(argv)
    if shutil.which("verilator") is None:
        print("error: verilator is not installed (Debian package 'verilator')", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print(f"error: --jobs {args.jobs}: give at least 1", file=sys.stderr)
        return 2
    jobs = lint_jobs()
    failed = 0
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:  # each job is its own verilator process
        for job, ok, messages in pool.map(run_job, jobs):   # results in job order
            print(f"{'ok  ' if ok else 'FAIL'} {job.name}", flush=True)
            if not ok:
                failed += 1
                print(messages)
    print(f"lint: {len(jobs) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
