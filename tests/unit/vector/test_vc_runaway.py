"""The vector core model's watchdog (models/vector/runaway.py): a RUN that goes round IMEM without reaching
VHALT ends as a named Runaway, while long legitimate RUNs (many loop repeats, a program that wraps past the
end of IMEM once) still halt.

Why: the hardware has no watchdog (units.md V.2: a RUN retires at VHALT or a fault), so the model must end a
program that would run forever by name, with a bound derived from the program's own loops, never a fixed
instruction count a long program could reach.
"""

from __future__ import annotations

import pytest

from models.vector.isa import IMEM_WORDS
from models.vector.runaway import LAP, Runaway
from tests.unit.vector.vc_spec import K, VADD, VMOV, W_HALT, Rig, alu, p_imem, retired, vloop, vseti

BODY = [alu(VADD, vd=2, va=2, sa=0, sb=K, sc=K, vc=1)]  # v2 += 1.0 (K1)


def test_a_run_without_vhalt_is_named_with_its_node_pc_and_budget() -> None:
    """No VHALT anywhere: the RUN goes round the 512 words of IMEM and is stopped one lap on, named."""
    rig = Rig()
    rig.load([alu(VMOV, vd=1, va=2)] * 4, at=7)
    with pytest.raises(Runaway) as caught:
        rig.run(pc=7)
    exc = caught.value
    assert exc.node == rig.core.coord and exc.start_pc == 7
    assert exc.executed == LAP + 1, "one word past a whole lap of IMEM, no loop repeating"
    assert exc.pc == (7 + LAP + 1) % IMEM_WORDS
    text = str(exc)
    x, y = rig.core.coord
    assert text.startswith(f"vector core ({x},{y}): the RUN from pc 7 never reached VHALT")
    assert f"past the {LAP}-word lap of IMEM" in text and "after 513 instruction(s) (0 loop repeat(s))" in text
    assert rig.core.run is None, "the stuck RUN is dropped, not left half run"


def test_loop_repeats_are_not_counted_against_the_lap() -> None:
    """A VLOOP of 2,000 repeats of a 3-word body (6,000 instructions, far past one lap) halts: its count bounds
    it, so no fixed instruction budget stops it."""
    rig = Rig()
    body = [alu(VADD, vd=2, va=2, sa=0, sb=K, sc=K, vc=1), alu(VMOV, vd=3, va=2), alu(VMOV, vd=4, va=3)]
    retired(rig.go(vseti(2000, 5) + [vloop(5, len(body))] + body + [W_HALT]))
    assert rig.core.stats.executed["VADD"] == 2000


def test_a_loop_whose_count_runs_out_then_no_vhalt_is_still_named() -> None:
    """Loop repeats first (counted apart), then no VHALT: the lap is measured from the loop's top on."""
    rig = Rig()
    with pytest.raises(Runaway, match=r"after \d+ instruction\(s\) \(99 loop repeat\(s\)\)"):
        rig.go(vseti(100, 5) + [vloop(5, 1)] + BODY)


def test_a_program_that_wraps_past_the_end_of_imem_once_halts() -> None:
    """Legal: the 9-bit pc wraps (units.md V.1); a program loaded across the end of IMEM runs to its VHALT."""
    rig = Rig()
    words = [alu(VMOV, vd=1, va=2)] * 20 + [W_HALT]
    start = IMEM_WORDS - 10
    for i, w in enumerate(words):
        rig.retire0(p_imem((start + i) % IMEM_WORDS, w))
    retired(rig.run(pc=start))
