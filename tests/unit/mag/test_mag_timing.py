"""tb/mag/timing.py: upstream's memory-agent figures at upstream's parameters, and the judge fails on a wrong
interval (the module bench `mag` measures the same intervals on the RTL: test_timing_*)."""

from __future__ import annotations

from models.noc.flit import FlitType, make_flit
from tb.mag.timing import MagTiming, entry_first_flits, interval_errors


def test_the_defaults_give_upstreams_figures() -> None:
    t = MagTiming()
    assert t.plain_period == 12                   # measured on upstream's fused4: VFILL words every 12 cycles
    assert t.quant_entry_period == 20             # 8 beats + 12 of quantiser and hand-over
    assert [t.quant_run(n) for n in (1, 2, 8)] == [8 + 6 + 20 * n for n in (1, 2, 8)]
    assert t.write_period(1) == 14 and t.write_period(8) == 21


def test_a_faster_port_and_slower_parts() -> None:
    assert MagTiming(ar_lat=1, r_lat=1).plain_period == 8     # 1-cycle FIFO stand-ins: 6 + 2
    assert MagTiming(rd_latency=6).plain_period == 17
    slow_dram = MagTiming(rd_latency=8)                          # the next burst's first beat comes last
    assert slow_dram.quant_entry_period == slow_dram.first_beat + 7 == 25
    assert MagTiming(quant_lat=1).quant_entry_period == MagTiming().first_beat + 7 == 18
    assert MagTiming().quant_run(2, peers=3) == MagTiming().quant_run(2) + 12


def test_the_judge_names_a_wrong_interval_and_a_missing_one() -> None:
    assert interval_errors("reads", [10, 22, 34], [12, 12]) == []
    wrong = interval_errors("reads", [10, 22, 35], [12, 12])
    assert wrong == ["reads: interval 1 (22 -> 35) is 13 cycles, expected 12"]
    assert interval_errors("reads", [10, 22], [12, 12]) == [
        "reads: 1 intervals measured, 2 expected (cycles [10, 22])"]


def test_entry_first_flits_keeps_word_0_to_that_destination() -> None:
    def resp(dst: tuple[int, int], word: int, ftype: int = FlitType.MEM_RD_RESP) -> int:
        return make_flit(dst, (0, 1), ftype, 7, word == 3, word, rsvd=word)
    out = [(10, resp((1, 0), 0)), (11, resp((1, 0), 1)), (12, resp((2, 0), 0)),
           (13, resp((1, 0), 0, FlitType.MEM_WR_ACK)), (30, resp((1, 0), 0))]
    assert entry_first_flits(out, (1, 0)) == [10, 30]
