"""The whole-plan driver: a compiled bundle on the golden machine model with every lane's error carried along.

:func:`derive` runs the bundle's plan through the same loader and round loop
as models/machine/event_model.py (models/bundle/executor.py), on a :class:`BoundMachine`:
the golden unit models replaced by their shadowed subclasses
(models/bundle/bound/{mag,cluster,vector}.py, bit for bit the same flits) and a
network that carries, beside each flit, the error array of the data it holds
(paired payload against payload with what the sender derived). The host's
relayouts between rounds gather the errors as they gather the data. At the end
each output port's FP16 lanes have an absolute error bound against the exact
real-number math of the program from its FP16 inputs; :data:`SAFETY` times it
is the bound the judge applies (models/bundle/lane_bound.py).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np

from models.bundle.calls import call_of_round, kernel_calls
from models.bundle.reader import Bundle
from models.bundle.executor import execute, run_sync
from models.noc.flit import FIELDS, FlitType
from models.bundle.loader import Relayout, plan_rounds
from models.bundle.round_budget import DeliveryBudget
from models.machine.event_model import Factory, MachineModel, ModelHost, ModelRun, model_run
from models.machine.layouts import FUSED4, Machine, UnitKind, get_machine
from models.vector.lanes import word_to_u16
from models.vector.link import Event

from .cluster import BoundCluster
from .ledger import Ledger, OpLoss
from .mag import ERR, EXACT, FLOOR, INPUT, LANES_PER_WORD, BoundMag, exact_word
from .port import ErrorPort
from .rules import SAFETY, BoundError, f16, h16
from .vector import BoundVectorCore

DATA_TYPES = frozenset({FlitType.MEM_RD_RESP, FlitType.MEM_WR_DATA, FlitType.CU_DATA})

BOUND_UNIT_MODELS: Mapping[UnitKind, Factory] = {
    UnitKind.VECTOR: lambda c, mm: BoundVectorCore(c, mm.machine.mag),
    UnitKind.MAG: lambda c, mm: BoundMag(c, mm.dram, base=mm.machine.mem_base),
    UnitKind.CLUSTER: lambda c, mm: BoundCluster(c, mm.machine.mag),
}


class BoundMachine(MachineModel):
    """MachineModel whose network carries each data flit's error array beside it."""

    def __init__(self, machine: Machine) -> None:
        self.errs: deque[np.ndarray | None] = deque()
        self.producer: ErrorPort | None = None
        super().__init__(machine, BOUND_UNIT_MODELS)
        self.ledger = Ledger()  # each operation's own error, per kernel call (ledger.py)
        for unit in self.units.values():
            if hasattr(unit, "ledger"):
                unit.ledger = self.ledger

    def enter_call(self, index: int) -> None:
        """Kernel call `index` runs now: what the units write is its result, what they round its loss."""
        self.bound_mag.call = self.ledger.call = index

    def _send(self, events: list[Event]) -> None:
        for ev in events:
            self.errs.append(self._error_of(ev))
        super()._send(events)

    def _error_of(self, ev: Event) -> np.ndarray | None:
        ftype = FIELDS["type"].extract(ev.flit)
        if ftype not in DATA_TYPES:
            return None
        box = self.producer.outbox if self.producer is not None else None
        payload = FIELDS["payload"].extract(ev.flit)
        if box and box[0][0] == payload:
            return box.popleft()[1]
        if ftype == FlitType.CU_DATA:
            return None  # a burst's descriptor
        raise BoundError(f"a {FlitType(ftype).name} flit to {ev.dst} left without an error bound")

    def step(self) -> bool:
        if not self.queue:
            return False
        ev, err = self.queue[0], self.errs.popleft()
        dst = (FIELDS["dst_x"].extract(ev.flit), FIELDS["dst_y"].extract(ev.flit))
        unit = self.units.get(dst)
        self.producer = unit if isinstance(unit, ErrorPort) else None
        if self.producer is not None:
            self.producer.inbound = err
        moved = super().step()
        if self.producer is not None and self.producer.outbox:
            raise BoundError(f"the unit at {dst} derived errors for {len(self.producer.outbox)} data flit(s) it did "
                             f"not send")
        self.producer = None
        return moved

    @property
    def bound_mag(self) -> BoundMag:
        assert isinstance(self.mag, BoundMag)
        return self.mag


@dataclass(frozen=True)
class Constant:
    """An image region the compiler filled with one constant: the real number it stands for (None: unstated)."""

    addr: int
    nbytes: int
    value: float | None


CONST_TAG = ":const"  # a constant region's name ends ":const<value>" (clients/README.md)


def constants(b: Bundle) -> list[Constant]:
    """The bundle's constant regions (bundle.json dram.regions of kind "constant")."""
    out = []
    for r in b.meta.get("dram", {}).get("regions", []):
        if r.get("kind") != "constant":
            continue
        name = str(r.get("name", ""))
        try:
            value: float | None = float(name.rsplit(CONST_TAG, 1)[1]) if CONST_TAG in name else None
        except ValueError:
            value = None
        out.append(Constant(int(r["addr"], 16), int(r["nbytes"]), value))
    return out


def constant_error(stored: np.ndarray, value: float | None) -> np.ndarray:
    """How far a constant's FP16 lanes are from the number the program means: exactly |stored - value| when
    the bundle states it, else half an FP16 ulp (a constant rounded to nearest)."""
    return np.abs(stored - value) if value is not None else h16(stored)


UNBOUNDED = -2  # a lane handed over at a kernel boundary without a finite bound: never judged, carried as is


@dataclass
class Checkpoint:
    """The lanes one or more kernel calls produced, as they stand at a kernel boundary (before round
    ``before_round``; None: the end of the program): where they are in the image (FP16 lane index), which call
    produced each, its exact value and its bound (SAFETY applied; inf: none derived)."""

    before_round: int | None
    lanes: np.ndarray  # int64 FP16 lane index into the image span
    call: np.ndarray  # int32
    exact: np.ndarray  # float64
    bound: np.ndarray  # float64
    outside_image: int = 0  # produced lanes the image span does not hold (not judged)


class BoundHost(ModelHost):
    """ModelHost whose DRAM writes keep the shadow in step: the image load is exact except its constant
    regions (FP16 images of real constants, :func:`constant_error`); each relayout (in plan order) gathers
    the errors as it gathers the data. At each kernel boundary (models/bundle/calls.py) the lanes the kernels
    before it produced are taken down as a :class:`Checkpoint` and handed on as exact inputs (error 0, exact
    value = the value), so no bound compounds from one kernel into the next."""

    def __init__(self, mm: BoundMachine, relayouts: list[Relayout], consts: list[Constant], b: Bundle) -> None:
        super().__init__(mm, DeliveryBudget.of(b, mm.machine))
        self.bmm = mm
        self.relayouts = deque(relayouts)
        self.consts = consts
        self.loaded = False
        self.image_base, self.image_lanes = b.image_base, len(b.image) // 2
        self.calls = call_of_round(b.meta)
        self.checkpoints: list[Checkpoint] = []
        mm.enter_call(kernel_calls(b.meta)[0].index)

    def kernel_boundary(self, before_round: int) -> None:
        """The executor's hook before the first round of a call: take the produced lanes down, hand them on."""
        self.checkpoints.append(self.checkpoint(before_round))
        self.bmm.enter_call(self.calls[before_round].index)

    def checkpoint(self, before_round: int | None) -> Checkpoint:
        """Every lane a call wrote since the last boundary (module doc of :class:`Checkpoint`); a lane with a
        finite bound is reset to an exact input, one without is marked UNBOUNDED and carried. The words are
        taken as one (words, 16) array each for calls, shadow planes and values: a forward pass hands some
        ten thousand words over at a boundary, and a dozen array operations per word were most of its cost."""
        mag = self.bmm.bound_mag
        words = sorted(w for w, c in mag.call_words.items() if np.any(c >= 0))
        mag.forget_quantised()
        if not words:
            return Checkpoint(before_round, np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.float64),
                              np.zeros(0, np.float64), 0)
        base_off = self.mm.machine.dram_offset(self.image_base, 2)
        produced = np.stack([mag.word_calls(w) for w in words])                 # (words, 16)
        planes = np.stack([mag.word_err(w) for w in words])                     # (words, PLANES, 16), a copy
        idx = ((np.asarray(words, dtype=np.int64) * 32 - base_off) // 2)[:, None] + np.arange(LANES_PER_WORD)
        mine = produced >= 0
        inside = mine & (idx >= 0) & (idx < self.image_lanes)
        outside = int(np.sum(mine & ~inside))
        lanes, calls = idx[inside].astype(np.int64), produced[inside].astype(np.int32)
        exact = planes[:, EXACT][inside].astype(np.float64)
        bound = (SAFETY * planes[:, ERR][inside]).astype(np.float64)
        finite = mine & np.isfinite(planes[:, ERR])
        value = f16(np.stack([word_to_u16(mag.dram.word(w)) for w in words]))  # the lanes as the next kernel reads them
        planes[:, ERR] = np.where(finite, 0.0, planes[:, ERR])
        planes[:, FLOOR] = np.where(finite, -np.inf, planes[:, FLOOR])
        planes[:, EXACT] = np.where(finite, value, planes[:, EXACT])
        left = np.where(finite, INPUT, np.where(mine, UNBOUNDED, produced)).astype(np.int32)
        all_input = np.all(left == INPUT, axis=1)
        for i, w in enumerate(words):
            mag.err_words[w] = planes[i]
            if all_input[i]:
                mag.call_words.pop(w, None)
            else:
                mag.call_words[w] = left[i]
        return Checkpoint(before_round, lanes, calls, exact, bound, outside)

    async def write_dram(self, addr: int, data: np.ndarray) -> None:
        await super().write_dram(addr, data)
        off = self.mm.machine.dram_offset(addr, np.asarray(data).nbytes)
        mag = self.bmm.bound_mag
        if not self.loaded:  # the image: FP16 inputs, exact
            self.loaded = True
            values = f16(np.frombuffer(np.ascontiguousarray(data).tobytes(), dtype="<u2"))
            n = values.size
            mag.set_lane_planes(off, np.stack([np.zeros(n), np.full(n, -np.inf), values]))
            for c in self.consts:
                lanes = f16(np.frombuffer(self.mm.dump(c.addr, c.nbytes).tobytes(), dtype="<u2"))
                c_off = self.mm.machine.dram_offset(c.addr, c.nbytes)
                meant = lanes if c.value is None else np.full(lanes.size, c.value)
                mag.set_lane_planes(c_off, np.stack([constant_error(lanes, c.value), np.full(lanes.size, -np.inf),
                                                     meant]))
            return
        if not self.relayouts or self.relayouts[0].addr != addr:
            raise BoundError(f"a host DRAM write at {addr:#x} that is no relayout of the plan")
        r = self.relayouts.popleft()
        old = mag.lane_planes(off, r.read_nbytes // 2)
        old_calls = mag.lane_calls(off, r.read_nbytes // 2)
        g = r.gather.reshape(-1)
        mag.set_lane_planes(off, np.where(g >= 0, old[:, np.clip(g, 0, None)], exact_word()[:, :1]))
        mag.set_lane_calls(off, np.where(g >= 0, old_calls[np.clip(g, 0, None)], INPUT))


@dataclass
class DerivedBound:
    """Per output port: the logical lanes' error bound (SAFETY applied) and exact value, both since the last
    kernel boundary (for a one-kernel bundle: from the inputs); and every kernel's produced lanes at the
    boundary after it (:class:`Checkpoint`, the last one at the end)."""

    bounds: dict[str, np.ndarray]
    exact: dict[str, np.ndarray] = field(default_factory=dict)
    checkpoints: list[Checkpoint] = field(default_factory=list)
    losses: list[OpLoss] = field(default_factory=list)  # each operation's own error per call (ledger.py)


def port_lanes(b: Bundle, port: str, lanes: np.ndarray) -> np.ndarray:
    """A port region's per-slot array -> the logical output's (through ``<port>__slots``)."""
    slots = b.expected_models[f"{port}__slots"]
    return lanes[np.where(slots >= 0, slots, 0)]


def derive(b: Bundle) -> DerivedBound:
    """Run `b`'s plan with every lane's error carried (module doc); BoundError names what it cannot bound."""
    return derive_with_run(b)[0]


def derive_with_run(b: Bundle) -> tuple[DerivedBound, ModelRun]:
    """:func:`derive`, and the run itself as the golden machine model's run (the shadowed units change no
    bit: models.machine.event_model.run_bundle gives the same image, signals, hazards and counts), so a
    caller that needs both runs the plan once."""
    machine = get_machine(b.meta["machine"]["name"]) if "machine" in b.meta else FUSED4
    mm = BoundMachine(machine)
    relayouts = [r for prog in plan_rounds(b) for r in prog.relayouts]
    host = BoundHost(mm, relayouts, constants(b), b)
    run = model_run(mm, run_sync(execute(b, host, machine)))
    bounds, exact = {}, {}
    for port, reg in b.outputs.items():
        off = machine.dram_offset(reg.addr, reg.nbytes)
        planes = mm.bound_mag.lane_planes(off, reg.nbytes // 2)
        bounds[port] = SAFETY * port_lanes(b, port, planes[ERR])
        exact[port] = port_lanes(b, port, planes[EXACT])
    return DerivedBound(bounds, exact, host.checkpoints + [host.checkpoint(None)],
                        list(mm.ledger.entries.values())), run


__all__ = ["BOUND_UNIT_MODELS", "BoundHost", "BoundMachine", "Checkpoint", "Constant", "DerivedBound", "UNBOUNDED",
           "constant_error", "derive_with_run",
           "constants", "derive", "port_lanes"]
