"""What a decoded token costs on AHBM: seconds and joules of a Llama3-70B layer's decode attention, from a
layer run's measured cycles and counters (tb/ahbm/layer.py) and a stated technology (`Tech`).

Why a model of its own: the simulation counts cycles and events, never seconds or joules. The ADR leaves
the clock and the bank-to-PE bandwidth open, so turning counts into a token's time and energy needs a
choice of technology, made once here as named constants, each with its source (docs/ahbm.md §13, "What a
token costs"), and kept apart from the counts so that another choice is one argument, not a new run.

Time: a layer's decode attention is the slowest of its 8 CUBEs' launches (they run in parallel); the
80 layers run one after another in a decode step (layer l + 1 needs layer l's output), and a step gives
one token to each of the B requests: tokens/s = B / (80 x layer latency). Only attention is counted:
the projections, the MLP and the host are outside this kernel (ADR §0.5.1).

Energy: four charged events, each counted by the RTL or derived from its counters, times a constant:

* bits read from the banks into a PE: 8 x ``dma_bytes`` (every K, V, Q and mask byte the DMA moved);
* bits pushed over IPCQ: 8 x the (m, l, O) packets' bytes (``cnt_push`` x a packet's words);
* fp32 multiply-adds: 2 d a score element (``cnt_score``: S2's dot product and S6's P V), ROWS (d + 1) a
  composite (S4's rescale of O and l), 2 ROWS (d + 1) a MERGE (both partials scaled and added);
* bf16 conversions: one an element loaded (``dma_bytes`` / 2, all operands are bf16) and one an element
  of O stored (``cnt_store`` x ROWS x d).

Not charged, and said so in every report: the exponentials (one a score element and one a row a
composite, counted and printed so they can be priced), compares, divides, the PE's SRAM buffers, control,
clocking and static power. The figures are the charged events' energy alone, not a power sign-off.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from .layer import BF16_BYTES, H_KV, LAYERS, kv_bytes

EVENTS = ("bank", "fma", "ipcq", "conversion")  # the charged events, largest share first
LAYER_DMA_BW = 64  # B a cycle: the layer runs' DMA rate (tb/ahbm/decode_sweep.DMA_BW), for records before they kept it


@dataclass(frozen=True)
class Constant:
    """A technology constant: its value, its unit and where it comes from (a citation, or how it is derived
    from cited ones)."""

    name: str
    value: float
    unit: str
    source: str


@dataclass(frozen=True)
class Tech:
    """The technology a layer's counts are priced in. Defaults: an HBM3-class cube (docs/ahbm.md §13)."""

    cube_bytes_per_s: Constant  # the cube's bank bandwidth, shared by its PEs
    clock_hz: Constant
    pe_bytes_per_cycle: int  # the simulated DMA rate (the build's DMA_BW): fixes bank bandwidth = rate x clock
    bank_pj_per_bit: Constant
    ipcq_pj_per_bit: Constant
    fma_pj: Constant
    conversion_pj: Constant
    gpu_bytes_per_s: Constant
    pes_per_cube: int = 8
    name: str = "an HBM3 cube"

    @property
    def pe_bandwidth(self) -> float:
        """Bytes a second one PE reads from its banks: the simulated rate at the clock."""
        return self.pe_bytes_per_cycle * self.clock_hz.value

    def constants(self) -> list[Constant]:
        return [self.cube_bytes_per_s, self.clock_hz, self.bank_pj_per_bit, self.ipcq_pj_per_bit, self.fma_pj,
                self.conversion_pj, self.gpu_bytes_per_s]


@dataclass(frozen=True)
class LayerWork:
    """One whole layer's decode attention as measured: its latency and the events the energy model charges,
    summed over its CUBEs."""

    context: int
    b: int
    rows: int  # rows of a composite: G x T_q (decode: T_q = 1)
    d: int
    cubes: int
    latency_cycles: int  # the slowest CUBE's launch
    roofline_cycles: int  # the slowest CUBE's KV-read roofline (one PE's K+V bytes / DMA_BW)
    bank_bytes: int
    ipcq_bytes: int
    scores: int
    composites: int
    merges: int
    stores: int
    sim_elapsed_s: float
    dma_bw: int  # bytes a cycle a PE's DMA moves in the run (the build's DMA_BW)

    @property
    def fmas(self) -> int:
        """fp32 multiply-adds: the MM stages, S4's rescale, the MERGEs (module docstring)."""
        return (2 * self.d * self.scores + self.composites * self.rows * (self.d + 1)
                + self.merges * 2 * self.rows * (self.d + 1))

    @property
    def conversions(self) -> int:
        """bf16 conversions: every element loaded, every element of O stored."""
        return self.bank_bytes // BF16_BYTES + self.stores * self.rows * self.d

    @property
    def exps(self) -> int:
        """Exponentials (not charged): P's, one a score element; the rescale factor, one a row a composite;
        a MERGE's two factors a row."""
        return self.scores + self.composites * self.rows + 2 * self.merges * self.rows


@dataclass(frozen=True)
class TokenCost:
    """What a token costs, for one layer run priced in one technology."""

    work: LayerWork
    layer_s: float
    tokens_per_s: float  # the 80 layers' attention, B tokens a step
    energy_pj: Mapping[str, float]  # per token, by charged event (EVENTS)
    roofline_tokens_per_s: float  # the same cubes at their KV-read roofline
    gpu_tokens_per_s: float  # the same KV bytes at a GPU's HBM bandwidth

    @property
    def pj_per_token(self) -> float:
        return sum(self.energy_pj.values())

    @property
    def shares(self) -> dict[str, float]:
        """Each charged event's part of a token's energy (0 to 1), in EVENTS' order."""
        pj = self.pj_per_token
        return {e: (self.energy_pj[e] / pj if pj else 0.0) for e in EVENTS}


HBM3_STACK_BYTES_PER_S = Constant(
    "HBM3 stack bandwidth", 819.2e9, "B/s",
    "JEDEC JESD238 HBM3 (Jan 2022 publication notice): 6.4 Gb/s a pin x 1,024 data pins = 819 GB/s a device")


# ---------------------------------------------------------------- energy constants (docs/ahbm.md §13)
# O'Connor et al., "Fine-Grained DRAM", MICRO 2017, HBM2 read energy by stage, as the AttAcc simulator
# (github.com/scale-snu/attacc_simulator, src/config.py, "2017 MICRO FGDRAM") itemises it: cell activate /
# precharge 0.11, cell read 0.44, column decoder to bank-group mux 1.01, bank-group mux to global I/O 1.23,
# TSV 0.5, silicon interposer I/O 0.3 pJ/bit. A PE on the cube's logic die pays every stage but the
# interposer's (AttAcc's "buffer-die" PIM prices its reads the same way).
BANK_PJ_PER_BIT = Constant("bank to PE", 0.11 + 0.44 + 1.01 + 1.23 + 0.5, "pJ/bit",
                     "O'Connor et al., Fine-Grained DRAM, MICRO 2017: HBM2 read, cell 0.11 + 0.44, bank to "
                     "global I/O 1.01 + 1.23, TSV 0.5 pJ/bit; the 0.3 pJ/bit interposer I/O left out (the PE is on "
                     "the logic die), as itemised in the AttAcc simulator's src/config.py")
IPCQ_PJ_PER_BIT = Constant("IPCQ link", 310 / 256, "pJ/bit",
                     "Keckler, Dally et al., 'GPUs and the Future of Parallel Computing', IEEE Micro 31(5) 2011, "
                     "Table 1, 40 nm: 310 pJ to move 256 bits 10 mm; 10 mm bounds a hop to a neighbour PE on "
                     "the same logic die from above")
FMA_PJ = Constant("fp32 multiply-add", 3.7 + 0.9, "pJ",
            "Horowitz, 'Computing's energy problem', ISSCC 2014, 45 nm (as tabulated in PMC8934428, Table 3): "
            "fp32 multiply 3.7 pJ + fp32 add 0.9 pJ")
CONVERSION_PJ = Constant("bf16 conversion", 0.1, "pJ",
                   "Horowitz ISSCC 2014, 45 nm (PMC8934428, Table 3): a 32-bit integer add, 0.1 pJ, as an upper "
                   "bound (fp32 to bf16 rounds with at most a 16-bit increment; bf16 to fp32 is wiring)")
H100_BYTES_PER_S = Constant("H100 SXM HBM3", 3.35e12, "B/s",
                      "NVIDIA H100 SXM: 3.35 TB/s of HBM3 (3,352 GB/s in the AttAcc simulator's H100 "
                      "configuration, citing the DGX-H100 whitepaper)")


def hbm3_cube(pe_bytes_per_cycle: int = 64, pes_per_cube: int = 8) -> Tech:
    """The default technology: a CUBE is an HBM3 stack whose logic die holds its PEs, so the banks reach
    them through the stack's own channels; the clock is the one at which the simulated DMA rate shares the
    stack's bandwidth over the PEs (819.2 GB/s / 8 PEs / 64 B a cycle = 1.6 GHz)."""
    clock = HBM3_STACK_BYTES_PER_S.value / pes_per_cube / pe_bytes_per_cycle
    return Tech(
        cube_bytes_per_s=HBM3_STACK_BYTES_PER_S,
        clock_hz=Constant("PE clock", clock, "Hz",
                    f"derived: {HBM3_STACK_BYTES_PER_S.name} {HBM3_STACK_BYTES_PER_S.value / 1e9:.1f} GB/s "
                    f"/ {pes_per_cube} PEs / {pe_bytes_per_cycle} B a cycle (the build's DMA_BW)"),
        pe_bytes_per_cycle=pe_bytes_per_cycle,
        bank_pj_per_bit=BANK_PJ_PER_BIT,
        ipcq_pj_per_bit=IPCQ_PJ_PER_BIT,
        fma_pj=FMA_PJ,
        conversion_pj=CONVERSION_PJ,
        gpu_bytes_per_s=H100_BYTES_PER_S,
        pes_per_cube=pes_per_cube,
    )


def at_clock(tech: Tech, hz: float) -> Tech:
    """`tech` with its PE clock at `hz`: the bank bandwidth scales with it (the simulated bytes a cycle stay)."""
    cube = hz * tech.pe_bytes_per_cycle * tech.pes_per_cube
    return replace(tech, name=f"{tech.name} at {hz / 1e9:g} GHz",
                   clock_hz=replace(tech.clock_hz, value=hz, source="given (not the default's derivation)"),
                   cube_bytes_per_s=Constant("cube bank bandwidth", cube, "B/s",
                                       f"derived: {hz / 1e9:g} GHz x {tech.pe_bytes_per_cycle} B a cycle x "
                                       f"{tech.pes_per_cube} PEs"))


# ---------------------------------------------------------------- from a layer record to a cost
def work_from_record(rec: Mapping[str, Any]) -> LayerWork:
    """A layer run's record (tb/ahbm/layer.py's JSON) as LayerWork; ValueError when it is not one whole layer
    that passed (a partial or failed run prices nothing)."""
    if not rec.get("whole_layer"):
        raise ValueError(f"layer record s={rec.get('context')} B={rec.get('b')}: not a whole layer that passed; "
                         "run every CUBE (make layer without CUBES=) and price a passing run")
    cubes = rec["cubes"]
    ms = [c["metrics"] for c in cubes]
    missing = sorted({k for m in ms for k in ("scores", "merges", "stores") if k not in m})
    if missing:
        raise ValueError(f"layer record s={rec['context']} B={rec['b']}: no {', '.join(missing)} (a run from before "
                         "the PEs counted their work); run make layer again")
    slow = max(ms, key=lambda m: m["launch"])
    return LayerWork(
        context=int(rec["context"]), b=int(rec["b"]), rows=int(rec["g"]), d=int(rec["d"]),
        cubes=len(cubes), latency_cycles=int(slow["launch"]), roofline_cycles=int(slow["dma_roof"]),
        bank_bytes=sum(sum(m["dma_bytes"]) for m in ms), ipcq_bytes=sum(int(m["ipcq_bytes"]) for m in ms),
        scores=sum(int(m["scores"]) for m in ms), composites=sum(int(m["composites"]) for m in ms),
        merges=sum(int(m["merges"]) for m in ms), stores=sum(int(m["stores"]) for m in ms),
        sim_elapsed_s=float(rec["elapsed_s"]), dma_bw=int(rec.get("dma_bw", LAYER_DMA_BW)))


def token_cost(work: LayerWork, tech: Tech, layers: int = LAYERS) -> TokenCost:
    """The work of one layer priced in `tech`, as a token of `layers` layers' decode attention."""
    if work.cubes != H_KV:
        raise ValueError(f"{work.cubes} CUBE(s): a token's cost needs the whole layer's {H_KV}")
    if work.dma_bw != tech.pe_bytes_per_cycle:
        raise ValueError(f"the run's DMA moved {work.dma_bw} B a cycle, the technology's PE {tech.pe_bytes_per_cycle}: "
                         f"price it in hbm3_cube(pe_bytes_per_cycle={work.dma_bw})")
    clock = tech.clock_hz.value
    layer_s = work.latency_cycles / clock
    per_token = layers / work.b  # a step runs every layer once and gives each request one token
    energy = {
        "bank": 8 * work.bank_bytes * tech.bank_pj_per_bit.value * per_token,
        "fma": work.fmas * tech.fma_pj.value * per_token,
        "ipcq": 8 * work.ipcq_bytes * tech.ipcq_pj_per_bit.value * per_token,
        "conversion": work.conversions * tech.conversion_pj.value * per_token,
    }
    kv = kv_bytes(work.context, work.b, work.d)["batched"]
    return TokenCost(work, layer_s, work.b / (layers * layer_s), energy_pj=energy,
                     roofline_tokens_per_s=work.b / (layers * work.roofline_cycles / clock),
                     gpu_tokens_per_s=work.b / (layers * kv / tech.gpu_bytes_per_s.value))


__all__ = ["Constant", "EVENTS", "at_clock", "FMA_PJ", "HBM3_STACK_BYTES_PER_S", "LayerWork", "Tech", "TokenCost", "hbm3_cube",
           "token_cost", "work_from_record"]
