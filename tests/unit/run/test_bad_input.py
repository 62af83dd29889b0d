"""Bad input to the main job is refused before anything is built: one line naming the value, the limit
and the fix, exit status 2 (tb.run.regress.main, as `make SIM=icarus` calls it)."""

from __future__ import annotations

import pytest

from tb.run import regress

CASES = [
    ({"COCOTB_RANDOM_SEED": "abc"}, "COCOTB_RANDOM_SEED='abc' is not a decimal integer; give the seed a run printed"),
    ({"COCOTB_RANDOM_SEED": "-1"}, "COCOTB_RANDOM_SEED=-1 is outside 0..4294967295"),
    ({"COCOTB_RANDOM_SEED": str(2**32)}, "COCOTB_RANDOM_SEED=4294967296 is outside 0..4294967295"),
    ({"COCOTB_TEST_FILTER": "["}, "COCOTB_TEST_FILTER='[' is not a regular expression (unterminated character set"),
    ({"BENCH": "", "AGSIM_BENCH_GIVEN": "1"}, "BENCH is set but empty; name one or more benches"),
    ({"BENCH": "fifo,"}, "BENCH='fifo,' has an empty name between its commas"),
    ({"BENCH": "fifoo"}, "unknown bench 'fifoo'; known benches: fifo, router"),
    ({"SIM": "modelsim"}, "SIM='modelsim' is not a simulator of this project: use one of icarus, verilator"),
]


@pytest.mark.parametrize("env, words", CASES, ids=[next(iter(c[0])) + "=" + repr(next(iter(c[0].values())))
                                                   for c in CASES])
def test_refused_in_one_line_before_anything_runs(monkeypatch: pytest.MonkeyPatch, capsys, env, words) -> None:
    for k in ("COCOTB_RANDOM_SEED", "COCOTB_TEST_FILTER", "BENCH", "AGSIM_BENCH_GIVEN", "SIM"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setattr(regress, "open_client", lambda *a, **k: pytest.fail("a cluster started despite bad input"))
    assert regress.main(["--results", "/dev/null"]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.count("\n") == 1 and out.err.startswith("error: " + words), out.err


def test_an_unset_bench_runs_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGSIM_BENCH_GIVEN", raising=False)
    assert len(regress.select_benches("", given=False)) == len(regress.BENCHES)
