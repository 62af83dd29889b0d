"""The base of the program builder: what one program relies on, and the descriptors its walks use.

``Tracking`` holds the state carried over from the case before (VL, mode, the
descriptors), the words emitted so far, the L1 words of VFILLs in flight, and
chooses and shapes descriptors: L1 walks, memory walks inside the DRAM's fill
and drain regions, node-drain records. ``Units`` (units.py) and ``Builder``
(builder.py) build on it.
"""

from __future__ import annotations

import math
import random
from typing import Callable, Sequence

from models.vector import L1_WORDS, N_DESC, Descriptor, encode_bare, node_record
from models.vector import isa

from .cases import Burst, CaseState
from .spec import ADDR_MOD, full, walk_product

MIN_WORDS, MAX_WORDS = 10, 60  # program length (init may use up to MAX_WORDS + 4)


class Tracking:
    """The tracking of ``Builder`` (see there) and the descriptor choices of its walks."""

    def __init__(self, rng: random.Random, state: CaseState) -> None:
        self.rng = rng
        self.geo = state.geometry
        self.vl, self.mode = state.vl, state.mode
        self.start_vl, self.start_mode = state.vl, state.mode
        self.prev_desc = state.desc
        self.desc = list(state.desc)
        self.fixed: set[int] = set()  # descriptors an emitted word uses: final for this RUN
        self.words: list[int] = []
        self.pending: set[int] = set()  # L1 words an outstanding VFILL will write
        self.loop = "idle"  # "idle" | "open" (will not close: a later VLOOP faults) | "unsure" (no later VLOOP)
        self.pr_known = self.pm_known = False  # D4 / D5 inputs set in this RUN
        self.dram: dict[int, int] = {}
        self.bursts: list[Burst] = []
        self.fault: int | None = None
        self.runs = True  # False when F_CUDATA stops the RUN before its first instruction
        self.wrap_pc = False
        self.allow_loops = True
        self.max_words = MAX_WORDS

    # -------------------------------------------------- basics
    @property
    def room(self) -> int:
        """Words left before the closing VHALT (and a VBAR) must go in."""
        return self.max_words - 2 - len(self.words)

    def emit(self, words: Sequence[int]) -> None:
        self.words.extend(words)

    def chance(self, p: float) -> bool:
        return self.rng.random() < p

    def reg(self) -> int:
        return self.rng.randrange(16)

    def bar_if(self, footprint: Sequence[int]) -> list[int]:
        """A VBAR first when an instruction would touch L1 words a VFILL has not yet delivered."""
        return [] if self.pending.isdisjoint(footprint) else self.flush()

    def flush(self) -> list[int]:
        """A VBAR if any fill is in flight (before a fault, a loop body, the end)."""
        if not self.pending:
            return []
        self.pending.clear()
        return [encode_bare("VBAR")]

    # -------------------------------------------------- descriptors
    def slot(self, suits: Callable[[Descriptor], bool], make: Callable[[], Descriptor], reuse: float = 0.35) -> int:
        """A descriptor for one walk: one that already suits (carried over or used by this RUN) or a new one.

        A descriptor an earlier word of this RUN uses is never changed: the DESC
        writes all precede the RUN.
        """
        fits = [ad for ad in range(N_DESC) if suits(self.desc[ad])]
        free = [ad for ad in range(N_DESC) if ad not in self.fixed]
        if fits and (not free or self.chance(reuse)):
            ad = self.rng.choice(fits)
        elif free:
            ad = self.rng.choice(free)
            self.desc[ad] = full(make())
        else:
            raise NoSlot()
        self.fixed.add(ad)
        return ad

    def new_slot(self, d: Descriptor) -> int:
        """A descriptor holding exactly `d` (one already holding it, or a free one set to it)."""
        d = full(d)
        return self.slot(lambda x: x == d, lambda: d, reuse=1.0)

    def l1_desc(self) -> Descriptor:
        """An L1 walk (VLD/VST): 1..4 dims, strides negative, zero or beyond 512, base small or any 40-bit."""
        rng = self.rng
        nd = rng.choice((1, 1, 2, 2, 3, 4))
        strides = (0, 1, 1, -1, 2, -2, 3, 8, -8, 16, -17, 64, -64, 255, -255, 511, 512, -513)
        dims = []
        for _ in range(nd):
            s = rng.choice(strides) if rng.random() < 0.85 else rng.randint(isa.STRIDE_MIN, isa.STRIDE_MAX)
            dims.append((s, rng.choice((0, 1, 2, 2, 3, 4, 5, 8))))
        dims += [(rng.choice((0, 5, -3)), rng.choice((0, 1)))] * (4 - nd)
        base = rng.randrange(L1_WORDS) if rng.random() < 0.6 else rng.getrandbits(40)
        return Descriptor(base, tuple(dims))

    def l1_off(self, d: Descriptor) -> int:
        """A signed VLD/VST offset: small, anywhere in 14 bits, or one that carries the walk across 0 / 511."""
        r = self.rng.random()
        if r < 0.5:
            return self.rng.randint(-16, 16)
        if r < 0.7:
            return self.rng.randint(-(1 << 13), (1 << 13) - 1)
        low = d.base % L1_WORDS
        return self.rng.choice((-low - self.rng.randint(1, 4), L1_WORDS - low - self.rng.randint(1, 4)))

    def bounds(self, lo: int, hi: int, nd: int | None = None, stepping: bool = False) -> list[int]:
        """1..4 bounds with a product in lo..hi (log-uniform), by peeling divisors off it; a spare 1 may read 0.

        `stepping`: every one of the nd bounds is at least 2, so the walk really has nd dimensions."""
        rng = self.rng
        nd = nd or rng.choice((1, 2, 2, 3, 4))
        if stepping:
            for _ in range(100):
                if lo == hi and lo & (lo - 1) == 0:  # a power of 2: split its exponent
                    cuts = sorted(rng.sample(range(1, lo.bit_length() - 1), nd - 1))
                    out = [1 << (b - a) for a, b in zip([0] + cuts, cuts + [lo.bit_length() - 1])]
                else:
                    out = [rng.randint(2, 8) for _ in range(nd)]
                if lo <= walk_product(out) <= hi:
                    return out
        total = round(math.exp(rng.uniform(math.log(lo), math.log(hi + 1)))) if lo < hi else lo
        total = min(max(total, lo), hi)
        out = []
        for _ in range(nd - 1):  # peel random divisors off the total
            d = rng.choice([d for d in range(1, min(total, 32) + 1) if total % d == 0])
            out.append(d)
            total //= d
        out.append(total)
        rng.shuffle(out)
        return [0 if b == 1 and rng.random() < 0.3 else b for b in out]

    def mem_desc(self, bounds: Sequence[int], window: str, zero: bool = False) -> Descriptor:
        """A memory walk inside the 'fill' or 'drain' region: strides whole words (negative, zero, large as
        fits), the base placed so every element lands in the region.

        `zero`: the first dimension with a bound above 1 gets stride 0 (it re-reads / re-writes one word)."""
        rng = self.rng
        span = self.geo.region_words - 1  # words the walk may spread over
        steps = [(b or 1) - 1 for b in bounds]
        moving = max(1, sum(1 for n in steps if n))
        dims = []
        for b, n in zip(bounds, steps):
            cap = span // (moving * n) if n else 9
            units = [u for u in (1, 1, 2, 3, -1, -2, -5, 0, 7, -9, 40, -40, 300, -300) if abs(u) <= cap]
            unit = rng.choice(units + [rng.randint(-cap, cap)])
            if zero and n:
                unit, zero = 0, False
            dims.append((32 * unit, b))
        dims += [(32 * rng.randint(-9, 9), 1)] * (4 - len(dims))
        lo = sum(min(0, s * ((b or 1) - 1)) for s, b in dims)
        hi = sum(max(0, s * ((b or 1) - 1)) for s, b in dims)
        first = rng.randint(-lo // 32, (32 * span - hi) // 32)  # word of element 0 inside the region
        return Descriptor((self.geo.region_base(window) + 32 * first) % ADDR_MOD, tuple(dims))

    def node_desc(self, lo: int, hi: int) -> Descriptor:
        """A node-drain record (granule offset, ack, fin/mesh: remote or local) and bounds for the count."""
        rng = self.rng
        ack = (0, 0) if rng.random() < 0.4 else (rng.randrange(16), rng.randrange(16))
        fin = (0, 0) if rng.random() < 0.5 else (rng.randrange(1, 16), rng.randrange(16))
        rec = node_record(rng.getrandbits(16), ack, fin, rng.randrange(4))
        dims = [(rng.randint(-300, 300), b) for b in self.bounds(lo, hi)]  # strides are ignored
        return Descriptor(rec, tuple(dims))


class NoSlot(Exception):
    """Every descriptor is taken by this RUN and none suits: skip the instruction."""


class NoRoom(Exception):
    """A loop body would not fit the 4-bit body length."""
