"""A whole machine as golden models: every unit's event model on an ideal network, a host, a DRAM.

Why: a compiled bundle (clients/) should run on the golden models alone,
through the same host loop the RTL machine runs (models/bundle/executor.py), so the
RTL's final DRAM, signals and counts have an independent judge and a failure
can be located without a simulator.

* **units**: one event model per endpoint, ``take(flit) -> list[Event]``,
  built by :data:`UNIT_MODELS` (one line per kind): a ``VectorCore`` per
  vector core (models.vector), a ``ClusterCore`` per cluster (models.cluster), a
  ``MagUnit`` for the memory agent (models.mag.model; its DRAM a ``DramImage`` whose
  word 0 is the machine's ``mem_base``). A kind without a model yet gets a
  :class:`MissingUnit`, and the rounds that need it are refused by name
  (:func:`model_refusal`), so a partial machine still runs what it can;
* **orchestrator**: models.orch.event_model.OrchModel (staging, PROG_*, credit,
  NODE_STATUS by source);
* **network**: ideal and in order: every event goes to its destination's
  model first in, first out (per (source, destination) order is all the
  protocol guarantees; one global FIFO keeps it, deterministically);
* **host**: ``write(addr, value)``, ``read(addr)``, ``run(until)`` (deliver
  until the condition holds or nothing moves), a DRAM at machine addresses.

Landing is counted as on the RTL top: MEM_WR_DATA flits handed to the network
against DRAM words written; a DRAM read before they agree is refused. When
the host goes on past a round's awaits, only landing may be left: a unit
still working, a dispatch unfinished or a work flit in flight is the race the
hardware may lose, named as ``Unawaited`` (docs/bundle.md, "The models'
watchdogs"). A vector RUN that will not reach VHALT is a ``Runaway``
(models/vector/runaway.py), named with the host's round.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol

import numpy as np

from models.bundle.reader import Bundle
from models.cluster import ClusterCore
from models.bundle.executor import (ExecResult, NotLanded, PollFailed, Unawaited, describe_poll, execute, run_sync,
                                    stage_writes)
from models.noc.flit import FIELDS, FlitType, flit_dst, flit_type
from models.bundle.loader import Poll
from models.bundle.round_budget import DeliveryBudget
from models.machine.layouts import FUSED4, Machine, UnitKind
from models.mag.model import DramImage, MagUnit
from models.orch.event_model import OrchModel
from models.vector.core import VectorCore
from models.vector.link import Event
from models.vector.runaway import Runaway

Coord = tuple[int, int]
# deliveries per run() call when no bundle gives a budget (a bench of the model alone): a livelock ends named,
# not silently; a bundle's waits get theirs from its program (models/bundle/round_budget.py)
MAX_STEPS = 5_000_000


_MEM_WR_DATA = int(FlitType.MEM_WR_DATA)
# What may still be in flight when the host goes on past its awaits: posted writes landing (the host's landing
# wait covers them) and signals to the orchestrator (counted; a surplus shows in the exact-count check after
# landing). Any other flit is work the host did not await.
LANDING_TYPES = frozenset(int(t) for t in (FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA, FlitType.MEM_WR_ACK,
                                           FlitType.CU_SIGNAL))
_TYPE_NAMES = {int(t): t.name for t in FlitType}  # a lookup per delivery instead of an enum construction


def _type_name(code: int) -> str:
    """A flit type's name; a reserved code raises ValueError, as FlitType(code) does."""
    name = _TYPE_NAMES.get(code)
    return name if name is not None else FlitType(code).name


class ModelRefused(ValueError):
    """Something the machine model cannot run (yet): names what and which model is missing."""


class Unit(Protocol):
    def take(self, flit: int) -> list[Event]: ...


class MissingUnit:
    """A unit whose event model does not exist yet: any flit reaching it is refused by name."""

    def __init__(self, coord: Coord, kind: str, model: str) -> None:
        self.coord, self.kind, self.model = coord, kind, model

    def take(self, flit: int) -> list[Event]:
        raise ModelRefused(f"a {FlitType(FIELDS['type'].extract(flit)).name} flit reached the {self.kind} at "
                           f"{self.coord}, whose event model ({self.model}) does not exist yet")


Factory = Callable[[Coord, "MachineModel"], Unit]
# One line per kind: the event model that stands on every endpoint of that kind. A kind whose model is not
# written yet gets a MissingUnit (rounds that need it are refused by name, model_refusal).
UNIT_MODELS: Mapping[UnitKind, Factory] = {
    UnitKind.VECTOR: lambda c, mm: VectorCore(c, mm.machine.mag),
    UnitKind.MAG: lambda c, mm: MagUnit(c, mm.dram, base=mm.machine.mem_base),
    UnitKind.CLUSTER: lambda c, mm: ClusterCore(c, mm.machine.mag),
}


class MachineModel:
    """One machine's unit models on an ideal network, with its host port and DRAM."""

    orch_model: Callable[[Coord, int], OrchModel] = OrchModel  # a subclass may stand a timed one (models/timed)

    def __init__(self, machine: Machine, unit_models: Mapping[UnitKind, Factory] = UNIT_MODELS) -> None:
        orch = machine.coords(UnitKind.ORCH)
        if len(orch) != 1:
            raise ModelRefused(f"machine {machine.name} has {len(orch)} orchestrators; the model's host needs one")
        self.machine = machine
        self.dram = DramImage(machine.dram_words)  # word 0 = machine byte address mem_base
        self.orch = self.orch_model(orch[0], machine.stage_slots)
        self.units: dict[Coord, Unit] = {}
        for coord, kind in machine.units.items():
            if kind == UnitKind.ORCH:
                continue
            if kind not in unit_models:
                raise ModelRefused(f"machine {machine.name}: no event model for the {kind.value} at {coord}")
            self.units[coord] = unit_models[kind](coord, self)
        self.mag = self.units.get(machine.mag) if UnitKind.MAG in machine.units.values() else None
        self.queue: deque[Event] = deque()
        self.steps = 0
        self.delivered: Counter = Counter()  # flit type name -> flits delivered
        self.wr_data_sent = 0
        self.errors: list[str] = []  # undeliverable flits, and what the units' monitors record
        self.max_queued: dict[Coord, int] = {}  # deepest instruction queue seen per unit

    # ------------------------------------------------------------ network
    def _send(self, events: list[Event]) -> None:
        for ev in events:
            if flit_type(ev.flit) == _MEM_WR_DATA:
                self.wr_data_sent += 1
            self.queue.append(ev)

    def step(self) -> bool:
        """Deliver the oldest flit in the network; False when nothing moves."""
        if not self.queue:
            return False
        flit = self.queue.popleft().flit
        self.steps += 1
        dst = flit_dst(flit)
        name = _type_name(flit_type(flit))
        self.delivered[name] += 1
        unit = self.units.get(dst)
        if dst == self.orch.own:
            self._send(self.orch.take(flit))
        elif unit is not None:
            self._send(unit.take(flit))
            queued = len(getattr(unit, "queue", ()))
            if queued > self.max_queued.get(dst, -1):
                self.max_queued[dst] = queued
        else:
            self.errors.append(f"undeliverable flit to {dst} (no endpoint there): type {name}")
        return True

    def run(self, until: Callable[[], bool] | None = None, max_steps: int = MAX_STEPS) -> bool:
        """Deliver until `until()` holds (True) or nothing moves (then `until()`, or True without one)."""
        for _ in range(max_steps):
            if until is not None and until():
                return True
            if not self.step():
                return until() if until is not None else True
        raise ModelRefused(f"the machine model did not go quiet within {max_steps:,} deliveries "
                           f"({len(self.queue)} flit(s) in flight): a livelock")

    # ------------------------------------------------------------ host
    def write(self, addr: int, value: int) -> None:
        self._send(self.orch.write(addr, value))

    def read(self, addr: int) -> int:
        return self.orch.read(addr)

    @property
    def words_written(self) -> int:
        """DRAM words the memory agent's model wrote (its counter, as mag_dram's wr_words)."""
        return int(getattr(self.mag, "words_written", 0))

    @property
    def outstanding_writes(self) -> int:
        return self.wr_data_sent - self.words_written

    def load(self, byte_addr: int, data: np.ndarray) -> None:
        """Backdoor store at a machine byte address (the memory agent learns that the host loaded it)."""
        offset, n = self.machine.dram_offset(byte_addr, np.asarray(data).nbytes), np.asarray(data).nbytes
        self.dram.load_bytes(offset, np.ascontiguousarray(data, dtype=np.uint8).tobytes())
        allow = getattr(self.mag, "allow", None)
        if allow is not None:
            allow(offset // 32, -(-(offset % 32 + n) // 32))

    def dump(self, byte_addr: int, n: int) -> np.ndarray:
        """Backdoor read at a machine byte address."""
        return np.frombuffer(self.dram.read_bytes(self.machine.dram_offset(byte_addr, n), n), dtype=np.uint8).copy()

    def waiting(self) -> list[str]:
        """What each unit still waits for, in words (units whose model can say: ``waiting_on()``)."""
        out = []
        for u in self.units.values():
            why = u.waiting_on() if hasattr(u, "waiting_on") else None
            if why:
                out.append(why)
        return out

    def unawaited_work(self) -> list[str]:
        """Work still in flight beyond landing, in words: a dispatch the orchestrator has not finished, a unit
        still busy (its ``busy_with()``), flits in flight that are not landing writes or signals. Empty when
        the machine has only landing left to do."""
        out = []
        if not self.orch.idle:
            out.append(f"the orchestrator still dispatching ({self.orch.left} flit(s) of its kick left, credit "
                       f"{self.orch.credit})")
        for u in self.units.values():
            why = u.busy_with() if hasattr(u, "busy_with") else None
            if why:
                out.append(why)
        flying = Counter((_type_name(flit_type(ev.flit)), ev.dst) for ev in self.queue
                         if flit_type(ev.flit) not in LANDING_TYPES)
        out += [f"{n} {name} flit(s) in flight to ({dst[0]},{dst[1]})" for (name, dst), n in sorted(flying.items())]
        return out

    def unit_errors(self) -> list[str]:
        """What the network and the units' monitors recorded (each model's own list, by its own name)."""
        out = self.errors + self.orch.errors
        for u in self.units.values():
            for name in ("errors", "violations", "protocol_errors", "undefined_reads"):
                out += list(getattr(u, name, []))
        return out


class ModelHost:
    """executor.Host on a MachineModel: every call answers at once (the network runs inside it).

    `budget`: the most flits one wait may deliver, per round, derived from the program
    (models/bundle/round_budget.py); without one (a bench of the model alone, not a bundle) MAX_STEPS."""

    def __init__(self, mm: MachineModel, budget: DeliveryBudget | None = None) -> None:
        self.mm = mm
        self.slots = mm.machine.stage_slots
        self.budget = budget
        self.position = 0  # the round in plan order (round_started); past the last: the final landing

    def round_started(self, position: int) -> None:
        """The executor starts the round at `position` (plan order): its waits get that round's budget, and the
        vector cores' RUNs started in it their instruction budget."""
        self.position = position
        if self.budget is not None:
            run_budget = self.budget.run_budget(position)
            for unit in self.mm.units.values():
                if hasattr(unit, "run_budget"):
                    unit.run_budget = run_budget

    def _max_steps(self) -> tuple[int, str]:
        if self.budget is None:
            return MAX_STEPS, f"the model's fixed {MAX_STEPS:,} (no bundle gave a budget)"
        return self.budget.for_round(self.position), self.budget.why(self.position)

    async def read(self, addr: int) -> int:
        return self.mm.read(addr)

    async def write(self, addr: int, value: int) -> None:
        self.mm.write(addr, value)

    async def stage(self, slots: Mapping[int, int]) -> None:
        for addr, word in stage_writes(slots, self.slots):
            self.mm.write(addr, word)

    def _holds(self, cmd: Poll) -> Callable[[], bool]:
        """The poll's condition for run(), re-read only when the orchestrator's state may have changed.

        Every register the host reads is the orchestrator's, and only a flit it takes or a host write changes
        it; run() stops at the first True, so between two such events the answer is the last one, False.
        Reading NODE_STATUS before every delivery cost more than most deliveries.
        """
        mm, seen = self.mm, [-1]

        def holds() -> bool:
            if mm.orch.version == seen[0]:
                return False
            seen[0] = mm.orch.version
            return mm.read(cmd.addr) & cmd.mask == cmd.want
        return holds

    def _run(self, what: str, until: Callable[[], bool] | None = None) -> bool:
        """mm.run(until); a unit's watchdog that fires inside it is named with the host's round and step."""
        steps, why = self._max_steps()
        try:
            return self.mm.run(until, steps)
        except Runaway as exc:
            exc.args = (f"{what}: {exc.args[0]}",)
            raise
        except ModelRefused as exc:  # the budget ran out: a livelock, named with the round and the budget's origin
            raise ModelRefused(f"{what}: {exc.args[0]}; the budget of a wait is {steps:,} deliveries = {why}") from None

    async def poll(self, cmd: Poll, what: str) -> int:
        if not self._run(what, self._holds(cmd)):
            waiting = "; ".join(self.mm.waiting()) or "no unit waits for anything"
            raise PollFailed(f"{what}: {describe_poll(cmd, self.mm.read(cmd.addr), 'the machine model went quiet')}"
                             f"; {waiting}")
        return self.mm.read(cmd.addr)

    async def wait_landed(self, what: str) -> None:
        """The host goes on past its awaits: first, nothing but landing may be left (a unit still working, a
        dispatch unfinished or a work flit in flight is a race the hardware may lose: Unawaited, naming it);
        then run until nothing moves (an ideal network has no reason to stop earlier: a surplus signal the
        round causes then shows in the exact-count check after it), and every write must have landed."""
        unawaited = self.mm.unawaited_work()
        if unawaited:
            raise Unawaited(f"{what}: the host goes on (landing, then its reads of DRAM and NODE_STATUS, the "
                            f"next round) while work it did not await is in flight: {'; '.join(unawaited)}; on the "
                            f"hardware this is a race (the host may read before that work's writes land); await "
                            f"every kick's completion (units.md §H.5)")
        self._run(what)
        epoch = getattr(self.mm.mag, "new_epoch", None)  # writes from here on are ordered after these
        if epoch is not None:
            epoch()
        if self.mm.outstanding_writes:
            raise NotLanded(f"{what}: {self.mm.outstanding_writes} write(s) never landed "
                            f"({self.mm.wr_data_sent} MEM_WR_DATA sent, {self.mm.words_written} DRAM words written)")

    async def read_dram(self, addr: int, nbytes: int) -> np.ndarray:
        if self.mm.outstanding_writes:
            raise NotLanded(f"DRAM read of {nbytes} bytes at {addr:#x} refused: {self.mm.outstanding_writes} "
                            f"write(s) outstanding; wait for landing first (units.md §H.5)")
        return self.mm.dump(addr, nbytes)

    async def write_dram(self, addr: int, data: np.ndarray) -> None:
        self.mm.load(addr, data)

    def cycle(self) -> int:
        return self.mm.steps

    def dram_traffic(self) -> tuple[int, int]:
        """(bytes read, bytes written) by the memory agent's requests so far (the RTL's rd/wr_words)."""
        return 32 * int(getattr(self.mm.mag, "words_read", 0)), 32 * self.mm.words_written


@dataclass
class ModelRun:
    """A bundle on the machine model: the executor's result plus what the units did."""

    result: ExecResult
    faults: list[tuple[Coord, int]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    hazards: list[Any] = field(default_factory=list)
    counts: dict[str, Any] = field(default_factory=dict)

    @property
    def image(self) -> np.ndarray:
        assert self.result.image is not None
        return self.result.image


def model_refusal(b: Bundle, unit_models: Mapping[UnitKind, Factory] = UNIT_MODELS,
                  machine: Machine = FUSED4) -> str | None:
    """Why the machine model cannot run `b` yet (a round on a unit kind without an event model), or None."""
    probe = MachineModel(machine, unit_models)
    missing = {u.kind for u in probe.units.values() if isinstance(u, MissingUnit)}
    mg = [r.index for r in b.rounds if r.unit == "MG"]
    if "cluster" in missing and mg:
        return (f"bundle {b.name}: round(s) {mg} run on the clusters (MG), whose event model "
                f"(models.cluster.ClusterCore) does not exist yet; the machine model runs vector-core rounds only")
    return None


def run_bundle(b: Bundle, machine: Machine = FUSED4, unit_models: Mapping[UnitKind, Factory] = UNIT_MODELS) -> ModelRun:
    """Run every round of `b` on a fresh machine model through the loader; refused first if it cannot."""
    why = model_refusal(b, unit_models, machine)
    if why:
        raise ModelRefused(why)
    mm = MachineModel(machine, unit_models)
    return model_run(mm, run_sync(execute(b, ModelHost(mm, DeliveryBudget.of(b, machine)), machine)))


def model_run(mm: MachineModel, res: ExecResult) -> ModelRun:
    """A finished run of a plan on `mm` as a ModelRun: the executor's result and what the units did (a
    machine whose units are the golden models' subclasses, models/bundle/bound, gives the same)."""
    cores = [u for u in mm.units.values() if isinstance(u, VectorCore)]
    run = ModelRun(res, list(mm.orch.faults), mm.unit_errors(), [h for c in cores for h in c.hazards])
    run.counts = {"deliveries": mm.steps, "delivered": dict(mm.delivered), "dispatched": mm.orch.dispatched,
                  "inst_pushed": mm.orch.inst_pushed, "instructions": sum(c.stats.instructions for c in cores),
                  "runs": sum(c.stats.runs for c in cores), "dram_words_written": mm.words_written,
                  "dram_words_read": int(getattr(mm.mag, "words_read", 0)), "wr_data_sent": mm.wr_data_sent,
                  "max_queued": dict(mm.max_queued), "credit": mm.orch.credit}
    return run


__all__ = ["MAX_STEPS", "MachineModel", "MissingUnit", "ModelHost", "ModelRefused", "ModelRun", "UNIT_MODELS",
           "model_refusal", "model_run", "run_bundle"]
