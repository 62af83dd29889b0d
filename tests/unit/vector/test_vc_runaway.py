"""The vector core model's watchdog (models/vector/runaway.py): a RUN that will not reach VHALT ends as a named
Runaway, and no RUN the RTL would finish is named one: long loops, a program that wraps past the end of IMEM, a
program that goes round IMEM once and halts on a word it stepped over the first time.

Why: the hardware has no watchdog (units.md V.2: a RUN retires at VHALT or a fault), so the model must end a
program that would run forever by name, with rules that hold on the RTL too: a control state that comes back
at a later lap of IMEM, or more instructions than the round's poll bound has cycles; never a fixed count a
long program could reach, never a lap of IMEM alone.
"""

from __future__ import annotations

import pytest

from models.vector.isa import IMEM_WORDS
from models.vector.runaway import LAP, RunBudget, Runaway
from tests.unit.vector.vc_spec import (K, VADD, VBCAST, VMOV, W_HALT, Rig, alu, p_imem, retired, vloop,
                                       vseti)

BODY = [alu(VADD, vd=2, va=2, sa=0, sb=K, sc=K, vc=1)]  # v2 += 1.0 (K1)


def test_a_run_without_vhalt_is_named_when_its_state_comes_back() -> None:
    """No VHALT anywhere: the RUN's control state at its second lap of IMEM is the first lap's; named there."""
    rig = Rig()
    rig.load([alu(VMOV, vd=1, va=2)] * 4, at=7)
    with pytest.raises(Runaway) as caught:
        rig.run(pc=7)
    exc = caught.value
    assert exc.node == rig.core.coord and exc.start_pc == 7
    assert exc.executed == 2 * LAP, "two whole laps of IMEM, one word a step, no loop repeating"
    assert exc.pc == 7
    text = str(exc)
    x, y = rig.core.coord
    assert text.startswith(f"vector core ({x},{y}): the RUN from pc 7 never reached VHALT: its control state")
    assert "at lap 2 of IMEM (a travel of 1,024 words outside VLOOP's repeats) is the one it had at lap 1" in text
    assert "after 1,024 instruction(s) (0 loop repeat(s))" in text
    assert rig.core.run is None, "the stuck RUN is dropped, not left half run"


def test_loop_repeats_are_not_counted_against_the_lap() -> None:
    """A VLOOP of 2,000 repeats of a 3-word body (6,000 instructions, far past one lap) halts: its count bounds
    it, so no fixed instruction budget stops it."""
    rig = Rig()
    body = [alu(VADD, vd=2, va=2, sa=0, sb=K, sc=K, vc=1), alu(VMOV, vd=3, va=2), alu(VMOV, vd=4, va=3)]
    retired(rig.go(vseti(2000, 5) + [vloop(5, len(body))] + body + [W_HALT]))
    assert rig.core.stats.executed["VADD"] == 2000


def test_a_loop_whose_count_runs_out_then_no_vhalt_is_still_named() -> None:
    """Loop repeats (counted apart from the laps), then no VHALT: the loop runs its 99 repeats on each lap, and
    the state at the second lap's end is the first's."""
    rig = Rig()
    with pytest.raises(Runaway, match=r"at lap 2 of IMEM .* after 1,220 instruction\(s\) \(198 loop repeat\(s\)\)"):
        rig.go(vseti(100, 5) + [vloop(5, 1)] + BODY)


def test_a_program_that_wraps_past_the_end_of_imem_once_halts() -> None:
    """Legal: the 9-bit pc wraps (units.md V.1); a program loaded across the end of IMEM runs to its VHALT."""
    rig = Rig()
    words = [alu(VMOV, vd=1, va=2)] * 20 + [W_HALT]
    start = IMEM_WORDS - 10
    for i, w in enumerate(words):
        rig.retire0(p_imem((start + i) % IMEM_WORDS, w))
    retired(rig.run(pc=start))


def test_a_program_that_goes_round_imem_once_then_halts_is_not_a_runaway() -> None:
    """The RTL finishes it, so the model must: word 1 is VHALT's bits as the immediate of the VSETI at word 0,
    stepped over on the first lap; the VSETI at word 511 takes word 0 as its immediate, so the second lap
    starts at word 1 and halts there, after a travel of 513 words (more than one lap of IMEM)."""
    rig = Rig()
    words = vseti(W_HALT, 1) + [alu(VMOV, vd=1, va=2)]  # words 0..2
    for _ in range(3, IMEM_WORDS, 2):  # words 3..510: VSETI and its immediate; word 511: a VSETI whose immediate is word 0
        words += vseti(0x3F8000, 2)
    words = words[:IMEM_WORDS]
    assert len(words) == IMEM_WORDS and words[IMEM_WORDS - 1] == vseti(0, 2)[0]
    rig.load(words, at=0)
    retired(rig.run(pc=0))
    assert rig.core.stats.executed["VSETI"] == 1 + 254 + 1


def test_a_run_whose_state_keeps_changing_ends_at_its_instruction_budget() -> None:
    """v2 += 1 and S3 = v2[0] each lap: no lap repeats the state of another, so the RUN's budget (its round's poll
    bound in a bundle; here set by hand) ends it, named with the budget and where it comes from."""
    rig = Rig()
    rig.core.run_budget = RunBudget(3_000, "a test's budget")
    rig.load(BODY + [alu(VBCAST, vd=3, va=2)] + [alu(VMOV, vd=1, va=2)] * (IMEM_WORDS - 2), at=0)
    with pytest.raises(Runaway) as caught:
        rig.run(pc=0)
    assert caught.value.executed == 3_001
    assert "it executed more than 3,000 instructions, its budget = a test's budget" in str(caught.value)
