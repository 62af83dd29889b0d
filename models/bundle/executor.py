"""Run a compiled bundle's plan on a host: the loader's round loop, written once for every machine.

The RTL machine (tb/bundle/rtl_run.py, through the orchestrator's AXI port) and
the machine model (models/machine/event_model.py) run exactly the same steps,
because both hand this loop a :class:`Host`: read and write a host register,
upload the staged slots, poll a register, wait for landing, read and write
DRAM. The loop is a coroutine; the RTL host awaits simulated time in it, the
model's host never suspends and :func:`run_sync` drives it to the end.

Per round (units.md §H, models/bundle/loader.py builds the operations):

1. the baselines of the awaited nodes, read before anything of the round is
   staged or run;
2. every staged slot uploaded (five 64-bit words per flit, low word first);
3. the commands: seed, kick (poll PROG_STAT idle, the PROG_* writes, KICK),
   await (poll NODE_STATUS for exact equality);
4. landing: every posted write the round caused has landed before anything
   else reads DRAM or NODE_STATUS (completion is not landing, §H.5); then
   each awaited node is read again and must still be exactly on target (a
   surplus signal that arrived after the poll is an overshoot);
5. the plan's host relayouts after that round (read, gather, write).

Each round's timing is stamped on the host's clock (``host.cycle()``: the
simulated clock on the RTL) at the moments upstream's ``timing_rtl.json``
uses: the round's start before its baselines, each KICK write as it is
issued, each await as the poll that met it returns (models/bundle/round_timing.py).

Before the first round of every kernel call but the first (models/bundle/calls.py)
the image span is read (``ExecResult.snapshots``: what one kernel handed to the
next, judged kernel by kernel, models/bundle/kernel_judge.py) and a host that
has a ``kernel_boundary(round)`` method is told. At the end the image span is
read back. Hard failures raise (a poll that
never matches, writes that never land, a read of unlanded data, a model host
that finds work it was never told to await still in flight: :class:`Unawaited`); the rest is
recorded in :class:`ExecResult` for the caller to judge. Bad input is refused
before anything runs (:func:`check_machine`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Coroutine, Mapping, Protocol, TypeVar

import numpy as np

from models.bundle.calls import kernel_starts
from models.bundle.reader import Bundle
from models.bundle.loader import COUNT_MOD, Poll, RoundProgram, Write, plan_rounds
from models.machine.layouts import Machine, UnitKind
from models.orch.host_port import NodeStatus, ProgStat, Reg, flit_to_words, node_status_addr, stage_addr
from models.bundle.round_timing import RoundTiming

Coord = tuple[int, int]
T = TypeVar("T")


class PollFailed(AssertionError):
    """A poll that did not see its value: a timeout on the RTL, a machine gone quiet in the model."""


class NotLanded(AssertionError):
    """Posted writes still outstanding: a landing that timed out, or a DRAM read that would read stale data."""


class Unawaited(AssertionError):
    """The host went on (landing, then a read-back or the next round) while work it never awaited was still in
    flight: a race on the hardware, named by the machine model (models/machine/event_model.py)."""


class MachineMismatch(ValueError):
    """A bundle compiled for a machine this one is not (refused before anything runs)."""


class Host(Protocol):
    """What the round loop needs of a machine (tb/bundle/rtl_run.py on the RTL, models/machine/event_model.py)."""

    slots: int  # the orchestrator's staging slots

    async def read(self, addr: int) -> int: ...

    async def write(self, addr: int, value: int) -> None: ...

    async def stage(self, slots: Mapping[int, int]) -> None: ...

    async def poll(self, cmd: Poll, what: str) -> int: ...

    async def wait_landed(self, what: str) -> None: ...

    async def read_dram(self, addr: int, nbytes: int) -> np.ndarray: ...

    async def write_dram(self, addr: int, data: np.ndarray) -> None: ...

    def cycle(self) -> int: ...


def stage_writes(slots: Mapping[int, int], nslots: int) -> list[tuple[int, int]]:
    """(address, word) of every staging write, slot by slot, five words each, low word first."""
    return [(stage_addr(slot, w, nslots), word) for slot in sorted(slots)
            for w, word in enumerate(flit_to_words(slots[slot]))]


def describe_poll(cmd: Poll, value: int, why: str) -> str:
    """One line naming what a failed poll waited for and what it saw (for an await: node, baseline,
    expected and seen counts and the node's last signal)."""
    if cmd.node is not None:
        st = NodeStatus.decode(value)
        seen = st.count if st.valid else 0
        target = (cmd.baseline + cmd.expected) % COUNT_MOD
        return (f"await at node ({cmd.node[0]},{cmd.node[1]}): expected count {target} (baseline {cmd.baseline} "
                f"+ {cmd.expected}), seen {seen} ({(seen - cmd.baseline) % COUNT_MOD} signal(s) since the baseline); "
                f"the node's last signal: {st.describe()}; {why}")
    if cmd.addr == Reg.PROG_STAT:
        st = ProgStat.decode(value)
        return (f"PROG_STAT never showed the dispatcher idle (run={int(st.run)}, {st.left} flit(s) left, credit "
                f"{st.credit}); {why}")
    return f"{cmd.name} reads {value:#x}, waited for {cmd.want:#x} under mask {cmd.mask:#x}; {why}"


@dataclass
class RoundResult:
    """What one round did, node by node, beside what upstream's model run observed."""

    index: int
    name: str
    unit: str
    staged: int  # slots uploaded
    kicked: int  # flits the kicks dispatch
    baselines: dict[Coord, int]
    after: dict[Coord, int] = field(default_factory=dict)  # counts once the round's writes landed
    last: dict[Coord, tuple[int, int]] = field(default_factory=dict)  # (code, arg) of each node's last signal
    expected: dict[Coord, int] = field(default_factory=dict)  # signals the plan awaits per node
    observed: dict[Coord, tuple[int, int]] = field(default_factory=dict)  # upstream: (baseline, after)
    cycles: int = 0
    relayouts: int = 0
    dram_read: int | None = None  # bytes the units read from / wrote to DRAM during the round (None: unknown)
    dram_written: int | None = None
    timing: RoundTiming | None = None  # the round's figures as timing_rtl.json defines them (models/bundle/round_timing.py)

    def signals(self) -> dict[Coord, int]:
        """Signals each awaited node sent during the round (after landing)."""
        return {n: (self.after[n] - self.baselines[n]) % COUNT_MOD for n in self.after}


@dataclass
class ExecResult:
    """A bundle's run: rounds, the final image span, and every deviation that is not a hard failure."""

    bundle: str
    rounds: list[RoundResult] = field(default_factory=list)
    image: np.ndarray | None = None
    problems: list[str] = field(default_factory=list)
    cycles: int = 0
    # the image span as it stood before each kernel call's first round (round number -> bytes), from the
    # second call on: what one kernel handed to the next (models/bundle/calls.py, kernel_judge.py)
    snapshots: dict[int, np.ndarray] = field(default_factory=dict)

    def signals(self) -> dict[Coord, int]:
        """Signals per node over the whole run (awaited nodes)."""
        out: dict[Coord, int] = {}
        for r in self.rounds:
            for n, k in r.signals().items():
                out[n] = out.get(n, 0) + k
        return out


def expected_signals(b: Bundle) -> dict[Coord, int]:
    """Signals per node the bundle's plan awaits over all rounds."""
    out: dict[Coord, int] = {}
    for rnd in b.rounds:
        for node, count in rnd.awaits:
            out[node] = out.get(node, 0) + count
    return out


def described_as(b: Bundle, machine: Machine) -> list[tuple[str, Any, Any]]:
    """Each field of bundle.json's ``machine`` entry beside the same fact of `machine`: (field, the bundle's
    value, the machine's value), in the bundle's notation. The name is not compared: it is how the caller
    picked `machine` (models.machine.layouts.get_machine)."""
    m = b.meta["machine"]
    return [
        ("units.MG", sorted(m["units"]["MG"]), sorted(map(list, machine.clusters))),
        ("units.VC", sorted(m["units"]["VC"]), sorted(map(list, machine.vector_cores))),
        ("agent", m["agent"], list(machine.agent) if machine.agent is not None else None),
        ("mag", m["mag"], list(machine.mag)),
        ("routers", m["routers"], [machine.nx, machine.ny]),
        ("stage_flits", m["stage_flits"], machine.stage_slots),
        ("inst_depth", m["inst_depth"], machine.inst_depth),
        ("mem_window_base", f"{int(m['mem_window_base'], 16):#x}", f"{machine.mem_base:#x}"),  # canonical hex
    ]


def check_machine(b: Bundle, machine: Machine) -> None:
    """Refuse, before anything runs, a bundle compiled for another machine description than `machine` (every
    field of its ``machine`` entry must be this machine's), or one whose steps exceed the machine: one line
    naming the field, both values and the fix."""
    for name, compiled, have in described_as(b, machine):
        if compiled != have:
            raise MachineMismatch(f"bundle {b.name} was compiled for machine.{name} = {compiled} (bundle.json), "
                                  f"machine {machine.name} has {have} (models/machine/layouts.py); recompile it for "
                                  f"{machine.name} as described there, or describe the machine it was compiled for "
                                  f"there under a name of its own")
    if machine.units.get(machine.agent) != UnitKind.ORCH:
        raise MachineMismatch(f"machine {machine.name}: the agent {machine.agent} is not an orchestrator; a compiled "
                              f"plan needs one there")
    machine.dram_offset(b.image_base, len(b.image))  # the image span must fit the DRAM (raises, naming the fix)
    for i, entry in enumerate(b.meta["plan"]):
        if entry["kind"] != "round":
            continue
        for j, step in enumerate(entry["steps"]):
            at = f"bundle.json plan[{i}].steps[{j}] (round {entry['round']}, {step['op']})"
            if step["op"] == "seed" and step["credits"] > machine.inst_depth:
                raise MachineMismatch(f"{at} credits: {step['credits']}, machine {machine.name}'s instruction FIFOs "
                                      f"hold {machine.inst_depth} (inst_depth); recompile the bundle so that no seed "
                                      f"exceeds it")
            if step["op"] == "kick" and step["base"] + len(step["flits"]) > machine.stage_slots:
                raise MachineMismatch(f"{at} base: {step['base']} + {len(step['flits'])} flit(s) reaches slot "
                                      f"{step['base'] + len(step['flits']) - 1}, machine {machine.name} stages "
                                      f"{machine.stage_slots} (stage_slots, 0..{machine.stage_slots - 1}); recompile "
                                      f"the bundle with shorter windows")


def _observed(b: Bundle) -> dict[int, dict[Coord, tuple[int, int]]]:
    out: dict[int, dict[Coord, tuple[int, int]]] = {}
    for p in b.meta["plan"]:
        if p["kind"] == "round":
            out[int(p["round"])] = {tuple(int(v) for v in k.split(",")): (int(o["baseline"]), int(o["after"]))
                                    for k, o in p.get("observed", {}).items()}
    return out


async def _baselines(host: Host, nodes: tuple[Coord, ...]) -> dict[Coord, int]:
    out = {}
    for node in nodes:
        st = NodeStatus.decode(await host.read(node_status_addr(node)))
        out[node] = st.count if st.valid else 0
    return out


async def run_round(host: Host, b: Bundle, prog: RoundProgram, observed: Mapping[Coord, tuple[int, int]],
                    problems: list[str]) -> RoundResult:
    """One round on `host` (the steps of the module doc), its result."""
    rnd = prog.round
    tag = f"bundle {b.name} round {rnd.index} ({rnd.name}, {rnd.unit})"
    c0 = host.cycle()
    traffic = getattr(host, "dram_traffic", None)  # (bytes read, bytes written) through the DRAM's ports
    moved0 = traffic() if traffic is not None else None
    base = await _baselines(host, prog.await_nodes)
    res = RoundResult(rnd.index, rnd.name, rnd.unit, len(prog.stage), sum(len(k.flits) for k in rnd.kicks), base,
                      observed=dict(observed))
    await host.stage(prog.stage)
    kicks: list[int] = []  # the clock as each KICK write is issued, and as each await is seen met
    met: list[tuple[Coord, int]] = []
    for cmd in prog.commands(base):
        if isinstance(cmd, Write):
            if cmd.addr == Reg.PROG_KICK:
                kicks.append(host.cycle())
            await host.write(cmd.addr, cmd.value)
        else:
            await host.poll(cmd, tag)
            if cmd.node is not None:
                met.append((cmd.node, host.cycle()))
                res.expected[cmd.node] = cmd.expected
    res.timing = RoundTiming.of_stamps(rnd.index, c0, kicks, met)
    await host.wait_landed(f"{tag}: after its awaits")
    for node in prog.await_nodes:
        st = NodeStatus.decode(await host.read(node_status_addr(node)))
        res.after[node] = st.count
        res.last[node] = (st.code, st.arg)
        target = (base[node] + res.expected[node]) % COUNT_MOD
        if st.count != target:
            problems.append(f"{tag}: node ({node[0]},{node[1]}) count {st.count} once the writes landed, the await "
                            f"matched {target} (baseline {base[node]} + {res.expected[node]}): "
                            f"{(st.count - target) % COUNT_MOD} surplus signal(s)")
    if moved0 is not None:
        moved1 = traffic()
        res.dram_read, res.dram_written = moved1[0] - moved0[0], moved1[1] - moved0[1]
    for relayout in prog.relayouts:
        old = await host.read_dram(relayout.addr, relayout.read_nbytes)
        await host.write_dram(relayout.addr, relayout.apply(old))
        res.relayouts += 1
    res.cycles = host.cycle() - c0
    return res


async def execute(b: Bundle, host: Host, machine: Machine, out: ExecResult | None = None) -> ExecResult:
    """Load the image, run every round in plan order, read the image span back (see the module doc).

    `out`, when given, is filled as the run goes (each round appended as it finishes) and returned, so a
    caller whose run is stopped part way (a watchdog, a poll that failed) still holds the rounds it finished."""
    check_machine(b, machine)
    programs = plan_rounds(b)
    observed = _observed(b)
    out = ExecResult(b.name) if out is None else out
    starts = kernel_starts(b.meta)
    c0 = host.cycle()
    await host.write_dram(b.image_base, b.image)
    started = getattr(host, "round_started", None)  # a host whose waits are budgeted per round (event_model)
    for position, prog in enumerate(programs):
        if started is not None:
            started(position)
        if prog.round.index in starts:  # a kernel boundary: every write landed (run_round waited), relayouts done
            out.snapshots[prog.round.index] = await host.read_dram(b.image_base, len(b.image))
            boundary = getattr(host, "kernel_boundary", None)  # a host that judges kernels (bound/machine.py)
            if boundary is not None:
                boundary(prog.round.index)
        out.rounds.append(await run_round(host, b, prog, observed.get(prog.round.index, {}), out.problems))
    if started is not None:
        started(len(programs))
    await host.wait_landed(f"bundle {b.name}: before the final readback")
    out.image = await host.read_dram(b.image_base, len(b.image))
    out.cycles = host.cycle() - c0
    return out


def run_sync(coro: Coroutine[Any, Any, T]) -> T:
    """Drive a coroutine that never suspends (a model host) to its result."""
    try:
        coro.send(None)
    except StopIteration as stop:
        return stop.value
    coro.close()
    raise RuntimeError("the round loop suspended: a model host must answer every call at once")


def compare_observed(res: ExecResult) -> list[str]:
    """Per round and node: baseline and count after the round equal upstream's model run (a fresh machine)."""
    out = []
    for r in res.rounds:
        for node, (ob, oa) in r.observed.items():
            got = (r.baselines.get(node), r.after.get(node))
            if got != (ob, oa):
                out.append(f"round {r.index} node ({node[0]},{node[1]}): baseline/after {got}, upstream's run "
                           f"observed ({ob}, {oa})")
    return out


__all__ = ["ExecResult", "Host", "MachineMismatch", "NotLanded", "PollFailed", "RoundResult", "Unawaited", "check_machine",
           "described_as", "compare_observed", "describe_poll", "execute", "expected_signals", "run_round", "run_sync",
           "stage_writes"]
