"""Run the vector-core rounds of a compiled bundle on the golden model, unmodified.

The kicks go to one ``VectorCore`` per node, as the dispatcher sends them
(dst = the node, src = the agent, units.md H.4); every core's VFILL reads and
VDRAIN writes are served by one DRAM shared by all (CoreWithMemory). What this
runs:

* bundles whose plan is vector-core rounds only (ops, norms, softmax): from
  the input image;
* bundles whose cluster rounds only produce a temp in DRAM that the vector
  rounds read (the unfused kernels): the cluster rounds are not run here; the
  temp regions are taken from upstream RTL's final DRAM (``expected_rtl``), so
  the vector stage is judged alone.
Fused bundles (the cluster drains into a core's L1) and host relayouts need
the cluster and the loader; they are refused with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from models.bundle.reader import Bundle
from models.cu.base import SigCode, signal_fields
from models.noc.flit import FIELDS, FlitType

from .core import VectorCore
from .hazards import Hazard
from .memory import CoreWithMemory


@dataclass
class Replay:
    """What a replay did: the final image, the signals each node sent to the agent, hazards, faults."""

    bundle: str
    image: np.ndarray
    signals: dict[tuple[int, int], int] = field(default_factory=dict)  # CU_SIGNALs to the agent per node
    faults: list[str] = field(default_factory=list)
    hazards: list[Hazard] = field(default_factory=list)
    instructions: int = 0
    runs: int = 0


def replay_refusal(b: Bundle) -> str | None:
    """Why a bundle cannot be replayed on the vector-core model alone, or None."""
    kinds = b.plan_kinds
    if "host_convert" in kinds:
        return "its plan has host relayouts between rounds (the loader's job)"
    units = [k.split(":")[1] for k in kinds]
    if "VC" not in units:
        return "it has no vector-core round"
    if "MG" in units:
        if units.index("VC") < max(i for i, u in enumerate(units) if u == "MG"):
            return "a cluster round follows a vector round"
        if not any(r.kind == "temp" for r in b.regions):
            return "its cluster drains into the vector cores' L1 (fused): the cluster model is needed"
    return None


def replay_vc(b: Bundle) -> Replay:
    """Run every vector-core round of `b` on the golden model; the DRAM image it ends with."""
    why = replay_refusal(b)
    if why is not None:
        raise ValueError(f"bundle {b.name} cannot be replayed on the vector-core model: {why}")
    image = b.image.copy()
    final = b.expected_rtl["dram_final"]
    for r in b.regions:
        if r.kind == "temp":  # produced by the cluster rounds, which are not run here
            lo = r.addr - b.image_base
            image[lo:lo + r.nbytes] = final[lo:lo + r.nbytes]
    dram: dict[int, int] = {a >> 5: w for a, w in b.words(image).items()}
    cores: dict[tuple[int, int], CoreWithMemory] = {}
    out = Replay(b.name, image)
    for rnd in b.rounds:
        if rnd.unit != "VC":
            continue
        for kick in rnd.kicks:
            node = kick.node
            if node not in cores:
                cores[node] = CoreWithMemory(VectorCore(node, b.mag), dram)
            for ev in cores[node].take_all(kick.dispatched(b.agent)):
                if FIELDS["type"].extract(ev.flit) == FlitType.CU_SIGNAL and ev.dst == b.agent:
                    out.signals[node] = out.signals.get(node, 0) + 1
                    code, arg = signal_fields(ev.flit)
                    if code == SigCode.FAULT:
                        out.faults.append(f"node {node}: FAULT code {arg}")
    for c in cores.values():
        out.hazards.extend(c.core.hazards)
        out.instructions += c.core.stats.instructions
        out.runs += c.core.stats.runs
    for i in range(0, len(image), 32):
        word = dram.get((b.image_base + i) >> 5, 0)
        image[i:i + 32] = np.frombuffer(word.to_bytes(32, "little"), dtype=np.uint8)
    return out


__all__ = ["Replay", "replay_refusal", "replay_vc"]


def output_mismatches(b: Bundle, image: np.ndarray, expected: str = "rtl") -> dict[str, np.ndarray]:
    """Per output region: the FP16 slot indices where `image` differs from the bundle's expected final DRAM
    ("rtl": upstream RTL's, bit exact; "models": upstream's Python models')."""
    final = (b.expected_rtl if expected == "rtl" else b.expected_models)["dram_final"]
    out = {}
    for name, reg in b.outputs.items():
        lo = reg.addr - b.image_base
        got = image[lo:lo + reg.nbytes].view(np.uint16)
        want = final[lo:lo + reg.nbytes].view(np.uint16)
        out[name] = np.flatnonzero(got != want)
    return out


__all__ += ["output_mismatches"]
