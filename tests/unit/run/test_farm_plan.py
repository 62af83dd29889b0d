"""tb.farm without a cluster: SEEDS= parsed or refused by name, the task plan, replay commands, the report's
order, the refusal of an outcome computed from other sources, and a farm node's command line."""

from __future__ import annotations

import pytest

from tb.run.benches import get_bench
from tb.farm.__main__ import plan
from tb.farm.engine import same_sources
from tb.farm.merge import in_table_order, verdicts
from tb.farm.node import ROOT as NODE_ROOT, NodeArgsRefused, dask_args, put_root_first
from tb.farm.seeds import parse_seeds
from tb.farm.tasks import BenchTask, TaskOutcome
from tb.run.options import BadInput
from tb.run.runner import BenchResult, CaseResult


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


def test_a_worker_on_other_sources_runs_nothing(tmp_path) -> None:
    """run_task told another digest than its own answers at once (no build, no run folder) with its digest,
    which same_sources turns into the named failure above."""
    from tb.farm.tasks import run_task, source_digest

    out = run_task(BenchTask("fifo", "icarus", 1), str(tmp_path), expect_digest="not-this-checkout")
    assert out.digest == source_digest() and not out.result.tests and not any(tmp_path.iterdir())
    assert "from other sources" in same_sources(out, "not-this-checkout").result.error


def test_the_differential_is_cut_into_shards_that_replay_alone() -> None:
    from tb.farm.vc_shards import plan_shards

    tasks = plan_shards([7], 1200, 500, "icarus")
    assert [t.tag for t in tasks] == ["0+500", "500+500", "1000+200"]
    assert [t.label for t in tasks] == ["vector_core@7[0+500]", "vector_core@7[500+500]", "vector_core@7[1000+200]"]
    assert tasks[2].replay() == ("AGSIM_VC_FIRST=1000 AGSIM_VC_PROGRAMS=200 make SIM=icarus BENCH=vector_core "
                                 "COCOTB_TEST_FILTER='test_random_programs$' COCOTB_RANDOM_SEED=7")
    assert len({t.key for t in plan_shards([1, 2], 10, 3, "icarus")}) == 8
    with pytest.raises(BadInput, match="VC_PROGRAMS=10 VC_SHARD=0: both must be 1 or more"):
        plan_shards([1], 10, 0, "icarus")


def _shard(first: int, xml: str) -> TaskOutcome:
    from tb.farm.vc_shards import STATS_ENV

    task = BenchTask("vector_core", "icarus", 1, tag=f"{first}+3", order=first, measure_env=STATS_ENV)
    result = BenchResult(bench="vector_core", tests=[CaseResult("test_random_programs", True, checks=1)])
    return TaskOutcome(task, result, measured={"programs": 3, "instructions": 40}, coverage_xml=xml)


def _toy_database(tmp_path: Path, name: str, hits: list[str]) -> str:
    """A database of one process that sampled `hits` on a model `vector` of one point with bins a, b, c."""
    from cocotb_coverage.coverage import CoverPoint

    from tb.cover import db

    db.reset("vector")

    @CoverPoint("vector.toy", xf=lambda x: x, bins=["a", "b", "c"])
    def sample(x: str) -> None:
        """One sample."""

    for h in hits:
        sample(h)
    db.save(tmp_path / name)
    db.reset("vector")
    return (tmp_path / name).read_text()


def test_coverage_is_judged_on_the_union_of_the_shards(tmp_path: Path) -> None:
    """Two shards' databases merged with cocotb-coverage: hits add bin by bin, a bin no shard hit stays a
    named hole, and a shard that wrote none is named and keeps the run open."""
    from tb.farm.coverage import merged_database
    from tb.farm.vc_shards import coverage_lines

    low = _shard(0, _toy_database(tmp_path, "low.xml", ["a", "a"]))
    high = _shard(3, _toy_database(tmp_path, "high.xml", ["b", "c", "a"]))
    database, path = merged_database([high, low], tmp_path / "root")
    assert path is not None and database is not None and database.closed
    assert dict(database.items[0].bins) == {"a": 3, "b": 1, "c": 1}
    lines, closed = coverage_lines([low, high], database)
    assert closed and "vector coverage holes on their union: none" in lines[0] and "6 programs" in lines[0]
    only_low, _ = merged_database([low], tmp_path / "root")
    assert only_low is not None and only_low.holes() == [("vector.toy", "b"), ("vector.toy", "c")]
    lines, closed = coverage_lines([low, _shard(3, "")], only_low)
    assert not closed and "toy:b, toy:c" in lines[0] and "wrote no coverage" in lines[1]


def test_the_merged_database_does_not_depend_on_finishing_order(tmp_path: Path) -> None:
    from tb.farm.coverage import merged_database

    a = _shard(0, _toy_database(tmp_path, "a.xml", ["a"]))
    b = _shard(3, _toy_database(tmp_path, "b.xml", ["c", "c"]))
    merged_database([a, b], tmp_path / "one")
    merged_database([b, a], tmp_path / "two")
    assert (tmp_path / "one" / "coverage.xml").read_bytes() == (tmp_path / "two" / "coverage.xml").read_bytes()


def test_batch_by_batch_merging_gives_the_union_of_every_batch(tmp_path: Path) -> None:
    """UNTIL=coverage adds each batch to the last merged file: the hits are those of one merge of all."""
    from tb.farm.coverage import merged_database

    a = _shard(0, _toy_database(tmp_path, "a.xml", ["a"]))
    b = _shard(3, _toy_database(tmp_path, "b.xml", ["c", "c"]))
    c = _shard(6, _toy_database(tmp_path, "c.xml", ["a", "b"]))
    whole, _ = merged_database([a, b, c], tmp_path / "whole")
    first, onto = merged_database([a], tmp_path / "batches")
    assert first is not None and dict(first.items[0].bins) == {"a": 1, "b": 0, "c": 0}
    merged_database([b], tmp_path / "batches", onto=onto)
    last, onto = merged_database([c], tmp_path / "batches", onto=onto)
    assert whole is not None and last is not None and whole.items == last.items
    assert dict(last.items[0].bins) == {"a": 2, "b": 1, "c": 2}


def test_closure_report_and_heat_map(tmp_path: Path) -> None:
    from tb.cover.db import Database, Item
    from tb.cover.report import closure_text, grid, heat_map

    cross = Item("noc.m.src_x_dst", (("('1,1', '1,1')", 2), ("('1,1', '2,1')", 0), ("('2,1', '1,1')", 5),
                                     ("('2,1', '2,1')", 1)))
    point = Item("noc.m.idle", (("NONE", 4), ("RANDOM", 0), ("BURST", 1)))
    database = Database((cross, point))
    text = closure_text(database, "run")
    assert text.splitlines()[0] == "run: 5/7 bins hit (71.4 %), 2 hole(s)"
    assert "holes: ('1,1', '2,1')" in text and "holes: RANDOM" in text
    assert grid(cross) == (["1,1", "2,1"], ["1,1", "2,1"], [[2, 0], [5, 1]])
    png = heat_map(database, tmp_path / "c.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_budget_is_tasks_or_wall_time() -> None:
    from tb.farm.until import Budget, parse_budget

    assert parse_budget("200") == Budget(tasks=200)
    assert parse_budget("30m") == Budget(wall_s=1800.0) and parse_budget("2h") == Budget(wall_s=7200.0)
    for bad in ("", "0", "2d", "ten"):
        with pytest.raises(BadInput, match="BUDGET="):
            parse_budget(bad)
    assert Budget(tasks=4).spent(4, 0.0) and not Budget(tasks=4).spent(3, 1e9)


def test_until_coverage_stops_when_closed_or_spent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The batch loop on a stand-in engine: a database that closes after the second batch ends the run
    there; one that never closes runs until the task budget, and never past it."""
    from tb.cover.db import Database, Item
    from tb.farm import until
    from tb.farm.engine import FarmRun

    ran: list[BenchTask] = []

    def fake_run(client, tasks, root, on_done):
        ran.extend(tasks)
        return FarmRun([TaskOutcome(t, BenchResult(bench=t.bench, tests=[CaseResult("t", True)])) for t in tasks])

    def database(closes_after: int | None):
        def merged(outcomes, root, onto=None):
            hit = closes_after is not None and len(ran) >= closes_after
            return Database((Item("noc.m.x", (("a", 1), ("b", int(hit)))),)), None
        return merged

    class Client:
        """run_tasks is stood in for: the client is never used."""

    monkeypatch.setattr(until, "run_tasks", fake_run)
    monkeypatch.setattr(until, "merged_database", database(4))
    benches = [type("B", (), {"name": "mesh_2x2"})()]
    u = until.run_until_closed(Client(), until.SeedBatches(benches, 1, "icarus", "", 2), until.Budget(tasks=100),
                               tmp_path, lambda o: None, lambda k, d: None)
    assert (u.ended, u.batches, [t.seed for t in ran]) == ("closed", 2, [1, 2, 3, 4])
    ran.clear()
    monkeypatch.setattr(until, "merged_database", database(None))
    batches = until.SeedBatches(benches, 1, "icarus", "")
    batches.for_workers(2)  # a seed per worker a batch
    u = until.run_until_closed(Client(), batches, until.Budget(tasks=5), tmp_path, lambda o: None, lambda k, d: None)
    assert (u.ended, len(ran), batches.needed(1)) == ("budget spent", 5, "seeds 1..5")


def test_shard_batches_continue_the_differential() -> None:
    from tb.farm.vc_shards import ShardBatches

    b = ShardBatches(7, 10, 4, "icarus")
    b.for_workers(5)  # a batch is VC_PROGRAMS programs on any cluster
    assert [t.tag for t in b(0, None)] == ["0+4", "4+4", "8+2"]
    assert [t.tag for t in b(1, 2)] == ["10+4", "14+4"] and b.needed(7) == "programs 0..17 of seed 7"
    with pytest.raises(BadInput, match="VC_PROGRAMS=0 VC_SHARD=4"):
        ShardBatches(7, 0, 4, "icarus")


def test_the_scaling_figures_are_computed_from_elapsed_and_task_walls() -> None:
    from tb.perf.farm_scaling import overhead, report

    one = {"workers": 1, "start_s": 2.0, "elapsed_s": 101.0, "walls": [25.0, 25.0, 25.0, 25.0], "passed": True,
           "programs": 400}
    two = {"workers": 2, "start_s": 2.5, "elapsed_s": 52.0, "walls": [25.0, 25.0, 25.0, 25.0], "passed": True,
           "programs": 400}
    assert overhead(one) == pytest.approx(0.25) and overhead(two) == pytest.approx(1.0)
    lines = report([one], [two])
    assert "throughput 2 workers / 1 worker = 1.94 over 1 alternating pair(s) (each pair: 1.94) " \
           "(target >= 1.8: met)" in lines[2]
    assert "2 workers can give about 2.00 (medians); the engine reached 97 % of it" in lines[3]
    assert "0.25 s per task outside tasks, median task 25.0 s: 1.0 % (target <= 5 %: met)" in lines[4]
    assert "1.00 s per task outside tasks, median task 25.0 s: 4.0 % (target <= 5 %: met)" in lines[5]
    slow = {**two, "elapsed_s": 70.0, "walls": [33.0] * 4}
    lines = report([one, one], [two, slow])
    assert "= 1.66 over 2 alternating pair(s) (each pair: 1.94, 1.44) (target >= 1.8: NOT met)" in lines[4]
    assert "25.0 s alone, 29.0 s beside another: 2 workers can give about 1.72" in lines[5]


def test_the_bundle_corpus_is_a_task_per_bundle(tmp_path) -> None:
    import shutil

    from models.bundle.reader import BUNDLES, bundle_names
    from tb.farm.bundles import bundle_folders, plan_bundles

    assert [f.name for f in bundle_folders("all")] == bundle_names()
    own = tmp_path / "mine"
    shutil.copytree(BUNDLES / "matmul_m32k64n32", own)
    tasks = plan_bundles(bundle_folders(f"{BUNDLES / 'softmax_m32n64'},{own}"), [3], "verilator")
    assert [t.label for t in tasks] == ["clients@3[softmax_m32n64]", "clients@3[mine]"]
    assert tasks[0].env == () and tasks[1].env == (("AGSIM_CLIENT_BUNDLES", str(own)),)
    assert tasks[1].replay() == (f"AGSIM_CLIENT_BUNDLES={own} make SIM=verilator BENCH=clients "
                                 f"COCOTB_TEST_FILTER='test_bundle/bundle=mine$' COCOTB_RANDOM_SEED=3")
    with pytest.raises(BadInput, match="holds no bundle.json"):
        bundle_folders(str(tmp_path))
    with pytest.raises(BadInput, match="two folders are named mine"):
        bundle_folders(f"{own},{own}")


def test_a_farm_node_is_a_scheduler_or_a_worker_of_an_address() -> None:
    """tb.farm.node (make scheduler / make worker): a worker runs one task at a time unless told otherwise, and
    a worker without its scheduler's address, or another role, is refused in one line naming the fix."""
    assert dask_args(["scheduler", "--port", "0"]) == ("scheduler", ["--port", "0"])
    assert dask_args(["worker", "tcp://head:8786"]) == ("worker", ["tcp://head:8786", "--nthreads", "1"])
    assert dask_args(["worker", "tcp://h:1", "--nthreads=4"]) == ("worker", ["tcp://h:1", "--nthreads=4"])
    assert dask_args(["worker", "--scheduler-file", "s.json"])[1][-2:] == ["--nthreads", "1"]
    with pytest.raises(NodeArgsRefused, match=r"make worker SCHEDULER=tcp://head:8786"):
        dask_args(["worker", "--no-dashboard"])  # `make worker` with SCHEDULER unset
    with pytest.raises(NodeArgsRefused, match="not client: make scheduler, or make worker"):
        dask_args(["client"])


def test_a_node_puts_its_checkout_first_on_the_path() -> None:
    """Run by path, node.py's own folder would head sys.path (tb/farm/coverage.py shadowing coverage)."""
    path = [str(NODE_ROOT / "tb" / "farm"), "", "/usr/lib/python3.11", str(NODE_ROOT)]
    put_root_first(path)
    assert path == [str(NODE_ROOT), "/usr/lib/python3.11"]
