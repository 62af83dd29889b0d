"""Checker self-tests on a real 2x2 mesh run: a fault injected into what the
bench records must make the scoreboard fail, with the right category, once.

The harness's recorder (tb_ep_bank fault_mode) drops, duplicates, misroutes,
reorders or corrupts one captured flit; the mesh itself is healthy, so any
other error would be a checker bug. A checker that cannot fail checks nothing.
"""

from __future__ import annotations

import cocotb

from tb.lib.harness import RecorderFault
from tb.noc.bench import NocTB
from tb.noc.patterns import make_pairs

QUIET = 400  # cycles without traffic before the harness declares a stall


@cocotb.test()
async def test_clean_run_passes(dut) -> None:
    """The same traffic without a fault passes: the failures below are the faults'."""
    tb = NocTB(dut, "test_clean_run_passes")
    result = await tb.run_traffic(make_pairs("uniform", tb.geometry, tb.rng, 40), quiet_limit=QUIET)
    tb.check_clean(result)
    tb.verdict.finish()


# fault -> (scoreboard category it must raise, whether the run still completes)
EXPECTED = {
    RecorderFault.DROP: ("LOST", False),
    RecorderFault.DUPLICATE: ("DUPLICATE", True),
    RecorderFault.MISROUTE: ("MISROUTE", True),
    RecorderFault.REORDER: ("REORDER", True),
    RecorderFault.CORRUPT: ("CORRUPT", True),
}


@cocotb.test()
@cocotb.parametrize(fault=list(EXPECTED))
async def test_injected_fault_fails(dut, fault: RecorderFault) -> None:
    """One recorder fault gives exactly one scoreboard error of its own category."""
    tb = NocTB(dut, f"test_injected_fault_fails/fault={fault.name}")
    g = tb.geometry
    src, dst, other = g.endpoints()[0], g.endpoints()[1], g.endpoints()[2]
    # One (source, destination) pair, so a swap is a reorder within the pair and
    # a misroute to `other` is unambiguous.
    pairs = [(src, dst)] * 40
    result = await tb.run_traffic(pairs, fault=fault, fault_index=17, fault_port=other, quiet_limit=QUIET)
    category, completes = EXPECTED[fault]
    v = tb.verdict
    v.check(not result.report.passed, f"{fault.name}: the scoreboard passed a faulty run")
    v.check(result.report.counts == {category: 1},
            f"{fault.name}: expected exactly one {category}, got {result.report.counts}")
    v.check(any("dst=(" in e for e in result.report.errors),
            f"{fault.name}: the error does not show the decoded flit")
    v.check((result.outcome.ended == "done") == completes,
            f"{fault.name}: run ended by {result.outcome.ended}")
    v.check(result.mon_err == 0, f"{fault.name}: an RTL monitor fired on a healthy mesh")
    for line in result.report.errors:
        tb.log.info("expected failure seen: %s", line)
    v.finish()
