"""The host engine's command words and results (tb/system/host_engine.py against rtl/bench/host_engine.v's
header): every field where the header puts it, a value too wide refused in one line, results parsed, a
result file with x/z or too few words refused, a batch's bound covering its polls."""

from __future__ import annotations

import re
import pytest

from tb.run.benches import ROOT
from tb.system.host_engine import (FIELDS, Command, EngineFault, HostEngineError, Op, Result, Status, encode, parse_results, read,
                                write)

HEADER = (ROOT / "rtl" / "bench" / "host_engine.v").read_text()


def test_fields_are_where_the_rtl_header_says() -> None:
    """Each field's bits as the Verilog header lists them ([hi:lo] name, or [bit] name)."""
    for name, lo, width in FIELDS:
        hi = lo + width - 1
        spot = f"[{hi}] {name}" if width == 1 else f"[{hi}:{lo}] {name}"
        assert spot in HEADER, f"{name}: {spot} not in host_engine.v's header"


def test_every_field_lands_in_its_bits() -> None:
    cmd = Command(Op.POLL, 0x1008, data=0xFFFF01, want=0x2D01, bound=100_000, interval=7, resolution=256,
                  baseline=3, expected=45, pipe=True, ovs=True, final=True, pre=True)
    word = cmd.word()
    got = {name: (word >> lo) & ((1 << width) - 1) for name, lo, width in FIELDS}
    assert got == {"op": 3, "pipe": 1, "ovs": 1, "final": 1, "pre": 1, "addr": 0x1008, "data": 0xFFFF01,
                   "want": 0x2D01, "bound": 100_000, "interval": 7, "resolution": 256, "baseline": 3, "expected": 45}
    assert word & 0xFF == 0 and word < 1 << 256


def test_a_write_and_a_read_word() -> None:
    assert write(0x2008, -1).word() == (1 << 252) | (0x2008 << 232) | ((2**64 - 1) << 168)
    assert read(0x2010, pipe=True).word() == (2 << 252) | (1 << 251) | (0x2010 << 232)
    text = encode([write(0x40, 5), read(0x58)])
    assert text.splitlines() == [f"{write(0x40, 5).word():064x}", f"{read(0x58).word():064x}"]


@pytest.mark.parametrize("field, value, width", [("addr", 0x1_0000, 16), ("interval", -1, 16), ("bound", 2**32, 32)])
def test_a_field_too_wide_is_refused_in_one_line(field: str, value: int, width: int) -> None:
    cmd = Command(Op.POLL, 0x10, **{field: value}) if field != "addr" else Command(Op.READ, value)
    with pytest.raises(ValueError) as exc:
        cmd.word()
    msg = str(exc.value)
    assert "\n" not in msg and f"{field}={value} does not fit {width} bits (0..{(1 << width) - 1})" in msg


def test_results_parse_and_refuse_bad_files() -> None:
    word = (7 << 96) | (Status.MET << 88) | 0x0300_0000_0000_2D01
    assert Result.parse(word) == Result(0x0300_0000_0000_2D01, 7, Status.MET)
    text = f"// header\n{word:032x}\n{(Status.DONE << 88):032x}\n"
    assert parse_results(text, 2) == [Result(0x0300_0000_0000_2D01, 7, Status.MET), Result(0, 0, Status.DONE)]
    with pytest.raises(HostEngineError, match=r"holds 2 words, 3 were asked for"):
        parse_results(text, 3)
    with pytest.raises(HostEngineError, match=r"x/z bits: a value read from a register or staging slot never written"):
        parse_results("x" * 32 + "\n", 1)


def test_a_batch_bound_covers_its_polls() -> None:
    """A write or read may take 16 cycles (4 measured); a poll its bound plus two of its longest waits."""
    assert write(0, 0).budget() == read(0).budget() == 16
    poll = Command(Op.POLL, 0x1008, bound=100_000, resolution=256)
    assert poll.budget() == 100_000 + 2 * (100_000 // 256) + 64
    fixed = Command(Op.POLL, 0x58, bound=5_000, interval=32, pre=True)
    assert fixed.budget() == 5_000 + 2 * 32 + 32 + 64


def test_the_statuses_and_faults_match_the_rtl() -> None:
    """The Python enums name the codes the Verilog uses (localparams of host_engine.v)."""
    for name, code in re.findall(r"ST_(\w+) = 8'd(\d)", HEADER):
        assert Status[name].value == int(code)
    for name, code in re.findall(r"OP_(\w+) = 4'd(\d)", HEADER):
        assert Op[name].value == int(code)
    faults = {"OVERFLOW": "OVERFLOW", "OP": "UNKNOWN_OP", "LATE": "LATE"}
    found = re.findall(r"E_(\w+) = 3'd(\d)", HEADER)
    assert len(found) == 3
    for name, code in found:
        assert EngineFault[faults[name]].value == int(code)
