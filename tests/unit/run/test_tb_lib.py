"""Unit tests of the pure-Python parts of the bench library (no simulator)."""

from __future__ import annotations

import json
import logging
import random
import re
from pathlib import Path

import pytest

from models.noc.flit import unpack_flit
from models.noc.mesh import MeshGeometry
from tb.run.benches import BENCHES, ROOT, get_bench
from tb.lib.harness import StallMode, StallPattern
from tb.noc.stimulus import build_streams
from tb.lib.verdict import STATS_FILE, Verdict, derive_seed
from tb.run.summary import format_summary
from tb.run.runner import BenchResult, CaseResult, _read_results


def test_seed_depends_on_run_seed_and_name_only() -> None:
    assert derive_seed(7, "a") == derive_seed(7, "a")
    assert derive_seed(7, "a") != derive_seed(7, "b")
    assert derive_seed(7, "a") != derive_seed(8, "a")
    assert 0 <= derive_seed(2**80 + 3, "x") < 2**32


def test_verdict_pass_writes_stats(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    v = Verdict("b", "t", 1, 2, logging.getLogger("t"))
    v.check(True, "fine")
    v.cycles = 10
    v.finish()
    rec = json.loads((tmp_path / STATS_FILE).read_text())
    assert rec["verdict"] == "PASS" and rec["checks"] == 1 and rec["cycles"] == 10


def test_verdict_meta_is_the_artifacts_record() -> None:
    v = Verdict("b", "t", 1, 2, logging.getLogger("t"))
    v.check(True, "fine")
    assert v.meta(machine="m") == {"bench": "b", "test": "t", "machine": "m", "seed": 1, "run_seed": 2,
                                   "verdict": "PASS", "checks": 1, "cycles": 0, "failures": [], "reports": {}}
    v.check(False, "count was 3, expected 4")
    assert v.meta()["verdict"] == "FAIL" and v.meta()["failures"] == ["count was 3, expected 4"]


def test_verdict_counts_named_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                      caplog: pytest.LogCaptureFixture) -> None:
    """A named report (HAZARD H1) is logged line by line, counted in the verdict line, the meta and the stats,
    and is not a failure."""
    monkeypatch.chdir(tmp_path)
    v = Verdict("b", "t", 1, 2, logging.getLogger("t"))
    v.check(True, "fine")
    v.report("HAZARD H1", "HAZARD H1 pc=10 p=0")
    v.report("HAZARD H1", "HAZARD H1 pc=16 p=0")
    with caplog.at_level(logging.INFO):
        v.finish()
    assert v.meta()["reports"] == {"HAZARD H1": 2} and v.meta()["verdict"] == "PASS"
    assert "HAZARD_H1=2" in caplog.text and "HAZARD H1 pc=16 p=0" not in caplog.text.split("VERDICT")[-1]
    assert json.loads((tmp_path / STATS_FILE).read_text())["reports"] == {"HAZARD H1": 2}


def test_verdict_fail_raises_and_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    v = Verdict("b", "t", 1, 2, logging.getLogger("t"))
    v.check(False, "count was 3, expected 4")
    with pytest.raises(AssertionError, match="count was 3, expected 4"):
        v.finish()
    rec = json.loads((tmp_path / STATS_FILE).read_text())
    assert rec["verdict"] == "FAIL" and rec["failures"] == ["count was 3, expected 4"]


def _results_xml(path: Path, name: str, failure: bool = False) -> None:
    body = '<failure message="boom"/>' if failure else ""
    path.write_text(f'<testsuites><testsuite><testcase name="{name}" sim_time_ns="5">{body}'
                    f"</testcase></testsuite></testsuites>")


def test_results_without_verdict_count_as_failed(tmp_path: Path) -> None:
    _results_xml(tmp_path / "r.xml", "t1")
    (res,) = _read_results(tmp_path / "r.xml", tmp_path / "none.jsonl")
    assert not res.passed and "no verdict" in res.message


def test_results_with_pass_verdict(tmp_path: Path) -> None:
    _results_xml(tmp_path / "r.xml", "t1")
    (tmp_path / "s.jsonl").write_text(json.dumps({"test": "t1", "verdict": "PASS", "checks": 4, "cycles": 9}) + "\n")
    (res,) = _read_results(tmp_path / "r.xml", tmp_path / "s.jsonl")
    assert res.passed and res.checks == 4 and res.cycles == 9


def test_results_with_failure_fail_even_with_pass_verdict(tmp_path: Path) -> None:
    _results_xml(tmp_path / "r.xml", "t1", failure=True)
    (tmp_path / "s.jsonl").write_text(json.dumps({"test": "t1", "verdict": "PASS", "checks": 1}) + "\n")
    (res,) = _read_results(tmp_path / "r.xml", tmp_path / "s.jsonl")
    assert not res.passed and res.message == "boom"


def test_summary_names_failures_and_closes_with_counts() -> None:
    ok = BenchResult("a", [CaseResult("t", True, checks=3, cycles=100)], wall_s=2.0)
    bad = BenchResult("b", [CaseResult("u", False, message="LOST flit")], wall_s=1.0)
    text = format_summary([ok, bad], seed=5)
    assert "FAILED b::u: LOST flit" in text
    assert text.splitlines()[-1] == "1 passed, 1 failed"
    assert "COCOTB_RANDOM_SEED=5" in text


def test_bench_table_is_consistent() -> None:
    names = [b.name for b in BENCHES]
    assert len(names) == len(set(names))
    for b in BENCHES:
        for src in b.sources:
            assert (ROOT / src).is_file(), f"{b.name}: missing source {src}"
        assert (ROOT / (b.test_module.replace(".", "/") + ".py")).is_file(), b.name
        if b.toplevel == "mesh_harness":
            assert b.shape is not None
            assert (b.parameters["NX"], b.parameters["NY"], b.parameters["EDGE_MASK"]) == (
                b.shape.nx, b.shape.ny, b.shape.edge_mask), f"{b.name}: shape disagrees with parameters"
            MeshGeometry(b.shape.nx, b.shape.ny, b.shape.edge_mask)


def test_unknown_bench_is_refused_with_the_list() -> None:
    with pytest.raises(ValueError, match="unknown bench 'nope'; known benches: fifo"):
        get_bench("nope")


def test_stall_level_is_range_checked() -> None:
    StallPattern(StallMode.RANDOM, 255)
    with pytest.raises(ValueError, match="0..255"):
        StallPattern(StallMode.RANDOM, 256)


def test_stimulus_src_is_the_sender_and_slot_is_tagged() -> None:
    g = MeshGeometry(3, 2, MeshGeometry.all_edges(3, 2))
    pairs = [(s, d) for s in g.endpoints() for d in g.endpoints()]
    streams = build_streams(g, pairs, random.Random(1))
    seen = 0
    for src, flits in streams.items():
        for f in flits:
            flit = unpack_flit(f)
            assert flit.src == g.port_coord(src)
            assert g.port_index(flit.dst) in g.endpoints()
            seen += 1
    tags = sorted(unpack_flit(f).payload >> 224 for fl in streams.values() for f in fl)
    assert tags == list(range(len(pairs))) and seen == len(pairs)


def test_stimulus_is_each_flit_packed_whole_from_the_same_draws() -> None:
    """The per-pair header cache changes no flit: a seed gives what packing every field with pack_flit gives."""
    from models.noc.flit import pack_flit
    from tb.noc.stimulus import TRAFFIC_TYPES

    g = MeshGeometry(4, 4, 0)
    pairs = [(s, d) for _ in range(3) for s in g.endpoints() for d in g.endpoints() if s != d]
    got = build_streams(g, pairs, random.Random(5))
    rng, want = random.Random(5), {}
    for slot, (s, d) in enumerate(pairs):
        payload = (slot << 224) | rng.getrandbits(224)
        ftype, txn, last = rng.choice(TRAFFIC_TYPES), rng.getrandbits(8), rng.getrandbits(1)
        (dx, dy), (sx, sy) = g.port_coord(d), g.port_coord(s)
        want.setdefault(s, []).append(pack_flit(dst_x=dx, dst_y=dy, src_x=sx, src_y=sy, type=ftype, txn=txn,
                                                last=last, payload=payload))
    assert got == want


def test_stimulus_refuses_a_slot_past_its_tag(monkeypatch: pytest.MonkeyPatch) -> None:
    """A slot the payload's tag cannot hold is refused, not wrapped into the header (the tag narrowed to 2 bits
    here, so the fifth flit is past it)."""
    import tb.noc.stimulus as stimulus

    monkeypatch.setattr(stimulus, "_SLOT_MASK", 3)
    g = MeshGeometry(2, 1, 0)
    assert len(build_streams(g, [(0, 1)] * 4, random.Random(1))[0]) == 4
    with pytest.raises(ValueError, match="slot 4 does not fit the payload's 32-bit slot tag"):
        build_streams(g, [(0, 1)] * 5, random.Random(1))


@pytest.mark.parametrize("value,expected", [("1", True), ("yes", True), ("TRUE", True), ("on", True),
                                            ("0", False), ("no", False), ("false", False), ("", False)])
def test_env_flags_read_like_cocotb(monkeypatch: pytest.MonkeyPatch, value: str, expected: bool) -> None:
    from tb.run.options import env_flag

    monkeypatch.setenv("WAVES", value)
    assert env_flag("WAVES") is expected


def test_process_env_overrides_exported_values_and_restores(monkeypatch: pytest.MonkeyPatch) -> None:
    """make exports COCOTB_TEST_FILTER even when empty; cocotb would let it win."""
    import os

    from tb.run.runner import _process_env

    monkeypatch.setenv("COCOTB_TEST_FILTER", "")
    monkeypatch.setenv("WAVES", "no")
    monkeypatch.delenv("COCOTB_RANDOM_SEED", raising=False)
    with _process_env("only_this$", 42, True):
        assert os.environ["COCOTB_TEST_FILTER"] == "only_this$"
        assert os.environ["COCOTB_RANDOM_SEED"] == "42"
        assert os.environ["WAVES"] == "1"
    assert os.environ["COCOTB_TEST_FILTER"] == "" and os.environ["WAVES"] == "no"
    assert "COCOTB_RANDOM_SEED" not in os.environ
    with _process_env(None, 1, False):
        assert "COCOTB_TEST_FILTER" not in os.environ


def test_a_setup_fact_counts_no_check_and_fails_at_once() -> None:
    """Facts about the bench's own stimulus or model are set-up assertions, not checks of the device."""
    v = Verdict("b", "t", 1, 1, logging.getLogger("t"))
    v.setup(True, "stimulus rich enough")
    assert v.checks == 0 and not v.failures
    with pytest.raises(AssertionError, match="^set-up: multicast traffic too thin"):
        v.setup(False, "multicast traffic too thin")
    assert v.checks == 0


def test_a_variant_runs_only_its_tests_and_a_user_filter_narrows_them() -> None:
    """ahbm_tightq keeps the cases whose pushes block on 8-word queues; COCOTB_TEST_FILTER narrows further."""
    from tb.run.runner import effective_filter, list_tests

    tight, full = get_bench("ahbm_tightq"), get_bench("ahbm")
    names = list_tests(tight)
    assert len(names) == 20 and len(list_tests(full)) == 34
    assert not any(n.endswith(("decode_no_sp", "decode_n/n=1", "prefill_no_sp", "prefill_ring/n=2",
                               "prefill_ring_long/n=2", "hang_ends_as_named_failure", "fault_ends_a_waiting_kernel"))
               for n in names)
    f = effective_filter(tight, "ring")
    assert [n.rsplit(".", 1)[-1] for n in list_tests(full) if re.search(f, n)] == [
        "prefill_ring/n=4", "prefill_ring/n=8", "prefill_ring_long/n=8"]
    assert effective_filter(full, "ring") == "ring" and effective_filter(full, None) is None
