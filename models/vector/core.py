"""The vector core's architectural behaviour (units.md V.1-V.12), untimed and bit exact.

``VectorCore.take(flit)`` hands the core one inbound flit in the order the core
takes it and returns the flits the core sends because of it (completions
included, as cu_base sends them). A RUN runs to VHALT or a fault (or, in the model only, to the watchdog
of models/vector/runaway.py when it will not reach VHALT); it waits only
where the core waits on the outside world (VBAR, VHALT and a VFILL behind one
still outstanding), and resumes when ``take`` delivers the fill response it
waits for. Instructions arriving while a RUN is in flight queue behind it (one
CU_INST at a time, V.2).

Timing is not modelled, so the RUN result (the kernel's cycle count, V.2) is
not known here: the completion of a RUN that retires with INST_COMPLETE carries
``Event.wild_arg``; every other bit of every flit is predicted exactly.

Decisions the spec leaves to us (docs/vector_core.md lists them):
* a gathered chain stage whose opcode is not an ALU opcode (0x12..0x1F) faults
  F_OPCODE (undefined in units.md V.5);
* a MEM_RD_RESP whose txn no fill is waiting for is dropped and recorded in
  ``protocol_errors`` (the RTL's monitor prints an ERROR line);
* the program counter is 9 bits and wraps modulo 512, as upstream's;
* reads of state the hardware does not reset (V.1) before anything wrote it are recorded in
  ``undefined_reads`` (a machine run counts them as errors; the unit bench's random programs may rely on
  the model's zeros): a RUN fetching an IMEM word no IMEM flit has written (once per RUN; a program
  counter run past the program, or a RUN flit's pc damaged, shows this way), and a predicated write
  reading a predicate register no compare has written;
* ALU words update the "most recent ALU word" pr/pm that ANY/ALL (D4) and EXPSUM
  (D5) read at decode, before their faults are checked, as upstream does.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Optional

import numpy as np

from models.cu.base import completion
from models.noc.flit import FIELDS, FlitType, flit_src, flit_type, make_flit

from . import isa
from .chain_hazards import ChainHazard, ChainTracker, chain_dest, draining, fp32_store, stage_key
from .hazards import Hazard, IssueClass, Issued, PredicateTracker
from .isa import (
    ALU_LAST, CMP_OPS, IMEM_WORDS, K_CONST, L1_WORDS, LANES, N_DESC, N_PREGS, N_SREGS, N_VREGS, SRC_C,
    SRC_K, SRC_S, SRC_V, VL_MAX, WORD_MASK, Fault, Mode, RedKind, Word, word_of,
)
from .lanes import Stage, run_chain, u16_to_word, word_to_u16
from .link import Event, LinkMixin, TakesFlits
from .runaway import DEFAULT_BUDGET, LAP, RunBudget, Runaway, over_budget, repeated
from .words import LoopState, WaitFills, WordFault, WordsMixin

Coord = tuple[int, int]
MAG_DEFAULT: Coord = (0, 1)
# The words one method carries out (the rest are ALU words, VSETI, VBAR / VHALT and the transfers).
_HANDLERS = {isa.OP_VCVT: "_vcvt", isa.OP_VRED: "_vred", isa.OP_VLD: "_vld", isa.OP_VST: "_vst",
             isa.OP_VBCAST: "_vbcast", isa.OP_VSHUF: "_vshuf", isa.OP_VSETVL: "_vsetvl",
             isa.OP_VSETMODE: "_vsetmode", isa.OP_VLOOP: "_vloop"}
_BELOW_VL = np.arange(VL_MAX + 1)[:, None] > np.arange(VL_MAX)  # row vl: the lanes below VL
_BELOW_VL.setflags(write=False)
DRAINING_OPS = frozenset({isa.OP_VSETMODE, isa.OP_VHALT, isa.OP_VLD, isa.OP_VST, isa.OP_VCVT, isa.OP_VSHUF,
                          isa.OP_VBCAST})


@dataclass
class _Run:
    inst: int
    pc: int
    boundary: bool = False  # an instruction has just retired: loop closure and F_CUDATA come first
    start: int = 0  # the pc the RUN began at
    travel: int = 0  # words the pc advanced outside VLOOP's repeats (models/vector/runaway.py)
    executed: int = 0  # words (a chain: one) issued by this RUN
    repeats: int = 0  # loop-backs taken
    unwritten: bool = False  # this RUN fetched a word no IMEM flit wrote (reported once)
    laps: int = 0  # laps of IMEM the travel has passed
    seen: dict = field(default_factory=dict)  # control state at each lap passed -> the lap


@dataclass
class Stats:
    """What a stream of RUNs exercised (for coverage reports)."""

    executed: Counter = field(default_factory=Counter)  # mnemonic (VRED.<kind>, VSETMODE.<mode>) -> count
    faults: Counter = field(default_factory=Counter)  # fault name -> count
    chains: Counter = field(default_factory=Counter)  # depth -> chains executed
    runs: int = 0

    @property
    def instructions(self) -> int:
        return sum(self.executed.values())


Sources = tuple[tuple[int, int], tuple[int, int], tuple[int, int]]  # (selector, index) of operands a, b, c


def stage_sources(words: list[Word]) -> list[Sources]:
    """The (selector, index) of each chain stage's operands a, b, c: stage 0 reads the first word's register
    fields, a later stage its own word's (V.5)."""
    first = words[0]
    return [((g.sa, first.va if k == 0 else g.va), (g.sb, first.vb if k == 0 else g.vb),
             (g.sc, first.vc if k == 0 else g.vc)) for k, g in enumerate(words)]


class VectorCore(WordsMixin, LinkMixin, TakesFlits):
    """The vector core: state, the CU_INST envelope, the kernel sequencer and the link side."""

    def __init__(self, coord: Coord = (1, 1), mag: Coord = MAG_DEFAULT) -> None:
        self.coord = coord
        self.mag = mag
        self.stats = Stats()
        self.hazards: list[Hazard | ChainHazard] = []  # H1..H4 reports in issue order (units.md V.8)
        self.run_budget: RunBudget = DEFAULT_BUDGET  # a RUN's instructions at most (the host sets it per round)
        self.protocol_errors: list[str] = []
        self.undefined_reads: list[str] = []  # reads of never-written IMEM or predicates (V.1: not reset)
        self.reset()

    # ------------------------------------------------------------ state (V.1)
    def reset(self) -> None:
        """Reset: VL 128, FLAT, K3 = 0, descriptors base 0 / strides 0 / bounds 1; S, V, P, IMEM, L1 zero."""
        self.imem = [0] * IMEM_WORDS
        self.imem_written = [False] * IMEM_WORDS  # IMEM is not reset (V.1): a fetch of an unwritten word is an error
        self.p_written = [False] * N_PREGS  # nor are P0..P3: a predicated write before any compare reads garbage
        self.l1 = np.zeros((L1_WORDS, LANES), dtype=np.uint16)
        self.v = np.zeros((N_VREGS, VL_MAX), dtype=np.uint32)
        self.s = [0] * N_SREGS
        self.k3 = 0
        self.p = np.zeros((N_PREGS, VL_MAX), dtype=bool)
        self.vl = VL_MAX
        self.mode = int(Mode.FLAT)
        self.base = [0] * N_DESC
        self.dims = [[(0, 1)] * 4 for _ in range(N_DESC)]
        self.loop = LoopState()
        self.last_pr = 0  # pr of the most recent ALU, VRED or chain word (ANY/ALL, D4)
        self.last_pm = 0  # pm of the most recent ALU word (EXPSUM, D5)
        self.fills: dict[int, int] = {}  # txn -> L1 word of an outstanding VFILL response
        self.cud_pending = False
        self.burst: Optional[_Burst] = None
        self.queue: list[int] = []
        self.run: Optional[_Run] = None
        self.tracker = PredicateTracker()
        self.chains = ChainTracker()

    def write_l1(self, addr: int, word: int) -> None:
        """Backdoor: one 256-bit L1 word (lane i = bits [16i+15:16i])."""
        self.l1[addr % L1_WORDS] = word_to_u16(word)

    def l1_word(self, addr: int) -> int:
        return u16_to_word(self.l1[addr % L1_WORDS])

    # ------------------------------------------------------------ inbound
    def take(self, flit: int) -> list[Event]:
        """One inbound flit; returns what the core sends because of it."""
        ftype = flit_type(flit)
        if ftype == FlitType.CU_INST:
            self.queue.append(flit)
            return self._drain_queue()
        if ftype == FlitType.CU_DATA:
            return self._cu_data(flit)
        if ftype == FlitType.MEM_RD_RESP:
            return self._fill_response(flit)
        return []  # every other type is dropped

    @property
    def waiting_fills(self) -> bool:
        """A RUN waits for fill responses (VBAR, VHALT or a VFILL behind an outstanding one)."""
        return self.run is not None

    def busy_with(self) -> str | None:
        """The work this core still has, in words (a RUN in progress, CU_INST queued), or None when idle:
        a host that goes on without awaiting it races it (models/machine/event_model.py)."""
        x, y = self.coord
        parts = []
        if self.run is not None:
            fills = f", waiting for {len(self.fills)} VFILL response(s)" if self.fills else ""
            parts.append(f"its RUN from pc {self.run.start} in progress at pc {self.run.pc}{fills}")
        if self.queue:
            parts.append(f"{len(self.queue)} CU_INST queued behind it")
        return f"vector core ({x},{y}): {' and '.join(parts)}" if parts else None

    def _flit(self, dst: Coord, ftype: int, txn: int, last: int, payload: int, rsvd: int = 0) -> Event:
        return Event(dst, make_flit(dst, self.coord, ftype, txn, last, payload, rsvd))

    # ------------------------------------------------------------ the envelope (V.2)
    def _drain_queue(self) -> list[Event]:
        out: list[Event] = []
        while self.queue and self.run is None:
            out.extend(self._execute(self.queue.pop(0)))
        return out

    def _done(self, inst: int, fault: int | None, result: int = 0, wild: bool = False) -> list[Event]:
        flit = completion(self.coord, inst, fault is not None, fault if fault is not None else result)
        last = FIELDS["last"].extract(inst)
        dst = flit_src(inst)
        return [Event(dst, flit, wild_arg=wild and fault is None and not last)]

    def _execute(self, inst: int) -> list[Event]:
        pl = inst & WORD_MASK
        op = pl >> 252
        if op == isa.INST_IMEM:
            self.imem[(pl >> 243) & 0x1FF] = pl & 0xFFFF_FFFF
            self.imem_written[(pl >> 243) & 0x1FF] = True
        elif op == isa.INST_DESC:
            ad, fld, value = (pl >> 249) & 7, (pl >> 246) & 7, isa.desc_value(pl)
            if fld == isa.FLD_BASE:
                self.base[ad] = value
            elif 1 <= fld <= 4:
                self.dims[ad][fld - 1] = isa.unpack_dim(value)
        elif op == isa.INST_RUN:
            return self._start_run(inst, (pl >> 243) & 0x1FF)
        return self._done(inst, None)

    # ------------------------------------------------------------ the kernel (V.5)
    def _start_run(self, inst: int, pc: int) -> list[Event]:
        self.loop = LoopState()
        self.tracker.reset()
        self.chains.reset()
        self.stats.runs += 1
        if self.cud_pending:
            self.cud_pending = False
            self.stats.faults["F_CUDATA"] += 1
            return self._done(inst, Fault.F_CUDATA)
        self.run = _Run(inst, pc, start=pc)
        return self._resume()

    def _resume(self) -> list[Event]:
        r = self.run
        assert r is not None
        out: list[Event] = []
        budget = self.run_budget.words
        while True:
            if r.boundary:
                r.boundary = False
                if self.cud_pending:
                    self.cud_pending = False
                    return self._finish(out, Fault.F_CUDATA)
                lp = self.loop
                if lp.active and r.pc == lp.end:
                    if lp.count > 1:
                        lp.count -= 1
                        r.pc = lp.top
                        r.travel = lp.mark  # a repeat: back to the travel at the body's top
                        r.repeats += 1
                    else:
                        lp.active = False
            pc = r.pc
            w = word_of(self.imem[pc])
            if not self.imem_written[pc] and not r.unwritten:
                r.unwritten = True
                self._undefined(f"a RUN fetched IMEM word {pc}, which no IMEM flit has written since reset "
                                f"(units.md V.1: IMEM is not reset; the hardware runs whatever it holds)")
            try:
                halted = self._step(w, r, out)
            except WaitFills:
                return out
            except WordFault as f:
                return self._finish(out, f.code)
            if halted:
                return self._finish(out, None)
            r.boundary = True
            r.executed += 1
            r.travel += (r.pc - pc) % IMEM_WORDS
            if r.travel >= (r.laps + 1) * LAP:
                self._lap_passed(r)
            if r.executed > budget:
                self._runaway(r, over_budget(self.run_budget))

    def _lap_passed(self, r: _Run) -> None:
        """The travel passed another lap of IMEM: a control state seen at an earlier lap is a runaway
        (models/vector/runaway.py)."""
        r.laps = r.travel // LAP
        lp = self.loop
        state = (r.pc, self.vl, self.mode, tuple(self.s), self.k3, self.cud_pending, tuple(sorted(self.fills.items())),
                 (lp.active, lp.count, lp.top, lp.end, r.travel - lp.mark) if lp.active else None)
        first = r.seen.setdefault(state, r.laps)
        if first != r.laps:
            self._runaway(r, repeated(r.laps, first, r.travel))

    def _runaway(self, r: _Run, reason: str) -> None:
        self.run = None  # the core is stuck for good; its flits of this delivery are dropped
        raise Runaway(self.coord, r.start, r.pc, r.executed, r.repeats, reason)

    def _finish(self, out: list[Event], fault: int | None) -> list[Event]:
        assert self.run is not None
        inst = self.run.inst
        self.run = None
        if fault is not None:
            self.stats.faults[isa.FAULT_NAMES[fault]] += 1
        return out + self._done(inst, fault, 0, wild=True)

    def _undefined(self, line: str) -> None:
        if line not in self.undefined_reads and len(self.undefined_reads) < 8:
            self.undefined_reads.append(line)

    def _count(self, name: str) -> None:
        self.stats.executed[name] += 1

    def _step(self, w: Word, r: _Run, out: list[Event]) -> bool:
        """Execute the word at r.pc; advance r.pc. True at VHALT."""
        op = w.op
        if op <= ALU_LAST:
            self._alu(w, r)
            return False
        name = w.name
        pc = r.pc
        method = _HANDLERS.get(op)
        if method is not None:
            getattr(self, method)(w)  # by name, so a subclass's override runs
            self._upstream_word(pc, w)
            self._issue(pc, w, IssueClass.DRAINS if op in DRAINING_OPS else IssueClass.OTHER)
            self._count(name if op not in (isa.OP_VRED, isa.OP_VSETMODE) else
                        f"VRED.{RedKind(w.kind).name}" if op == isa.OP_VRED else f"VSETMODE.{Mode(w.mode).name}")
            r.pc = (pc + 1) % IMEM_WORDS
            return False
        if op == isa.OP_VSETI:
            imm = self.imem[(pc + 1) % IMEM_WORDS] & isa.E8_MASK
            if w.sa == SRC_K:
                self.k3 = imm
            else:
                self.s[w.vd] = imm
            self._issue(pc, w, IssueClass.OTHER)
            self._count("VSETI.K3" if w.sa == SRC_K else "VSETI")
            r.pc = (pc + 2) % IMEM_WORDS
            return False
        if op in (isa.OP_VBAR, isa.OP_VHALT) or (op == isa.OP_VFILL and self.fills):
            if self.fills:
                raise WaitFills()
            self._issue(pc, w, IssueClass.DRAINS if op == isa.OP_VHALT else IssueClass.OTHER)
            self._count(name)
            if op == isa.OP_VHALT:
                return True
            r.pc = (pc + 1) % IMEM_WORDS
            return False
        # VFILL / VDRAIN
        self._transfer(w, out)
        self._issue(pc, w, IssueClass.OTHER)
        self._count(name if op == isa.OP_VFILL or not w.node else "VDRAIN.node")
        r.pc = (pc + 1) % IMEM_WORDS
        return False

    def _issue(self, pc: int, w: Word, cls: IssueClass, writes_p: int | None = None, chained: bool = False) -> None:
        self.tracker.issue(Issued(pc, w.raw, cls, writes_p, chained))

    def _upstream_word(self, pc: int, w: Word) -> None:
        """H3 and H4 of a non-ALU word that issued (V.8); a draining word ends the chains' window."""
        if w.op == isa.OP_VST and w.dt == isa.DT_FP32:
            self.hazards.append(fp32_store(pc, w, self.vl, self._nchunk()))
        if draining(w):
            self.chains.reset()
        else:
            self._report(self.chains.read(pc, w))

    def _report(self, hz: ChainHazard | None) -> None:
        if hz is not None:
            self.hazards.append(hz)

    def _check_pred(self, pred: int, pc: int, w: Word, name: str = "H1") -> None:
        hz = self.tracker.check_read(pred, pc, w.raw, self.vl, name)
        if hz is not None:
            self.hazards.append(hz)

    # ------------------------------------------------------------ ALU words and chains
    def _operand(self, sel: int, idx: int, stage0: bool) -> np.ndarray | None:
        if sel == SRC_V:
            assert stage0
            return self.v[idx]
        if sel == SRC_S:
            return np.full(VL_MAX, self.s[idx], dtype=np.uint32)
        if sel == SRC_K:
            k = idx & 3
            return np.full(VL_MAX, self.k3 if k == 3 else K_CONST[k], dtype=np.uint32)
        return None  # C: the previous stage's value

    def _alu(self, w: Word, r: _Run) -> None:
        self.last_pr, self.last_pm = w.pr, w.pm
        if self.mode == Mode.TREE:
            raise WordFault(Fault.F_OPCODE)  # D6: an ALU word in TREE mode (normative)
        if SRC_C in w.selectors:
            raise WordFault(Fault.F_CHAIN)
        depth = isa.CHAIN_DEPTH[Mode(self.mode)]
        words = [w]
        for k in range(1, depth):
            g = word_of(self.imem[(r.pc + k) % IMEM_WORDS])
            self.last_pr, self.last_pm = g.pr, g.pm
            if g.op > ALU_LAST:
                raise WordFault(Fault.F_OPCODE)  # ours: a gathered non-ALU word is undefined in units.md V.5
            if SRC_V in g.selectors:
                raise WordFault(Fault.F_VSRC)
            words.append(g)
        sources = stage_sources(words)
        stages = [Stage(g.op, *(self._operand(sel, idx, k == 0) for sel, idx in src))
                  for k, (g, src) in enumerate(zip(words, sources))]
        self._report(self.chains.read(r.pc, w))
        if depth > 1:
            keys = [stage_key(g, self.s, self.k3) for g in words[1:]]
            self._report(self.chains.chain(r.pc, w, keys, self.vl, chain_dest(words[-1])))
        value, pred = run_chain(stages)
        last = words[-1]
        below = _BELOW_VL[self.vl].copy()
        compare = last.op in CMP_OPS
        if not compare and last.pm:
            if not self.p_written[last.pr]:
                self._undefined(f"pc {r.pc}: {w.name} is predicated on P{last.pr}, which no compare has written "
                                f"since reset (units.md V.1: P is not reset)")
            self._check_pred(last.pr, r.pc, w)
            p = self.p[last.pr]
            below &= p if last.pm == 1 else ~p
        self._observe_alu(words, sources, below)
        if compare:
            assert pred is not None
            self.p[last.pr] = np.where(below, pred, self.p[last.pr])
            self.p_written[last.pr] = True
            writes_p: int | None = last.pr
        else:
            writes_p = None
            self.v[last.vd] = np.where(below, value, self.v[last.vd])
        self._issue(r.pc, w, IssueClass.FLAT_ALU if depth == 1 else IssueClass.OTHER, writes_p, depth > 1)
        self._count(w.name if depth == 1 else f"CHAIN{depth}")
        if depth > 1:
            self.stats.chains[depth] += 1
            for g in words:
                self._count(f"{g.name}@stage")
        r.pc = (r.pc + depth) % IMEM_WORDS

    def _observe_alu(self, words: list[Word], sources: list[Sources], written: np.ndarray) -> None:
        """Called once per ALU word or chain, after the operands are gathered and before anything is written
        (``written``: the lanes the result goes to, VL and predicate applied). Nothing here; an analysis that
        shadows the core (models/bundle/bound/vector.py) overrides it."""

    # ------------------------------------------------------------ snapshot
    def snapshot(self) -> dict:
        """The architectural state a differential test compares after every RUN."""
        return {"l1": self.l1.copy(), "v": self.v.copy(), "s": list(self.s), "k3": self.k3, "p": self.p.copy(),
                "vl": self.vl, "mode": self.mode}


__all__ = ["Event", "MAG_DEFAULT", "Sources", "Stats", "VectorCore", "stage_sources"]
