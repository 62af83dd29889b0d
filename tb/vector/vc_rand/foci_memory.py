"""Foci of memory traffic: VLD / VST walks, VFILL then VBAR and read back, VDRAIN to memory and to nodes,
accepted inbound bursts. Each is a ``Focus`` (builder.py)."""

from __future__ import annotations

from models.vector import DT_FP16, DT_FP32, L1_WORDS, Descriptor, Mode

from .builder import Builder, vl_any
from .values import data_word


def focus_ldst(b: Builder, k: int) -> str:
    """VLD / VST in FP16 and FP32 over descriptor walks: 1..4 dims, negative and zero strides, signed
    offsets, L1 wrap, walks shorter than the chunks (the last address repeats), ragged VL."""
    b.emit(b.u_setvl(vl_any(b)) if b.chance(0.7) else [])
    for i in range(b.rng.randint(5, 10)):
        if b.room < 6:
            break
        dt = (DT_FP16, DT_FP32)[(k + i) % 2]
        b.emit(b.u_vld(dt) if b.chance(0.5) else b.u_vst(dt))
        if b.chance(0.3) and b.mode != Mode.TREE:
            b.emit(b.u_alu())
    return f"VLD/VST walks at VL {b.vl}"


def focus_fill(b: Builder, k: int) -> str:
    """VFILLs (one of 256 elements every fourth round; L1 start near 511 every other), a VBAR, then the
    filled words read back (VLD) and drained."""
    rng = b.rng
    n = rng.randint(1, 3)
    starts: list[int] = []
    for i in range(n):
        lo, hi = ((256, 256) if i == 0 and k % 4 == 0 else (65, 255) if i == 0 and k % 4 == 2
                  else (1, rng.choice((16, 48, 128))))
        start = L1_WORDS - rng.randint(1, 24) if i == 0 and k % 2 == 0 else rng.randrange(L1_WORDS)
        first = i == 0
        if b.attempt(lambda: b.u_fill(lo, hi, start, zero=first and k % 3 == 1, nd=2 + k % 3 if first else None)):
            starts.append(start)
        if rng.random() < 0.3 and b.mode != Mode.TREE:
            b.emit(b.u_alu())
    b.emit(b.flush() if rng.random() < 0.85 else [])
    for start in starts:
        if b.room < 6:
            break
        b.attempt(lambda: b.u_vld(ad=b.new_slot(Descriptor(start, ((1, 16),))), off=0))
        if rng.random() < 0.5:
            b.attempt(lambda: b.u_drain(1, 16, start) if rng.random() < 0.6 else b.u_node(1, 16, start))
    return f"VFILL x{len(starts)} (starts {starts}) + VBAR + read back"


def focus_drain(b: Builder, k: int) -> str:
    """VDRAIN to memory over multi-dimensional walks (negative, zero strides), after VSTs that feed it."""
    for i in range(b.rng.randint(2, 4)):
        if b.room < 8:
            break
        if b.chance(0.5):
            b.emit(b.u_vst())
        zero = i == 0 and k % 2 == 0
        if i == 1 and k % 2:  # a walk of 3 or 4 dimensions that all step (the coverage model's drain x dims bins)
            b.attempt(lambda: b.u_drain(16, 64, nd=b.rng.choice((3, 4))))
        else:
            b.attempt(lambda: b.u_drain(4 if zero else 1, b.rng.choice((8, 32, 64)), zero=zero))
    return "VDRAIN to memory"


def focus_node(b: Builder, k: int) -> str:
    """VDRAIN in the node form: record in the base (granule offset, ack, remote fin/mesh), dst, buf, signal."""
    for i in range(b.rng.randint(2, 4)):
        if b.room < 6:
            break
        start = L1_WORDS - b.rng.randint(1, 8) if i == 0 and k % 2 else None
        # a start near the end takes at least one word past it, so the walk wraps (the node:l1-wrap goal is met
        # by every seed, not by chance)
        lo = 1 if start is None else L1_WORDS - start + 1
        b.attempt(lambda: b.u_node(lo, 256 if k % 5 == 4 and i == 0 else 24, start))
    return "VDRAIN to nodes"


def focus_bursts(b: Builder, k: int) -> str:
    """Accepted inbound bursts (from the host or a peer, acked or not, one ending at word 511), then read."""
    rng = b.rng
    regions = []
    for i in range(rng.randint(1, 3)):
        n = rng.choice((1, 2, 8, 16, 40))
        off = L1_WORDS - n if i == 0 and k % 2 == 0 else rng.randrange(L1_WORDS - n + 1)
        b.burst(off, [data_word(rng) for _ in range(n)], src=rng.choice(("host", "peer0", "peer1")),
                flags=rng.randrange(2), ack=b.ack_target())
        regions.append((off, n))
    for off, n in regions:
        ad = b.new_slot(Descriptor(off, ((1, n),)))
        b.emit(b.u_vld(ad=ad, off=0))
        if b.mode != Mode.TREE:
            b.emit(b.u_alu())
        b.emit(b.u_vst())
    return f"accepted bursts {regions}"
