"""The one table of benches: top module, sources, parameters, test module.

The Makefile (through tb.run.regress), the pytest wrappers (tests/test_benches.py)
and the benchmark (tb.perf) all read this table and nothing else, so a bench
cannot be built one way by one runner and another way by the next.
"""

from __future__ import annotations

import math
import struct
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Mapping

ROOT = Path(__file__).resolve().parents[2]
RTL = ROOT / "rtl"

NOC_RTL: tuple[str, ...] = (
    "rtl/noc/noc_fifo.v",
    "rtl/noc/noc_link_mon.v",
    "rtl/noc/noc_router.v",
    "rtl/noc/noc_mesh.v",
)
HARNESS_RTL: tuple[str, ...] = (
    "rtl/bench/harness_clock.v",
    "rtl/bench/tb_pattern.v",
    "rtl/bench/tb_ep_bank.v",
)
# the bench-side modules of a generated machine harness (tb/system/machine_top.py render_harness)
MACHINE_HARNESS_RTL: tuple[str, ...] = ("rtl/bench/host_engine.v", "rtl/bench/axil_trace.v")
ROUTER_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + ("rtl/bench/router_harness.v",)
MESH_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + ("rtl/bench/mesh_harness.v",)
CU_BASE_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + (
    "rtl/cu/cu_base.v", "rtl/bench/cu_null.v", "rtl/bench/cu_harness.v")
ORCH_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + (
    "rtl/orch/orch_axil_mon.v", "rtl/orch/orch_addr_dec.v", "rtl/orch/orchestrator.v",
    "rtl/bench/orch_harness.v")
# The memory agent without its DRAM (it also needs rtl/arith/clock_gate.v and the NoC FIFO and link monitor).
MAG_AGENT_RTL: tuple[str, ...] = ("rtl/mag/mag_quant.v", "rtl/mag/mag_entry.v", "rtl/mag/mag_write.v",
                                  "rtl/mag/mag_port.v", "rtl/mag/mag.v")
MAG_RTL: tuple[str, ...] = ("rtl/mag/mag_dram.v",) + MAG_AGENT_RTL
# The agent with everything it instantiates, built alone (no DRAM): lint, the parameter guards, the wedge bench.
MAG_AGENT_DEPS: tuple[str, ...] = ("rtl/noc/noc_fifo.v", "rtl/noc/noc_link_mon.v", "rtl/arith/clock_gate.v") + MAG_AGENT_RTL
MAG_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + ("rtl/arith/clock_gate.v",) + MAG_RTL + (
    "rtl/bench/mag_harness.v",)
CLUSTER_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + (
    "rtl/arith/clock_gate.v", "rtl/cluster/acc_convert.v", "rtl/cluster/acc_add.v", "rtl/cluster/cu_gemm_subtile.v",
    "rtl/cluster/acc_to_fp16.v", "rtl/cluster/acc_emit_subtile.v",
    "rtl/cu/cu_base.v", "rtl/cluster/cl_mac.v", "rtl/cluster/cl_emit.v", "rtl/cluster/cl_fill.v", "rtl/cluster/cl_rx.v",
    "rtl/cluster/cl_sweep.v", "rtl/cluster/cl_drain.v", "rtl/cluster/cl_wport.v", "rtl/cluster/cl_mon.v",
    "rtl/cluster/cluster_cu.v", "rtl/bench/cl_harness.v")
VC_UNIT_RTL: tuple[str, ...] = tuple(f"rtl/arith/{m}.v" for m in (
    "clock_gate", "e8m15_pack", "e8m15_fma", "e8m15_cmp", "e8m15_tcu",
    "fp16_to_e8m15", "e8m15_to_fp16", "fp32_to_e8m15", "e8m15_to_fp32")) + ("rtl/vector/vc_coeff_rom.v", "rtl/cu/cu_base.v") + tuple(
    f"rtl/vector/{m}.v" for m in ("vc_alu", "vc_lanes", "vc_agu", "vc_red", "vc_xfer", "vc_hazard", "vc_chain_hazard",
                                  "vc_store_hazard", "vc_timing", "vc_link", "vc_decode", "vc_exec", "vector_core"))
VC_BENCH_RTL: tuple[str, ...] = NOC_RTL + HARNESS_RTL + VC_UNIT_RTL + MAG_RTL + ("rtl/bench/vc_harness.v",)
VT_BENCH_RTL: tuple[str, ...] = NOC_RTL[:2] + ("rtl/bench/harness_clock.v",) + VC_UNIT_RTL + (
    "rtl/bench/vt_harness.v",)
PE_DMA_BENCH_RTL: tuple[str, ...] = ("rtl/bench/harness_clock.v", "rtl/ahbm/pe/pe_slice.v", "rtl/ahbm/pe/pe_dma.v",
                                      "rtl/bench/pe_dma_harness.v")
# pe_core and the modules it wires (rtl/ahbm/pe/pe_core.v header), in dependency order
PE_CORE_RTL: tuple[str, ...] = tuple(f"rtl/ahbm/pe/pe_{m}.v" for m in (
    "cmdq", "front", "engine", "link", "fault", "stats", "core"))
AHBM_CUBE_RTL: tuple[str, ...] = ("rtl/bench/harness_clock.v", "rtl/ahbm/ipcq/ipcq.v", "rtl/ahbm/ipcq/ipcq_node.v",
                                   "rtl/ahbm/ipcq/ipcq_mesh.v", "rtl/ahbm/pe/pe_slice.v", "rtl/ahbm/pe/pe_dma.v",
                                   *PE_CORE_RTL, "rtl/ahbm/pe/pe.v", "rtl/ahbm/ahbm_cube.v")
INCLUDE_DIRS: tuple[str, ...] = ("rtl/noc", "rtl/cu", "rtl/mag", "rtl/bench", "rtl/ahbm", "rtl/ahbm/pe", "rtl/ahbm/fp32",
                                 "rtl/vector")


@dataclass(frozen=True)
class MeshShape:
    """Router grid and edge endpoints of a mesh bench (models.noc.mesh.MeshGeometry args)."""

    nx: int
    ny: int
    edge_mask: int = 0


@dataclass(frozen=True)
class Bench:
    """One bench: a harness top, its sources and parameters, and its cocotb tests."""

    name: str
    level: str  # "module", "mesh" (later "system")
    toplevel: str
    sources: tuple[str, ...]
    test_module: str
    parameters: Mapping[str, int] = field(default_factory=dict)
    shape: MeshShape | None = None  # endpoint geometry seen by the bench
    description: str = ""
    # Simulated-time bound of the whole bench, in clock cycles (a per-test
    # bound also applies inside each test).
    max_cycles: int = 5_000_000
    # Wall-clock backstop of each simulator process of the bench, in seconds (tb.run.simulators.make_runner).
    # It only has to stop a simulator hung where no in-test watchdog runs, so a healthy bench must never
    # reach it on a slow or loaded machine. The rule: one hour, far above any healthy bench; the slowest,
    # ahbm on Icarus, ran past the former 600 s bound on a loaded 2-core machine, where the whole main job
    # (29 benches, 2 at a time) took 1,349 s. AGSIM_WALL_S=<seconds> overrides it for every bench of a run.
    max_wall_s: int = 3600
    # A machine of models/machine/layouts.py whose generated top and harness
    # (tb/system/machine_top.py) are added to the sources at build time.
    machine: str | None = None
    # A regex of the test module's tests this bench runs (None: all); a user's COCOTB_TEST_FILTER narrows it
    # further (tb.run.runner.effective_filter). A variant keeps only the tests its parameters change.
    tests: str | None = None
    # The bench whose build this one runs on (None: its own). A variant that differs only in values its top
    # takes at run time (`run_env`) shares its base's build instead of compiling the same design again; its
    # logs, results and waveforms stay in its own folder.
    build_of: str | None = None
    # Environment of the bench's simulator processes: the run-time values its top's Python side reads
    # (e.g. the CUBE's IPCQ depth, tb/ahbm/cube.py RUNTIME_ENV).
    run_env: Mapping[str, str] = field(default_factory=dict)

    @property
    def source_paths(self) -> list[Path]:
        return [ROOT / s for s in self.sources]

    @property
    def include_paths(self) -> list[Path]:
        return [ROOT / d for d in INCLUDE_DIRS]


def _machine_bench(name: str, machine: str, test_module: str, description: str, **bounds: int) -> Bench:
    """A system bench on a whole machine: its top and harness are generated from models/machine/layouts.py
    (`bounds`: max_cycles / max_wall_s when the table's defaults are too tight)."""
    from models.machine.layouts import get_machine
    from tb.system.machine_top import unit_sources

    m = get_machine(machine)
    g = m.geometry
    return Bench(
        name=name,
        level="system",
        toplevel=f"{machine}_harness",
        sources=NOC_RTL + HARNESS_RTL + MACHINE_HARNESS_RTL + tuple(unit_sources(m, ROOT)),
        test_module=test_module,
        shape=MeshShape(g.nx, g.ny, g.edge_mask),
        description=description,
        machine=machine,
        **bounds,
    )


def softmax_scale_bits(d: int) -> int:
    """Bits of fp32(1/sqrt(d)), rounded to nearest even from the double."""
    return struct.unpack("<I", struct.pack("<f", 1.0 / math.sqrt(d)))[0]


def _cube_bench(name: str, test_module: str, description: str, *, level: str = "module",
                **parameters: int) -> Bench:
    """A bench on the AHBM CUBE top; SCALE = fp32(1/sqrt(D)) is derived from D, never typed
    (equal to models.ahbm.numerics.softmax_scale: tests/unit/ahbm/test_ahbm_numerics.py; computed
    without numpy so `make list` runs on the system Python)."""
    d = parameters.get("D", 128)
    scale_bits = softmax_scale_bits(d)
    return Bench(name=name, level=level, toplevel="ahbm_cube", sources=AHBM_CUBE_RTL, test_module=test_module,
                 parameters={**parameters, "SCALE": scale_bits}, description=description)


def _full_ring(nx: int, ny: int) -> int:
    return (1 << (2 * nx + 2 * ny)) - 1


def _mesh_bench(name: str, nx: int, ny: int, edge_mask: int, description: str, *,
                fifo_depth: int = 4, test_module: str = "tb.noc.test_mesh") -> Bench:
    # 4 (not the routers' default 32, the reference depth) where not said: shallow FIFOs fill, so the
    # stall patterns exercise backpressure through several routers; mesh_4x4 runs the reference depth
    """A mesh_harness bench; its parameters and its shape come from one set of numbers."""
    return Bench(
        name=name,
        level="mesh",
        toplevel="mesh_harness",
        sources=MESH_BENCH_RTL,
        test_module=test_module,
        parameters={"NX": nx, "NY": ny, "FIFO_DEPTH": fifo_depth, "EDGE_MASK": edge_mask},
        shape=MeshShape(nx, ny, edge_mask),
        description=description,
    )


BENCHES: tuple[Bench, ...] = (
    Bench(
        name="fifo",
        level="module",
        toplevel="fifo_harness",
        sources=("rtl/noc/noc_fifo.v", "rtl/bench/harness_clock.v", "rtl/bench/fifo_harness.v"),
        test_module="tb.noc.test_fifo",
        parameters={"DEPTH": 4},
        description="input FIFO alone: ordering, full/empty, and its write-while-full monitor",
    ),
    Bench(
        name="router",
        level="module",
        toplevel="router_harness",
        sources=ROUTER_BENCH_RTL,
        test_module="tb.noc.test_router",
        parameters={"FIFO_DEPTH": 4},
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="one router, random traffic into all five inputs, random busy on all five outputs",
    ),
    Bench(
        name="router_turn",
        level="module",
        toplevel="router_harness",
        sources=ROUTER_BENCH_RTL,
        test_module="tb.noc.test_router_turn",
        # North and East declared to face neighbouring routers: a flit from North
        # that turns East is an impossible Y-to-X turn the monitor must report.
        parameters={"FIFO_DEPTH": 4, "PORT_EDGE": 0b11100},
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="router impossible-turn monitor self-test",
    ),
    _mesh_bench("mesh_2x2", 2, 2, 0, "2x2 mesh, Local endpoints only"),
    _mesh_bench("mesh_4x4", 4, 4, 0, "4x4 mesh, Local endpoints only, the reference 32-deep input FIFOs",
                fifo_depth=32),
    _mesh_bench("mesh_3x2_edge", 3, 2, _full_ring(3, 2), "3x2 mesh (non-square) with all ten edge-ring endpoints"),
    # north (1,0), (3,0); south (2,3); west (0,1); east (4,2): other ring ports tied off
    _mesh_bench("mesh_3x2_sparse", 3, 2, 0b10_01_010_101, "3x2 mesh, some edge endpoints, 2-deep FIFOs",
                fifo_depth=2),
    _mesh_bench("checker", 2, 2, 0, "scoreboard self-tests: injected recorder faults must fail",
                test_module="tb.noc.test_checker"),
    Bench(
        name="cu_base",
        level="module",
        toplevel="cu_harness",
        sources=CU_BASE_BENCH_RTL,
        test_module="tb.cu.test_cu_base",
        parameters={"INST_DEPTH": 32, "RECV_DEPTH": 8},
        # the unit is the Local endpoint (1,1); bench endpoints on the four edges
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="compute-unit endpoint base behind a test unit: completions, CU_CTRL, drops, monitors",
    ),
    Bench(
        name="orch",
        level="module",
        toplevel="orch_harness",
        sources=ORCH_BENCH_RTL,
        test_module="tb.orch.test_orch",
        parameters={"NX": 2, "NY": 2, "STAGE_SLOTS": 256, "BUSY_LIMIT": 2000},
        description="orchestrator on (1,1) of a 2x2 mesh: staging, dispatch rewrite, credit, NODE_STATUS, Await, "
                    "upstream's timing; host over AXI4-Lite (cocotbext-axi)",
    ),
    Bench(
        name="orch_monitors",
        level="module",
        toplevel="orch_harness",
        sources=ORCH_BENCH_RTL,
        test_module="tb.orch.test_orch_monitors",
        parameters={"NX": 2, "NY": 2, "STAGE_SLOTS": 256, "BUSY_LIMIT": 2000},
        description="the orchestrator's assertion monitors, each fed the misuse it must report (AXI handshakes, "
                    "kicks, credit overflow, a misaddressed flit, an output held busy)",
    ),
    Bench(
        name="mag",
        level="module",
        toplevel="mag_harness",
        sources=MAG_BENCH_RTL,
        test_module="tb.mag.test_mag",
        # the agent and its DRAM at upstream's timing (mag_harness.v's defaults)
        parameters={"NX": 2, "NY": 1, "EDGE_MASK": _full_ring(2, 1), "DRAM_WORDS": 4096},
        # the agent is the west edge endpoint (0,1) (port 6); bench endpoints on the other seven
        shape=MeshShape(2, 1, _full_ring(2, 1)),
        description="memory agent + DRAM: plain and entry reads (QUANT A/B packing, entry_words, multicast), "
                    "writes bound by source, writes_idle, drops, monitors, upstream's service times",
    ),
    Bench(
        name="cluster",
        level="module",
        toplevel="cl_harness",
        sources=CLUSTER_BENCH_RTL,
        test_module="tb.cluster.test_cluster",
        parameters={"INST_DEPTH": 32, "RECV_DEPTH": 8},
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="cluster CU alone, every flit against its event model: operand bursts, GEMM on both banks "
                    "with wrapping offsets, emit/fuse, node/memory drains, FILL (QUANT/preq flags, multicast leader "
                    "and followers, held responses), exec_result, acks (rejected too), OP_SEND/ADD_PEER, faults",
    ),
    Bench(
        name="vector_core",
        level="module",
        toplevel="vc_harness",
        sources=VC_BENCH_RTL,
        test_module="tb.vector.test_vector_core",
        parameters={"INST_DEPTH": 32, "RECV_DEPTH": 8},
        # the core is the Local endpoint (1,1); bench endpoints on the four edges, (0,1) = memory agent
        shape=MeshShape(1, 1, _full_ring(1, 1)),
        description="vector core behind cu_base with a memory agent: RTL = model after every RUN for one case per "
                    "opcode and fault, the compiled VC bundles and 300 constrained-random programs",
    ),
    Bench(
        name="vec_timing",
        level="module",
        toplevel="vt_harness",
        sources=VT_BENCH_RTL,
        test_module="tb.vector.test_vec_timing",
        # the logs hold the largest record of the corpus with room (measured: 197 flits, 82 completions, 60
        # executed words, 2 RUNs, 97 CU_DATA flits, 96 drained lines); a record that does not fit is refused
        # before simulation (tb/vector/vec_timing/observed.py refusal). MAX_CYCLES, the per-record watchdog: 9x the
        # longest record upstream (2,210 bench cycles)
        parameters={"FLIT_DEPTH": 1024, "SIG_DEPTH": 256, "TRACE_DEPTH": 2048, "RUN_DEPTH": 16, "CUDO_DEPTH": 512,
                    "WLOG_DEPTH": 1024, "RDQ_DEPTH": 512, "MLOG_DEPTH": 1024, "MAX_CYCLES": 20_000},
        description="upstream's vector-core timing corpus (clients/vec_timing) replayed on the core, fed as "
                    "upstream's bench fed it: completions, drained DRAM and node drains exact; each RUN's cycle "
                    "count and per-word execute times against upstream's (a subset; make bench: all 909)",
    ),
    Bench(
        name="ipcq",
        level="module",
        toplevel="ipcq_harness",
        sources=("rtl/bench/harness_clock.v", "rtl/bench/tb_pattern.v", "rtl/ahbm/ipcq/ipcq.v",
                 "rtl/ahbm/ipcq/ipcq_node.v", "rtl/ahbm/ipcq/ipcq_mesh.v", "rtl/bench/ipcq_harness.v"),
        test_module="tb.ahbm.test_ipcq",
        parameters={"R": 2, "C": 4, "DEPTH": 8, "MAXLEN": 12},
        description="AHBM IPCQ 2x4 mesh: packets to random neighbours under random stalls, exactly once, in "
                    "order, intact; blocking push; pkt_avail; monitors",
    ),
    Bench(
        name="pe_dma",
        level="module",
        toplevel="pe_dma_harness",
        sources=PE_DMA_BENCH_RTL,
        test_module="tb.ahbm.test_pe_dma",
        parameters={"BW": 64, "LAT": 100, "QDEPTH": 4},
        description="AHBM PE DMA engine and local slice against models/ahbm/dma.py (bandwidth 64 B/cycle, "
                    "latency 100)",
    ),
    _cube_bench("pe", "tb.ahbm.test_pe",
                "AHBM PE on a 1x2 CUBE: the attn_tile composite bit exact, the six ADR §8 features one test each, "
                "kernel commands, command faults and monitors", R=1, C=2, D=32, MAXROWS=64, WORDS=1024,
                PREFETCH=2, DMA_LAT=100, IPCQ_DEPTH=64),
    _cube_bench("pe_merge", "tb.ahbm.test_pe_merge",
                "AHBM reduction on a 1x3 CUBE at a 64-bit IPCQ link: the streamed MERGE (and its push) bit exact "
                "and edge for edge against models/ahbm/reduce.py, its faults", R=1, C=3, D=32, MAXROWS=64,
                WORDS=1024, PREFETCH=2, DMA_LAT=100, IPCQ_DEPTH=64, IPCQ_W=64),
    _cube_bench("ahbm", "tb.ahbm.test_ahbm",
                "AHBM attention on a 2x4 CUBE (d=32, G=8): decode without / with SP, prefill, N in {1,2,4,8}, "
                "rotations and ragged lengths; O bit exact and within tolerance, counts", level="system",
                R=2, C=4, D=32, MAXROWS=64, WORDS=2048, PREFETCH=2, DMA_LAT=100, IPCQ_DEPTH=1024),
    _cube_bench("ahbm_llama", "tb.ahbm.test_ahbm_llama",
                "the ADR §10 cases at the Llama3-70B head geometry (d=128, G=8, 64-key tiles) on a 2x4 CUBE",
                level="system", R=2, C=4, D=128, MAXROWS=64, WORDS=8192, PREFETCH=2, DMA_LAT=100,
                IPCQ_DEPTH=1024),
    _machine_bench("mm_mesh_ref", "mm_mesh", "tb.system.test_mm_mesh_ref",
                   "the reference peer-drain bench (163 checks) on mm_mesh, the bench as the agent"),
    _machine_bench("fused4", "fused4", "tb.system.test_fused4",
                   "fused vs unfused 32x64 @ 32x64 on four clusters and four vector cores, through the host"),
    _machine_bench("fused_kernels", "mm_mesh", "tb.system.test_fused_kernels",
                   "fused linear+SiLU, gated MLP and constrained-random fused kernels on mm_mesh"),
    _machine_bench("mm_mesh_sys", "mm_mesh_sys", "tb.system.test_mm_mesh_sys",
                   "mm_mesh with the orchestrator at (1,1): the host sequence (stage, dispatch, Await, DRAM), "
                   "granule/ack counts, named faults, the reference epilogue through the host"),
    _machine_bench("host_engine", "mm_mesh_sys", "tb.system.test_host_engine",
                   "the host engine on mm_mesh_sys's host port: registers and slots read back, a planted wrong word "
                   "named, 4 cycles a write and a read, a poll's timeout where its policy puts it, queue overflow, "
                   "unknown command, late poll and a batch that never completes named"),
    _machine_bench("clients", "fused4", "tb.bundle.test_clients",
                   "every program the public KohakuTPU compiler built (clients/bundles), unmodified, through the "
                   "host's loader on fused4: outputs bit exact to upstream's RTL and to the machine model, exact "
                   "awaits, landing before every readback; each round's cycles beside upstream RTL's",
                   max_cycles=20_000_000),

)

def _variant(name: str, base: str, description: str, tests: str | None = None, run_env: dict[str, str] | None = None,
             **parameters: int) -> Bench:
    """A bench that differs from `base` only in some parameters (same top, sources; its tests, or those
    matching `tests`), or, given `run_env` and no parameters, only in run-time values: then it runs on
    `base`'s build."""
    b = next(x for x in BENCHES if x.name == base)
    if run_env and parameters:
        raise ValueError(f"variant {name}: run-time values share {base}'s build, which other parameters would change")
    return replace(b, name=name, parameters={**b.parameters, **parameters}, description=description, tests=tests,
                   build_of=base if run_env else None, run_env=dict(run_env or {}))


BENCHES = BENCHES + (
    # the service-time tests whose figures hold on any timing (plain reads); the QUANT and write figures need
    # one DRAM word a cycle and enough write slots to refill (tb/mag/timing.py)
    _variant("mag_slow", "mag", "the memory agent bench on slow DRAM (latency 20, one read per 3 cycles), "
             "minimal queues, as few write slots as sources (7: the fewest that cannot wedge), a one-entry R FIFO, "
             "other DRAM-port and quantiser latencies, and the compiled bundles' memory window (BASE 0x8000_0000)",
             tests=r"^(?!.*test_timing_(quant|writes))",
             RD_LATENCY=20, RD_INTERVAL=3, WR_SLOTS=7, RDQ_DEPTH=2, WRQ_DEPTH=2, Q_MARGIN=0, FIFO_DEPTH=2,
             AR_FIFO_LAT=1, R_FIFO_LAT=5, W_FIFO_LAT=2, B_FIFO_LAT=4, R_FIFO_DEPTH=1, QUANT_LAT=3,
             BASE=0x8000_0000),
    # only the cases where a push blocks on an 8-word queue (measured: the six others waited 0 cycles, and the
    # scoreboard self-tests do not depend on the depth; all of them run in `ahbm`). The depth is chosen at run
    # time (ahbm_cube's cfg_ipcq_depth), so the cases run on ahbm's build: a queue full at 8 of its 1024 words
    # behaves cycle for cycle as an 8-word build (tb/ahbm/test_ipcq.py test_traffic_run_time_depth)
    _variant("ahbm_tightq", "ahbm", "the AHBM cases whose pushes block on 8-word IPCQ queues: every (m,l,O) partial "
             "and KV block is longer than the queue, pushes block and pops start on a full queue",
             tests=r"decode_sp/|decode_n/n=[248]$|prefill_kv_parallel/|prefill_ring/n=[48]$|prefill_ring_long/n=8$"
                   r"|decode_batch/b=[48]$|decode_batch_unstreamed$|decode_steps/n=8$|prefill_chunks/n=4$",
             run_env={"AGSIM_CUBE_IPCQ_DEPTH": "8"}),  # tb/ahbm/cube.py IPCQ_DEPTH_ENV
    # the commands' address fields in 64-byte words (long contexts: a slice past 16 MiB, docs/ahbm.md §4), every
    # field kind once: K / V / MASK (ATTN_TILE, masked prefill), Q (LOAD_Q), O (NORM_STORE), KV (the ring)
    _variant("ahbm_words", "ahbm", "the AHBM cases with 64-byte-word address fields (ADDR_SHIFT 6, the layout of "
             "slices past 16 MiB): decode with SP, a batch, masked prefill chunks and the ring's KV blocks",
             tests=r"decode_sp/|decode_batch/b=8$|prefill_chunks/n=4$|prefill_ring/n=[48]$", ADDR_SHIFT=6),
    _variant("pe_merge_w256", "pe_merge", "the reduction bench at a 256-bit IPCQ link (8 fp32 a word: the merge "
             "keeps pace with the link)", IPCQ_W=256),
    _variant("pe_merge_w512", "pe_merge", "the reduction bench at a 512-bit IPCQ link (16 fp32 a word: the merge, "
             "8 elements a cycle, is the slower side)", IPCQ_W=512),
    _variant("pe_dma_bw7", "pe_dma", "the PE DMA bench at 7 B/cycle (a bandwidth that does not divide a word), "
             "latency 1", BW=7, LAT=1, QDEPTH=2, NREQ=32),
)

BY_NAME: dict[str, Bench] = {b.name: b for b in BENCHES}


def get_bench(name: str) -> Bench:
    """The bench called `name`, or a ValueError listing the known ones."""
    try:
        return BY_NAME[name]
    except KeyError:
        known = ", ".join(BY_NAME)
        raise ValueError(f"unknown bench '{name}'; known benches: {known}") from None


def main(argv: list[str]) -> int:
    """`python -m tb.run.benches` lists the table (names only with --names)."""
    if "--names" in argv:
        print(" ".join(BY_NAME))
        return 0
    for b in BENCHES:
        params = " ".join(f"{k}={v}" for k, v in b.parameters.items())
        if b.build_of:
            params = f"{b.build_of}'s build, " + " ".join(f"{k}={v}" for k, v in b.run_env.items())
        print(f"{b.name:16s} {b.level:7s} {b.toplevel:16s} {params:40s} {b.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
