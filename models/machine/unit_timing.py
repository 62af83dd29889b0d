"""The machine's timing facts: every cycle figure a unit's RTL takes from upstream, named once.

Structure that is not a number (the orchestrator reading one 64-bit staging
word a cycle, the router's three registers a hop) is the RTL itself and is
documented with its unit; the router's input FIFO depth is the machine's
``fifo_depth``.

A co-simulation model is used to ask "what if": what if the vector core issued
twice as fast, what if the memory answered sooner. So each timing fact is a
named value here, with the rule it times and where it comes from, and a
machine's description (models/machine/layouts.py, ``Machine.timing``) may override any
of them by name ("vector.FETCH": 2). tb/system/machine_top.py writes every fact of a
unit into the generated top as a parameter of that unit's module, so the
machine that runs is the one described here.

The RTL declares the same parameters with the same defaults (for the vector
core: rtl/vector/vc_timing_params.vh), so a unit bench without a machine runs
upstream's timing too; tests/unit/machine/test_unit_timing.py reads the RTL and checks
every default here against it. Sources: the upstream RTL (KohakuTPU 7703ee8),
the measured rules of clients/vec_timing/latency.md (its rule numbers), or
"ours" for a value calibrated for our own link or sequencer (said so).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Iterable, Mapping


@dataclass(frozen=True)
class TimingFact:
    """One timing parameter of a unit's module: its name there, upstream's value, its limits, why."""

    unit: str  # the unit kind's value in models.machine.layouts.UnitKind ("vector", ...)
    name: str  # the Verilog parameter of the unit's top module
    value: int
    lo: int
    hi: int
    rule: str
    source: str
    measure: str = "cycles"  # what the value counts

    @property
    def key(self) -> str:
        return f"{self.unit}.{self.name}"

    @property
    def limits(self) -> str:
        """The fact's range and what it counts, as a refusal names them: "1..64 cycles"."""
        return f"{self.lo}..{self.hi} {self.measure}"


_VEC = "vec_timing/latency.md"
_VEC_SRC = "KohakuTPU 7703ee8 src/kohakutpu/vector/vec_core.v"
VECTOR_FACTS: tuple[TimingFact, ...] = (
    TimingFact("vector", "FIRST_T", 2, 1, 64, "a RUN's first word executes at kernel count 2",
               f"{_VEC} rule 1; {_VEC_SRC}: a RUN enters the fetch at its second state"),
    TimingFact("vector", "FETCH", 4, 1, 64, "cycles from a word's execute to its successor's at least",
               f"{_VEC} rule 2; {_VEC_SRC}: four fetch states per word"),
    TimingFact("vector", "RAW_LAT", 18, 1, 255, "last beat of a word writing V[vd] to a beat that names V[vd]",
               f"{_VEC} rule 4: the lanes' scoreboard"),
    TimingFact("vector", "STAGE_LAT", 15, 0, 255, "each further chain stage adds this to RAW_LAT",
               f"{_VEC} rule 4"),
    TimingFact("vector", "PEND_BITS", 5, 1, 8, "width of the scoreboard's pending-beat count (wraps: H4)",
               f"{_VEC} rule 4; units.md V.8 H4", "bits"),
    TimingFact("vector", "PIPE_DRAIN", 79, 1, 1023, "last beat to an empty lane pipeline",
               f"{_VEC} rule 5: the 14-stage lane pipeline"),
    TimingFact("vector", "PORT_SETUP", 5, 0, 255, "a whole-chunk word (VLD, VST, VCVT, VSHUF, VBCAST S->V) after "
               "the pipeline is empty, before its chunks", f"{_VEC} rule 5"),
    TimingFact("vector", "LD16_CHUNK", 4, 1, 64, "VLD FP16, cycles per chunk", f"{_VEC} rule 5"),
    TimingFact("vector", "LD32_CHUNK", 8, 1, 64, "VLD FP32, cycles per chunk", f"{_VEC} rule 5"),
    TimingFact("vector", "ST16_CHUNK", 3, 1, 64, "VST FP16, cycles per chunk", f"{_VEC} rule 5"),
    TimingFact("vector", "ST32_CHUNK", 4, 1, 64, "VST FP32, cycles per chunk", f"{_VEC} rule 5"),
    TimingFact("vector", "XFORM_CHUNK", 3, 1, 64, "VCVT, VSHUF, VBCAST S->V, cycles per chunk", f"{_VEC} rule 5"),
    TimingFact("vector", "V2S_T", 8, 1, 255, "VBCAST V->S after the pipeline is empty", f"{_VEC} rule 5"),
    TimingFact("vector", "RED_TAIL", 66, 1, 1023, "VRED kinds 0..5: the empty pipeline to the next word",
               f"{_VEC} rule 7: the reduction tree"),
    TimingFact("vector", "SETI_T", 6, 1, 64, "VSETI (two words) to the next word", f"{_VEC} rule 8"),
    TimingFact("vector", "BAR_TAIL", 4, 1, 64, "VBAR: its fills landed to the next word", f"{_VEC} rule 8"),
    TimingFact("vector", "HALT_TAIL", 2, 1, 64, "VHALT: to the kernel count's last cycle", f"{_VEC} rule 1"),
    TimingFact("vector", "HALT_LEAD", 1, 0, 8, "VHALT retires this many counts before its last",
               "ours: calibrated so the completion leaves when upstream's does"),
    TimingFact("vector", "FILL_SETUP", 8, 1, 255, "VFILL of n lines: next word at start + FILL_SETUP + XFER_GAP*n",
               f"{_VEC} rule 9"),
    TimingFact("vector", "DRAIN_SETUP", 10, 1, 255, "VDRAIN of n words: next word at t + DRAIN_SETUP + XFER_GAP*n",
               f"{_VEC} rule 10; {_VEC_SRC}: three states per drained word"),
    TimingFact("vector", "XFER_GAP", 3, 2, 255, "cycles between VFILL read requests, between drained words",
               f"{_VEC} rules 9, 10; KohakuTPU 7703ee8 src/kohakutpu/vector/vec_cu.v: a registered ready pulse "
               "per request"),
    TimingFact("vector", "NODE_EXTRA", 1, 0, 64, "a node-form VDRAIN of 2+ words: its descriptor flit",
               f"{_VEC} rule 10"),
    TimingFact("vector", "FILL_LAND", 5, 0, 255, "our link's last fill response to the fill counting as landed",
               f"ours: calibrated on {_VEC}'s VFILL programs (rule 9)"),
    TimingFact("vector", "XFER_LEAD", 0, 0, 255, "a VFILL / VDRAIN's walk start to its first flit",
               "ours: the flits' pace is rule 9 / 10's; their offset does not reach a kernel count"),
)

_CL = "KohakuTPU 7703ee8 src/kohakutpu/matmul"
CLUSTER_FACTS: tuple[TimingFact, ...] = (
    TimingFact("cluster", "ISSUE_LAT", 2, 1, 16, "a sweep command's issue to its operands at the cascade",
               f"{_CL}/mx_cluster_mgr.v: the manager's address and control stages, L1 read latency 1"),
    TimingFact("cluster", "CASCADE_LAT", 17, 1, 64, "operands to the partial at the accumulator",
               f"{_CL}/mx_cluster_core.v, mx_tcu.v: 4 TCUs, 11 + 2 per further TCU"),
    TimingFact("cluster", "ACU_STAGES", 6, 1, 16, "an accumulator command to its tile write (an EMIT's FP16 "
               "result two edges later)", f"{_CL}/mx_acu_fp.v"),
    TimingFact("cluster", "REUSE_MIN", 5, 1, 16, "cycles between two commands to one accumulator tile; the "
               "small-tile sweep pacing and the busy tail", f"{_CL}/mx_acu_fp.v, mx_cluster_mgr.v"),
    TimingFact("cluster", "DQ_DEPTH", 128, 16, 1024, "the drain queue's depth", f"{_CL}/mx_cluster_node.v", "entries"),
    TimingFact("cluster", "DQ_LIMIT", 112, 1, 1023, "drain results outstanding before the drain's issue holds",
               f"{_CL}/mx_cluster_node.v", "results"),
)

_MAG = "KohakuTPU 7703ee8 src/kohakuaccel/mas/core"
MAG_FACTS: tuple[TimingFact, ...] = (
    TimingFact("mag", "RDQ_DEPTH", 64, 2, 4096, "read-request intake (flits)", f"{_MAG}/mag_mem_port.v: Q_DEPTH", "flits"),
    TimingFact("mag", "WRQ_DEPTH", 64, 2, 4096, "write intake (flits)", f"{_MAG}/mag_mem_port.v: Q_DEPTH", "flits"),
    TimingFact("mag", "Q_MARGIN", 4, 0, 64, "an intake reads busy at DEPTH - Q_MARGIN flits",
               f"{_MAG}/mag_mem_port.v: Q_MARGIN", "flits"),
    TimingFact("mag", "WR_SLOTS", 16, 1, 256, "writes taken and not yet acknowledged",
               f"{_MAG}/mag_mem_port.v: WR_SLOTS", "writes"),
    TimingFact("mag", "QUANT_LAT", 8, 1, 64, "the quantiser's result, edges after an entry's 8th beat",
               "KohakuTPU 7703ee8 src/kohakutpu/transform/mx_quant.v"),
    TimingFact("mag", "AR_FIFO_LAT", 3, 1, 64, "the DRAM port's AR (and AW) crossing",
               f"{_MAG}/mag_dram_port.v (async FIFO): inferred, AR + R = 6 gives the measured 12-cycle read"),
    TimingFact("mag", "R_FIFO_LAT", 3, 1, 64, "the DRAM port's R crossing", f"{_MAG}/mag_dram_port.v: inferred"),
    TimingFact("mag", "W_FIFO_LAT", 3, 1, 64, "the DRAM port's W crossing", f"{_MAG}/mag_dram_port.v: inferred"),
    TimingFact("mag", "B_FIFO_LAT", 3, 1, 64, "the DRAM port's B crossing", f"{_MAG}/mag_dram_port.v: inferred"),
    TimingFact("mag", "R_FIFO_DEPTH", 64, 2, 4096, "the DRAM port's R FIFO entries", f"{_MAG}/mag_dram_port.v", "entries"),
)
_RAM = "KohakuTPU 7703ee8 src/kohakuaccel/verif/axi_ram.v"
DRAM_FACTS: tuple[TimingFact, ...] = (
    TimingFact("dram", "RD_LATENCY", 1, 1, 64, "a read request to its word (1: the AXI RAM's first beat the "
               "cycle after the address)", f"{_RAM}; a larger value is a slower memory"),
    TimingFact("dram", "RD_INTERVAL", 1, 1, 64, "cycles between the DRAM's read words (1: one beat a cycle)",
               _RAM),
)

ORCH_FACTS: tuple[TimingFact, ...] = (
    TimingFact("orch", "TX_DEPTH", 16, 2, 4096, "dispatched flits queued for the link (word reads pause when full)",
               "KohakuTPU 7703ee8 src/kohakuaccel/noc/ctrl/noc_orchestrator.v: TX_DEPTH", "flits"),
)

FACTS: Mapping[str, TimingFact] = MappingProxyType(
    {f.key: f for f in VECTOR_FACTS + CLUSTER_FACTS + MAG_FACTS + DRAM_FACTS + ORCH_FACTS})


def _refusal(key: str, value: object) -> str | None:
    """Why `key`=`value` is not an override of a timing fact (None: it is one)."""
    fact = FACTS.get(key)
    if fact is None:
        return (f"'{key}' names no timing fact; known: {', '.join(sorted(FACTS))} "
                f"(models/machine/unit_timing.py)")
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{key}={value!r} is not a whole number; give an integer in {fact.limits} ({fact.rule})"
    if not fact.lo <= value <= fact.hi:
        return (f"{key}={value!r} is outside {fact.limits} ({fact.rule}; upstream's {fact.value}); "
                f"give an integer in range")
    return None


def check_overrides(machine: str, overrides: Mapping[str, int]) -> None:
    """Refuse an override that names no fact or lies outside the fact's limits, in one line."""
    for key, value in overrides.items():
        why = _refusal(key, value)
        if why:
            raise ValueError(f"machine {machine}: timing {why}")


TIMING_ENV = "AGSIM_TIMING"  # the overrides a bench's machine is built with, in canonical form (below)


def parse_overrides(items: Iterable[str], where: str = "--timing") -> dict[str, int]:
    """`FACT=VALUE` items (``vector.FETCH=2``) as overrides; ValueError in one line naming the item, the fact,
    its limits and what it counts, before anything is built. A fact given twice is refused."""
    out: dict[str, int] = {}
    for item in items:
        key, eq, raw = item.strip().partition("=")
        key, raw = key.strip(), raw.strip().replace("_", "")
        if not eq or not key:
            raise ValueError(f"{where} {item!r}: write FACT=VALUE, e.g. vector.FETCH=2 (the facts: "
                             f"models/machine/unit_timing.py)")
        try:
            value: object = int(raw)
        except ValueError:
            value = raw
        why = _refusal(key, value)
        if why:
            raise ValueError(f"{where} {why}")
        if key in out:
            raise ValueError(f"{where} {key} given twice ({out[key]} and {value}); give each fact once")
        out[key] = int(raw)  # _refusal passed: a whole number in range
    return out


def canonical(overrides: Mapping[str, int]) -> str:
    """The overrides as one text, facts in name order (``dram.RD_LATENCY=8,vector.FETCH=2``): the key of a
    build folder and the value of TIMING_ENV; "" for none."""
    return ",".join(f"{k}={overrides[k]}" for k in sorted(overrides))


def from_canonical(text: str) -> dict[str, int]:
    """:func:`canonical`'s text back as overrides (checked as :func:`parse_overrides` checks them)."""
    return parse_overrides([t for t in text.split(",") if t.strip()], TIMING_ENV)


def unit_params(unit: str, overrides: Mapping[str, int]) -> list[tuple[str, int]]:
    """Every timing parameter of `unit`'s module, as the machine sets it: (name, value) in the list's order."""
    return [(f.name, overrides.get(f.key, f.value)) for f in FACTS.values() if f.unit == unit]
