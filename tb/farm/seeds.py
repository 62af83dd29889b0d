"""SEEDS= as a list of run seeds: a count (`200`: seeds 1..200), a range (`5..9`), or a list (`3,17,40`)."""

from __future__ import annotations

from tb.run.options import BadInput

MAX_SEED = 2**31 - 1  # cocotb's run seed is a 32-bit signed value


def parse_seeds(spec: str) -> list[int]:
    """The run seeds `spec` names, in order, each once; a malformed or empty spec is refused by name."""
    text = spec.strip()
    if not text:
        raise BadInput("SEEDS is empty: give a count (SEEDS=200), a range (SEEDS=1..200) or a list (SEEDS=3,17)")
    try:
        if ".." in text:
            lo_s, hi_s = text.split("..", 1)
            lo, hi = int(lo_s), int(hi_s)
            if lo > hi:
                raise BadInput(f"SEEDS={spec}: the range ends before it starts; write SEEDS={hi}..{lo}")
            seeds = list(range(lo, hi + 1))
        elif "," in text:
            seeds = list(dict.fromkeys(int(x) for x in text.split(",") if x.strip()))
        else:
            count = int(text)
            if count < 1:
                raise BadInput(f"SEEDS={spec}: a count of seeds must be 1 or more")
            seeds = list(range(1, count + 1))
    except ValueError as exc:
        if isinstance(exc, BadInput):
            raise
        raise BadInput(f"SEEDS={spec!r} is not a count, a range a..b or a list a,b,c of integers") from None
    bad = [s for s in seeds if not 1 <= s <= MAX_SEED]
    if bad:
        raise BadInput(f"SEEDS={spec}: seed {bad[0]} is outside 1..{MAX_SEED} (cocotb's run seed)")
    return seeds
