"""The program builder: loops, random filler, fault triggers and the dead code after them, and the
closing of a case (padding, IMEM placement, the CU_INST envelope of IMEM, DESC and RUN writes)."""

from __future__ import annotations

from types import MappingProxyType
from typing import Callable, Sequence

from models.vector import (
    DT_FP16, IMEM_WORDS, LANES, N_DESC, SRC_K, SRC_S, VL_MAX, Mode, desc_payload, encode_alu, encode_bare,
    encode_mem, encode_seti, encode_vloop, pack_dim, program_payloads, run_payload,
)
from models.vector import isa

from .cases import Case
from .tracking import MIN_WORDS, NoRoom, NoSlot
from .units import ALU_OPS, Units
from .values import e8_value


class Builder(Units):
    """Emits one program while tracking what the generator relies on (VL, mode, fills in flight, loop state).

    Unit methods (``u_*``) return the words of one instruction (and any words it
    needs first, e.g. a VBAR), having applied their effect to the tracking;
    ``emit`` appends them. After ``fault_now()`` nothing is tracked any more:
    the rest of the program is never executed.
    """

    # -------------------------------------------------- loops
    def body_units(self) -> list[tuple[int, Callable[[], list[int]]]]:
        """(size, emitter) of the instructions a loop body may hold in the current mode."""
        units: list[tuple[int, Callable[[], list[int]]]] = [
            (1, self.u_vld), (1, self.u_vst), (1, self.u_vbcast), (1, lambda: self.u_vshuf(False)),
            (1, self.u_vcvt), (2, self.u_seti), (1, lambda: [encode_bare("VBAR")])]
        if self.mode == Mode.TREE:
            if self.vl % LANES == 0:
                units.append((1, lambda: self.u_vred(self.rng.randrange(6))))
        else:
            units += [(isa.CHAIN_DEPTH[Mode(self.mode)], self.u_alu)] * 3
        if self.pr_known:
            units.append((1, self.u_anyall))
        return units

    def body(self, length: int) -> list[int]:
        """Loop-body words of exactly `length` (the instructions end exactly at the loop end)."""
        out: list[int] = []
        units = self.body_units()
        while len(out) < length:
            size, fn = self.rng.choice([u for u in units if u[0] <= length - len(out)])
            words = fn()
            assert len(words) == size, (size, words)
            out += words
        return out

    def u_loop(self, count: int, length: int, misaligned: bool = False) -> list[int]:
        """VSETI count; VLOOP; body. `misaligned`: the body length ends inside a VSETI or a chain, so the
        loop never closes (V.5): the body runs once and the loop stays active."""
        if length + (3 if misaligned else 0) > 15 or self.room < length + 8:
            raise NoRoom()
        pre = self.flush()
        s = self.reg()
        body = self.body(length)
        vb = length
        if misaligned:
            multi = [u for u in self.body_units() if u[0] >= 2]
            _, fn = self.rng.choice(multi)
            tail = fn()
            body += tail
            vb = length + self.rng.randint(1, len(tail) - 1)
        if misaligned:
            self.loop = "open"
        elif vb == 0 and count >= 2:
            self.loop = "unsure"  # units.md is silent on whether a 0-word loop with count >= 2 stays active
        return pre + self.seti_raw(s, count) + [encode_vloop(s, vb)] + body

    # -------------------------------------------------- random filler
    def random_unit(self, transfers: bool = True) -> list[int]:
        """One instruction that is legal here and now (no fault), weighted toward ALU work."""
        rng = self.rng
        choices: list[tuple[float, Callable[[], list[int]]]] = [
            (2, self.u_vld), (1.5, self.u_vst), (0.6, self.u_vbcast), (0.6, self.u_vshuf), (0.5, self.u_vcvt),
            (0.8, self.u_seti), (0.5, self.u_anyall), (0.3, self.u_setvl)]
        if self.mode == Mode.TREE:
            if self.vl % LANES == 0:
                choices.append((3, lambda: self.u_vred(rng.randrange(6))))
            choices.append((1, self.leave_tree))
        else:
            choices.append((6, self.u_alu))
            choices.append((0.3, lambda: self.u_setmode(rng.choice(list(Mode)))))
        if transfers:
            choices += [(0.5, self.u_fill), (0.4, self.u_drain), (0.3, self.u_node),
                        (0.3, lambda: self.flush() or [encode_bare("VBAR")])]
        if self.allow_loops and self.loop == "idle" and self.room > 12:
            choices.append((0.4, lambda: self.u_loop(rng.randint(0, 5), rng.randint(0, 5))))
        fn = rng.choices([c[1] for c in choices], [c[0] for c in choices])[0]
        return fn()

    def attempt(self, fn: Callable[[], list[int]]) -> bool:
        """Emit one unit unless it finds no descriptor or no room (it has then changed nothing)."""
        try:
            self.emit(fn())
        except (NoSlot, NoRoom):
            return False
        return True

    def fill_random(self, n: int, transfers: bool = True) -> None:
        for _ in range(n):
            if self.room < 8:
                return
            self.attempt(lambda: self.random_unit(transfers))

    def prologue(self) -> None:
        """Fresh data into a few registers and scalars (specials included) before the focus."""
        for _ in range(self.rng.randint(0, 2)):
            self.emit(self.u_vld())
        for _ in range(self.rng.randint(0, 2)):
            self.emit(self.u_seti())

    # -------------------------------------------------- faults
    def fault_now(self, code: int, words: Sequence[int]) -> None:
        """Emit the words that raise `code` (fills ordered first), then a few words that must never run."""
        self.emit(self.flush())
        self.emit(words)
        self.fault = int(code)
        dead = self.dead_code(max(self.rng.randint(2, 4), MIN_WORDS - 1 - len(self.words)))
        self.emit(dead + [encode_bare("VHALT")])  # a core that ran on would still stop

    def dead_code(self, n: int) -> list[int]:
        """About n words after a fault: harmless if skipped, visible in L1, V or S if wrongly executed."""
        rng = self.rng
        out: list[int] = []
        while len(out) < n:
            pick = rng.randrange(4)
            if pick == 0:
                out.append(encode_alu(rng.choice(ALU_OPS), vd=self.reg(), va=self.reg(), sb=SRC_K, vb=1))
            elif pick == 1:
                out.append(encode_mem("VST", rng.randrange(N_DESC), rng.randint(-8, 8), self.reg(), DT_FP16))
            elif pick == 2:
                out += encode_seti(e8_value(rng), sreg=self.reg())
            else:
                out.append(encode_alu("VBCAST", vd=self.reg(), va=self.reg(), sa=SRC_S))
        return out

    # -------------------------------------------------- the case
    def finish(self, seed: int, index: int, focus: str, label: str) -> Case:
        """Close the program (pad to MIN_WORDS, maybe a VBAR, VHALT), place it in IMEM, wrap it in CU_INSTs."""
        if self.fault is None or not self.runs:
            if len(self.words) < MIN_WORDS - 1:
                self.max_words = max(self.max_words, MIN_WORDS + 8)
                while len(self.words) < MIN_WORDS - 1:
                    self.attempt(lambda: self.random_unit(transfers=False))
            if self.chance(0.5):
                self.emit(self.flush())
            self.emit([encode_bare("VHALT")])
        words = tuple(self.words)
        pc = self.place(len(words))
        inst = self.envelope(pc, words)
        vl, mode = (self.vl, self.mode) if self.runs else (self.start_vl, self.start_mode)
        return Case(seed, index, focus, label, self.geo, pc, words, tuple(inst), tuple(self.bursts),
                    MappingProxyType(dict(self.dram)), tuple(self.desc), self.fault, vl, int(mode))

    def place(self, n: int) -> int:
        """The program's IMEM address: anywhere it fits, or across 511 -> 0 for the pc-wrap focus."""
        if self.wrap_pc:
            return IMEM_WORDS - self.rng.randint(1, n - 1)
        return self.rng.randrange(IMEM_WORDS - n + 1)

    def envelope(self, pc: int, words: Sequence[int]) -> list[tuple[int, int, int]]:
        """IMEM writes, DESC writes of the fields that changed (and some unchanged), no-op envelopes, RUN."""
        rng = self.rng
        txn = lambda: rng.randrange(256)  # noqa: E731
        last = lambda: int(rng.random() < 0.05)  # noqa: E731
        out = [(txn(), last(), p) for p in program_payloads(words, base=pc, wrap=True)]
        for ad in range(N_DESC):
            old, new = self.prev_desc[ad], self.desc[ad]
            again = ad in self.fixed and rng.random() < 0.15
            if new.base != old.base or again:
                out.append((txn(), last(), desc_payload(ad, 0, new.base)))
            for k, (a, b) in enumerate(zip(old.full_dims, new.full_dims)):
                if a != b or again:
                    junk = rng.getrandbits(6) << 34 if rng.random() < 0.15 else 0  # bits [39:34] are ignored
                    out.append((txn(), last(), desc_payload(ad, k + 1, pack_dim(*b) | junk)))
        if rng.random() < 0.15:  # DESC fld 5..7 and CU_INST ops 0, 4..15 have no effect (V.2)
            out.insert(rng.randrange(len(out) + 1), (txn(), last(), desc_payload(rng.randrange(8),
                                                                                 rng.randint(5, 7),
                                                                                 rng.getrandbits(40))))
        if rng.random() < 0.1:
            op = rng.choice((0, 4, 7, 15))
            out.insert(rng.randrange(len(out) + 1), (txn(), last(), op << 252 | rng.getrandbits(200)))
        out.append((txn(), int(rng.random() < 0.85), run_payload(pc)))
        return out


# A focus emits one program through the builder and returns its label; its second argument, the round,
# advances the focus's schedule (VLs, pm values, shapes, variants) once per round of the sequence (generate.py).
Focus = Callable[[Builder, int], str]


def vl_any(b: Builder) -> int:
    """A legal VL, multiples of 16 (VRED-able) 40% of the time, otherwise anything 1..128 (mostly ragged)."""
    r = b.rng.random()
    return 16 * b.rng.randint(1, 8) if r < 0.4 else b.rng.randint(1, VL_MAX)
