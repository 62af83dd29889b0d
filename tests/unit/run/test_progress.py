"""Progress lines of long runs: done/total, elapsed, and an estimate from the previous run, the recorded typical
durations or this run's mean, and which."""

from __future__ import annotations

import json
from pathlib import Path

from tb.run.benches import BY_NAME
from tb.run.progress import Progress, deal_to_slices, fmt_s, longest_first, previous_durations
from tb.run.simulators import bench_legs
from tb.run.typical import TABLE, Typical, load_table, typical_for, typical_for_benches


def test_estimate_from_this_run_then_from_the_previous_run(tmp_path: Path) -> None:
    hist = tmp_path / "durations.json"
    p = Progress("job", ["a", "b", "c"], history=hist)
    line = p.done("a", 10.0)
    assert line.startswith("[1/3] a 10 s, elapsed ") and line.endswith("about 20 s left (from this run's mean step)")
    p.done("b", 30.0)
    assert p.done("c", 5.0).startswith("[3/3] c 5 s") and "left" not in p.done("c", 5.0)
    p.save()
    assert json.loads(hist.read_text()) == {"job": {"a": 10.0, "b": 30.0, "c": 5.0}}
    q = Progress("job", ["a", "b", "c"], history=hist)
    assert q.done("a", 12.0).endswith("about 35 s left (from the previous run)")


def test_a_filtered_run_records_nothing(tmp_path: Path) -> None:
    hist = tmp_path / "d.json"
    p = Progress("job", ["a"], history=hist, record=False)
    p.done("a", 1.0)
    p.save()
    assert not hist.exists()


def test_durations_read_well() -> None:
    assert (fmt_s(7.4), fmt_s(185), fmt_s(3720)) == ("7 s", "3m05s", "1h02m")


def test_previous_durations_merge_the_jobs_of_one_prefix(tmp_path: Path) -> None:
    hist = tmp_path / "durations.json"
    assert previous_durations("pytest/icarus/", hist) == {}  # no file: nothing known
    hist.write_text(json.dumps({"pytest/icarus/1 workers": {"a": 5, "b": 7},
                                "pytest/icarus/2 workers": {"a": 9},
                                "pytest/verilator/2 workers": {"c": 100}}))
    assert previous_durations("pytest/icarus/", hist) == {"a": 9.0, "b": 7.0}
    hist.write_text("{ not json")
    assert previous_durations("pytest/icarus/", hist) == {}


def test_longest_first_puts_the_untimed_then_the_longest_ahead() -> None:
    steps = ["fifo", "clients", "ahbm", "mesh", "new"]
    # a new folder: the named ones lead, in their order; the rest keep theirs
    assert longest_first(steps, {}, first=["clients", "ahbm"]) == ["clients", "ahbm", "fifo", "mesh", "new"]
    # durations known: the one never timed first (it may be long), then longest first
    known = {"fifo": 1.0, "clients": 200.0, "ahbm": 110.0, "mesh": 9.0}
    assert longest_first(steps, known, first=["clients"]) == ["new", "clients", "ahbm", "mesh", "fifo"]


def test_deal_to_slices_starts_every_workers_part_with_its_share_of_the_heads() -> None:
    heads, rest = ["L1", "L2", "L3", "L4", "L5"], [f"u{i}" for i in range(15)]
    out = deal_to_slices(heads, rest, 2)
    assert sorted(out) == sorted(heads + rest) and len(out) == 20  # nothing lost or doubled
    first, second = out[:10], out[10:]  # worksteal's cut: 20 // 2, then the 10 left
    assert first[:3] == ["L1", "L3", "L5"] and second[:2] == ["L2", "L4"]
    assert [x for x in out if x.startswith("u")] == rest  # the rest keeps its order
    assert deal_to_slices(heads, rest, 1) == heads + rest
    # parts too small for their heads: nothing is lost
    assert sorted(deal_to_slices(heads, ["u0"], 3)) == sorted(heads + ["u0"])


def _typical(**seconds: float) -> Typical:
    return typical_for([(s, s, "icarus") for s in seconds], {"icarus": dict(seconds)})  # type: ignore[return-value]


def test_a_first_run_estimates_from_the_typical_durations_not_its_first_short_steps(tmp_path: Path) -> None:
    """No previous run: the short bench that finishes first says nothing of the long ones left; the typical
    durations do (the longest left, 300 s, bounds the time on two workers from below)."""
    steps = {"fifo": 2.0, "mesh": 100.0, "clients": 300.0}
    p = Progress("job", list(steps), history=tmp_path / "none.json", workers=2, typical=_typical(**steps))
    line = p.done("fifo", 2.0)
    assert line.endswith(f"about {fmt_s(300.0)} left (from the typical durations, tb/run/typical_durations.json)")
    alone = Progress("job", list(steps), history=tmp_path / "none.json", workers=2)
    assert alone.done("fifo", 2.0).endswith("about 2 s left (from this run's mean step)")  # what a first run said
    p.done("clients", 280.0)
    assert p.estimate() == (100.0, "from the typical durations, tb/run/typical_durations.json")  # one left: alone


def test_the_longest_step_left_bounds_the_estimate_less_the_time_it_may_have_run(tmp_path: Path) -> None:
    p = Progress("job", ["long", "a", "b"], history=tmp_path / "none.json", workers=2,
                 typical=_typical(long=300.0, a=1.0, b=1.0))
    p.done("a", 1.0)
    assert 299.0 < (p.estimate() or (0.0, ""))[0] <= 300.0  # not (300 + 1) / 2
    p.t0 -= 100.0  # 100 s into the run: the long step, started first, has 200 s left at most
    assert 199.0 < (p.estimate() or (0.0, ""))[0] <= 200.0
    p.t0 -= 200.0  # past its typical duration: the share of the two steps left remains
    assert p.estimate() == (150.5, "from the typical durations, tb/run/typical_durations.json")


def test_the_previous_run_wins_where_it_timed_a_step(tmp_path: Path) -> None:
    hist = tmp_path / "durations.json"
    hist.write_text(json.dumps({"job": {"a": 40.0, "b": 10.0, "c": 30.0}}))
    typical = _typical(a=1.0, b=1.0, c=1.0, new=50.0)
    p = Progress("job", ["a", "b", "c"], history=hist, typical=typical)
    assert p.done("a", 1.0).endswith("about 40 s left (from the previous run)")  # every step left timed before
    q = Progress("job", ["a", "b", "new"], history=hist, typical=typical)
    assert q.done("a", 1.0).endswith("about 1m00s left (from the previous run and the typical durations, "
                                     "tb/run/typical_durations.json)")  # b from the previous run, new typical
    assert q.expected() == {"a": 40.0, "b": 10.0, "new": 50.0}


def test_a_bench_the_table_lacks_counts_at_its_median_and_the_line_says_so(tmp_path: Path) -> None:
    table = {"icarus": {"a": 10.0, "b": 20.0, "c": 60.0}, "verilator": {"a": 1000.0}}
    typical = typical_for([("a-icarus", "a", "icarus"), ("new-icarus", "new", "icarus")], table)
    assert typical is not None and typical.fallback_s == 20.0  # the median of the run's simulator's figures
    p = Progress("job", ["a-icarus", "new-icarus"], history=tmp_path / "none.json", typical=typical)
    assert p.estimate() == (30.0, "from the typical durations, tb/run/typical_durations.json; new-icarus not in "
                                  "it, counted at its median 20 s")  # 30 / 1 worker: more than the longest
    assert typical_for([("a", "a", "xcelium")], table) is None  # nothing recorded for that simulator
    assert typical_for_benches(["fifo"], "xcelium") is None


def test_an_unreadable_table_gives_no_typical_durations(tmp_path: Path) -> None:
    bad = tmp_path / "t.json"
    assert load_table(bad) == {}
    bad.write_text('{"seconds": {"icarus": {"fifo": "soon"}}}')
    assert load_table(bad) == {}


def test_every_bench_of_the_table_has_a_typical_duration() -> None:
    """A new bench must come with its figure (its Icarus run, and its Verilator run where `make test` runs it
    on Verilator), measured and written into tb/run/typical_durations.json with the others."""
    table = load_table()
    data = json.loads(TABLE.read_text())
    for sim, figures in table.items():
        assert data["measured"].get(sim), f"{TABLE.name}: no note of where the {sim} figures were measured"
        assert all(s > 0 for s in figures.values()), figures
        assert set(figures) <= set(BY_NAME), f"{TABLE.name} names benches the table lacks: " \
            f"{sorted(set(figures) - set(BY_NAME))}"
    for bench, sim in bench_legs("icarus"):  # the main job's benches, and the suite's legs
        for s in {sim, "icarus"}:
            assert bench.name in table.get(s, {}), f"{bench.name} has no typical {s} duration in {TABLE.name}"
