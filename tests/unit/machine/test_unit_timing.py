"""The machine's timing facts (models/machine/unit_timing.py) agree with the RTL's defaults and reach the top."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from models.machine.layouts import FUSED4
from models.machine.unit_timing import (CLUSTER_FACTS, DRAM_FACTS, FACTS, MAG_FACTS, ORCH_FACTS, VECTOR_FACTS, TimingFact,
                                        canonical, from_canonical, parse_overrides, unit_params)
from tb.system.machine_top import render_machine

ROOT = Path(__file__).resolve().parents[3]
PARAM = re.compile(r"parameter\s+integer\s+(\w+)\s*=\s*(\d+)")


def rtl_defaults(path: Path) -> dict[str, int]:
    return {name: int(value) for name, value in PARAM.findall(path.read_text())}


def test_vector_facts_are_the_rtl_defaults() -> None:
    """Every vector fact is a parameter of vc_timing_params.vh with the same default, and nothing else is there."""
    rtl = rtl_defaults(ROOT / "rtl/vector/vc_timing_params.vh")
    assert rtl == {f.name: f.value for f in VECTOR_FACTS}


@pytest.mark.parametrize("path, facts", [
    ("rtl/cluster/cluster_cu.v", CLUSTER_FACTS), ("rtl/mag/mag.v", MAG_FACTS), ("rtl/mag/mag_dram.v", DRAM_FACTS),
    ("rtl/orch/orchestrator.v", ORCH_FACTS)])
def test_unit_facts_are_the_rtl_defaults(path: str, facts: tuple[TimingFact, ...]) -> None:
    """Each fact is a parameter of the unit's module with the same default (a unit bench runs upstream's timing)."""
    rtl = rtl_defaults(ROOT / path)
    assert {f.name: rtl.get(f.name) for f in facts} == {f.name: f.value for f in facts}


def test_fact_defaults_lie_within_their_limits() -> None:
    for fact in FACTS.values():
        assert fact.lo <= fact.value <= fact.hi, fact.key


@pytest.mark.parametrize("module, facts, count", [
    ("vector_core", VECTOR_FACTS, len(FUSED4.vector_cores)), ("cluster_cu", CLUSTER_FACTS, len(FUSED4.clusters)),
    ("mag", MAG_FACTS, 1), ("mag_dram", DRAM_FACTS, 1), ("orchestrator", ORCH_FACTS, 1)])
def test_generated_top_carries_every_fact(module: str, facts: tuple, count: int) -> None:
    instances = re.findall(r"\b" + module + r" #\((.*?)\) (?:u_|dram)", render_machine(FUSED4))
    assert len(instances) == count
    for inst in instances:
        for fact in facts:
            assert f".{fact.name}({fact.value})" in inst


def test_an_override_reaches_the_top_and_nothing_else_changes() -> None:
    faster = dataclasses.replace(FUSED4, timing={"vector.FETCH": 2})
    assert dict(unit_params("vector", faster.timing))["FETCH"] == 2
    top = render_machine(faster)
    assert top.count(".FETCH(2)") == len(FUSED4.vector_cores) and ".FETCH(4)" not in top
    assert top.replace(".FETCH(2)", ".FETCH(4)") == render_machine(FUSED4)


@pytest.mark.parametrize("timing, message", [
    ({"vector.FECTH": 2}, "names no timing fact"),
    ({"vector.FETCH": 0}, "vector.FETCH=0 is outside 1..64"),
    ({"vector.XFER_GAP": 1}, "outside 2..255"),
])
def test_bad_override_is_refused_in_one_line(timing: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)) as err:
        dataclasses.replace(FUSED4, timing=timing)
    assert "\n" not in str(err.value)


def test_command_line_overrides_parse_in_any_order_to_one_canonical_set() -> None:
    got = parse_overrides(["vector.FETCH=2", " dram.RD_LATENCY = 8 "])
    assert got == {"vector.FETCH": 2, "dram.RD_LATENCY": 8}
    assert canonical(got) == "dram.RD_LATENCY=8,vector.FETCH=2"
    assert canonical(parse_overrides(["dram.RD_LATENCY=8", "vector.FETCH=2"])) == canonical(got)
    assert from_canonical(canonical(got)) == got and from_canonical("") == {} and canonical({}) == ""


@pytest.mark.parametrize("items, message", [
    (["vector.FECTH=2"], "--timing 'vector.FECTH' names no timing fact; known: cluster.ACU_STAGES"),
    (["vector.FETCH=0"], "--timing vector.FETCH=0 is outside 1..64 cycles (cycles from a word's execute"),
    (["mag.RDQ_DEPTH=1"], "--timing mag.RDQ_DEPTH=1 is outside 2..4096 flits"),
    (["cluster.DQ_DEPTH=8"], "outside 16..1024 entries"),
    (["vector.FETCH=fast"], "--timing vector.FETCH='fast' is not a whole number; give an integer in 1..64 cycles"),
    (["vector.FETCH"], "--timing 'vector.FETCH': write FACT=VALUE, e.g. vector.FETCH=2"),
    (["vector.FETCH=2", "vector.FETCH=3"], "--timing vector.FETCH given twice (2 and 3)"),
])
def test_a_bad_command_line_override_is_refused_naming_fact_limits_and_measure(items: list[str],
                                                                               message: str) -> None:
    with pytest.raises(ValueError) as err:
        parse_overrides(items)
    assert str(err.value).startswith(message) or message in str(err.value), str(err.value)
    assert "\n" not in str(err.value)


def test_every_fact_says_what_it_counts() -> None:
    measures = {f.measure for f in FACTS.values()}
    assert measures == {"cycles", "bits", "entries", "results", "flits", "writes"}
    assert FACTS["vector.PEND_BITS"].limits == "1..8 bits" and FACTS["vector.FETCH"].limits == "1..64 cycles"
