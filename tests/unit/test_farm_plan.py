"""tb.farm without a cluster: SEEDS= parsed or refused by name, the task plan, replay commands, the report's
order and the refusal of an outcome computed from other sources."""

from __future__ import annotations

import pytest

from tb.benches import get_bench
from tb.farm.__main__ import plan
from tb.farm.engine import same_sources
from tb.farm.merge import in_table_order, verdicts
from tb.farm.seeds import parse_seeds
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.options import BadInput
from tb.runner import BenchResult, CaseResult


def test_seeds_are_a_count_a_range_or_a_list() -> None:
    assert parse_seeds("3") == [1, 2, 3]
    assert parse_seeds("5..8") == [5, 6, 7, 8]
    assert parse_seeds("17, 3,17") == [17, 3]


@pytest.mark.parametrize(("spec", "words"), [("", "SEEDS is empty"), ("0", "1 or more"), ("9..2", "SEEDS=2..9"),
                                              ("a..b", "not a count"), ("1,x", "not a count"),
                                              ("0..2", "seed 0 is outside 1..2147483647")])
def test_a_bad_seeds_spec_is_refused_by_name(spec: str, words: str) -> None:
    with pytest.raises(BadInput, match=words.replace(".", r"\.")):
        parse_seeds(spec)


def test_the_plan_is_bench_by_bench_and_each_task_replays_alone() -> None:
    tasks = plan([get_bench("fifo"), get_bench("mesh_2x2")], [4, 9], "verilator", "")
    assert [t.key for t in tasks] == ["fifo-verilator-seed4", "fifo-verilator-seed9", "mesh_2x2-verilator-seed4",
                                      "mesh_2x2-verilator-seed9"]
    assert tasks[1].replay() == "make SIM=verilator BENCH=fifo COCOTB_RANDOM_SEED=9"
    assert BenchTask("mesh_2x2", "icarus", 3, "stall").replay() == \
        "make SIM=icarus BENCH=mesh_2x2 COCOTB_TEST_FILTER='stall' COCOTB_RANDOM_SEED=3"


def _outcome(bench: str, seed: int, checks: int, digest: str = "") -> TaskOutcome:
    result = BenchResult(bench=bench, tests=[CaseResult("t", True, checks=checks, cycles=10 * checks)])
    return TaskOutcome(BenchTask(bench, "icarus", seed), result, digest=digest, host="h", worker="tcp://w:1")


def test_the_report_order_does_not_depend_on_the_finishing_order() -> None:
    a = [_outcome("mesh_2x2", 2, 5), _outcome("fifo", 7, 1), _outcome("fifo", 3, 2)]
    assert [o.task.key for o in in_table_order(a)] == ["fifo-icarus-seed3", "fifo-icarus-seed7",
                                                       "mesh_2x2-icarus-seed2"]
    assert verdicts(a) == verdicts(list(reversed(a)))
    assert verdicts(a) != verdicts([_outcome("mesh_2x2", 2, 6), *a[1:]])  # a check count differs: seen


def test_an_outcome_from_other_sources_is_a_named_failure() -> None:
    ok = _outcome("fifo", 1, 4, digest="aaaa")
    assert same_sources(ok, "aaaa") is ok
    bad = same_sources(_outcome("fifo", 1, 4, digest="bbbb"), "aaaa")
    assert bad.result.failed == 1 and not bad.result.tests
    assert "from other sources (digest bbbb, this checkout aaaa)" in bad.result.error
    assert "replay: make SIM=icarus BENCH=fifo COCOTB_RANDOM_SEED=1" in bad.result.error
