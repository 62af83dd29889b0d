"""A bundle's cycle limits (tb/bundle/cycle_limits.py): derived from its timing_rtl.json, or estimated from its
plan without one; every shipped bundle gets a limit well above what it was measured to need; a 3.04 M-cycle
program gets one above 3.04 M; the overrides change it as documented and a bad one is refused in one line."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from models.bundle.loader import plan_rounds
from models.bundle.reader import BUNDLES, Bundle
from tb.bundle.cycle_limits import (DEFAULT_MARGIN, MARGIN_ENV, MAX_CYCLES_ENV, POLL_ALLOWANCE, estimated_round,
                                    limits_for, override_env, overrides)
from tb.run.options import BadInput

ROOT = Path(__file__).resolve().parents[3]
CLIENTS = ROOT / "clients"
MATMUL = "matmul_m32k64n32"  # one MG round: 8 slots staged, 8 flits kicked; upstream host 188 + machine 1,236

# Each bundle's cycles on the clients bench (the guard's count, reset to the end of the readback), measured with
# `python -m tb.client run clients/bundles/*/ clients/scale/*/ clients/model/*/ --sim verilator`.
MEASURED = {
    "flash_attention_l64d64": 279_606, "gated_silu_fused_m32k64n32_g8x8": 8_459, "group_norm_g8n128": 19_230,
    "linear_bias_m32k64n32": 5_645, "linear_gate_add_m32k64n32": 9_381, "linear_gelu_unfused_m32k64n32": 10_315,
    "linear_relu_m32k64n32": 5_497, "linear_silu_fused_m32k128n32": 7_585, "linear_silu_fused_m32k64n32": 6_353,
    "linear_silu_unfused_m32k64n32": 10_978, "matmul_m32k128n64": 5_362, "matmul_m32k64n32": 1_577,
    "mlp_silu_m32k64f64n32": 14_007, "ops_log2_m32n64": 6_467, "ops_where_m32n64": 11_976,
    "rmsnorm_m32n64": 30_999, "select_lt_m32n64": 10_476, "softmax_m32n64": 36_698,
    "conv2d_bias_h16w16c32n64": 195_571, "flash_attention_causal_l128d64": 873_153,
    "matmul_m128k256n128": 81_895, "mlp_silu_m64k128f256n64": 99_213, "softmax_m128n128": 141_588,
    "llm_block1_l64d64": 463_696,
}


def shipped() -> list[Path]:
    """Every bundle folder under clients/ (bundles, scale, model) that is present in this checkout."""
    return sorted(p.parent for p in CLIENTS.glob("*/*/bundle.json"))


def copy_bundle(tmp_path: Path, src: Path, timing: bool = True) -> Path:
    folder = tmp_path / src.name
    shutil.copytree(src, folder)
    if not timing:
        (folder / "timing_rtl.json").unlink()
    return folder


def test_with_timing_rtl_the_figures_are_upstreams() -> None:
    lim = limits_for(Bundle(MATMUL), {})
    (r,) = lim.rounds
    assert (r.host, r.machine, r.staged, r.relayouts) == (188, 1236, 8, 0)
    assert r.allowance == 5_000 + 32 * 8
    assert r.poll == 2 * 1236 + POLL_ALLOWANCE == 12_472
    assert r.share == 2 * (188 + 1236) + r.poll + r.allowance == 20_576
    assert lim.total == lim.derived == 20_576 + 1_000
    assert lim.timed and lim.margin == DEFAULT_MARGIN and not lim.margin_given
    assert lim.describe() == (
        "21,576 simulated cycles = 2x timing_rtl.json's 1,424 cycles + 12,472 for one poll bound a round (a hang is "
        "named by its poll first) + 5,256 for our host's work beyond upstream's (1 round(s) x 5,000 for landing and the after-reads, 8 staged slot(s) x 32 for their read-back, "
        "0 relayout(s) x 1,000) + 1,000 for reset, image load and readback")
    assert lim.poll_note(0) == ("the poll's bound: 12,472 cycles = 2x timing_rtl.json's 1,236 machine cycles of "
                                "round 0 + 10,000; if the round only needs longer, raise it with "
                                "AGSIM_CYCLE_MARGIN=<factor>")


def test_without_timing_rtl_the_plan_is_estimated(tmp_path: Path) -> None:
    b = Bundle(copy_bundle(tmp_path, BUNDLES / MATMUL, timing=False))
    lim = limits_for(b, {})
    (r,) = lim.rounds
    assert (r.host, r.machine) == (32 * 8, 4096 * 8)
    assert r.poll == 2 * 32_768 + POLL_ALLOWANCE
    assert r.share == 2 * (256 + 32_768) + r.poll + 5_256 and lim.total == r.share + 1_000 == 147_840
    assert not lim.timed
    assert "33,024 cycles estimated from the plan (4,096 machine cycles a flit kicked, 32 host cycles a slot " \
           "staged; no timing_rtl.json)" in lim.describe()
    assert "the plan's estimated 32,768 machine cycles of round 0" in lim.poll_note(0)


@pytest.mark.parametrize("folder", shipped(), ids=lambda p: p.name)
def test_the_estimate_is_above_every_shipped_round(folder: Path) -> None:
    """The figures standing in for timing_rtl.json are above upstream's own on every round measured."""
    b = Bundle(folder)
    assert b.timing_rtl is not None
    for prog, up in zip(plan_rounds(b), b.timing_rtl):
        host, machine = estimated_round(len(prog.stage), sum(len(k.flits) for k in prog.round.kicks))
        assert host >= up.host_cycles and machine >= up.machine_cycles, (prog.round.index, host, machine, up)


@pytest.mark.parametrize("folder", shipped(), ids=lambda p: p.name)
def test_every_shipped_bundle_gets_a_limit_well_above_its_run(folder: Path) -> None:
    """At least twice the cycles the bench measured, each poll at least twice its round's machine cycles, and
    each round's share room for the round twice over and one poll that expires (a hang is named by its poll)."""
    b = Bundle(folder)
    lim = limits_for(b, {})
    assert lim.total >= 2 * MEASURED[b.name], (lim.total, MEASURED[b.name])
    assert b.timing_rtl is not None
    for r, up in zip(lim.rounds, b.timing_rtl):
        assert r.poll >= 2 * up.machine_cycles + POLL_ALLOWANCE
        assert r.share >= 2 * up.total + r.poll  # room for the healthy round and one poll that expires


def scaled_timing(folder: Path, machine_total: int) -> None:
    """Rewrite the bundle's timing_rtl.json with every figure scaled so its machine cycles sum to about
    `machine_total`, consistently (machine = the last await, total = host + machine, the sums)."""
    path = folder / "timing_rtl.json"
    t = json.loads(path.read_text())
    k = machine_total / t["machine_cycles"]
    for r in t["rounds"]:
        r["kicks"] = [math.ceil(c * k) for c in r["kicks"]]
        r["awaits"] = [[x, y, math.ceil(c * k)] for x, y, c in r["awaits"]]
        r["host_cycles"] = math.ceil(r["host_cycles"] * k)
        r["machine_cycles"] = max(c for _, _, c in r["awaits"])
        r["total"] = r["host_cycles"] + r["machine_cycles"]
    t["machine_cycles"] = sum(r["machine_cycles"] for r in t["rounds"])
    t["total"] = sum(r["total"] for r in t["rounds"])
    path.write_text(json.dumps(t))


def test_a_3_04_m_cycle_program_gets_a_limit_above_it(tmp_path: Path) -> None:
    """The issue's 256-token flash attention ran 3.04 M machine cycles upstream: a program of that size (the
    causal flash attention's timing scaled to it) gets more than twice that."""
    src = CLIENTS / "scale" / "flash_attention_causal_l128d64"
    if not src.exists():
        pytest.skip("clients/scale is not in this checkout")
    folder = copy_bundle(tmp_path, src)
    scaled_timing(folder, 3_040_000)
    b = Bundle(folder)
    b.check()
    assert b.timing_rtl is not None
    machine = sum(t.machine_cycles for t in b.timing_rtl)
    assert machine >= 3_040_000
    lim = limits_for(b, {})
    assert lim.total > 2 * sum(t.total for t in b.timing_rtl) > 2 * 3_040_000


def test_the_margin_scales_the_figures_not_the_allowances() -> None:
    base = limits_for(Bundle(MATMUL), {})
    three = limits_for(Bundle(MATMUL), {MARGIN_ENV: "3"})
    (r,) = three.rounds
    assert r.poll == 3 * 1236 + POLL_ALLOWANCE and r.share == 3 * 1424 + r.poll + 5_256
    assert three.total == base.total + 1424 + 1236 and three.margin_given
    assert "(now 3)" in three.how_to_raise() and "(now 2, the default)" in base.how_to_raise()


def test_max_cycles_replaces_the_whole_limit_not_the_polls() -> None:
    lim = limits_for(Bundle(MATMUL), {MAX_CYCLES_ENV: "2_000_000"})
    assert lim.total == 2_000_000 and lim.derived == 21_576
    assert lim.poll_bound(0) == 12_472
    assert lim.describe().startswith("2,000,000 simulated cycles, from AGSIM_MAX_CYCLES=2000000 (derived from the "
                                     "bundle it would be 21,576 = 2x timing_rtl.json's 1,424 cycles")


def test_the_watchdog_message_names_limit_source_place_and_fix() -> None:
    msg = limits_for(Bundle(MATMUL), {}).watchdog("round 0 (matmul:0, MG), 0 of 1 round(s) finished; step: x")
    assert msg.startswith("watchdog: bundle matmul_m32k64n32 did not finish within its limit of 21,576 simulated "
                          "cycles = 2x timing_rtl.json's 1,424 cycles + ")
    assert "(host was in round 0 (matmul:0, MG), 0 of 1 round(s) finished; step: x)" in msg
    assert msg.endswith("raise it with AGSIM_CYCLE_MARGIN=<factor> (now 2, the default) or AGSIM_MAX_CYCLES=<cycles> "
                        "(python -m tb.client run --cycle-margin X / --max-cycles N)")


@pytest.mark.parametrize("name, value", [
    (MARGIN_ENV, "abc"), (MARGIN_ENV, "0"), (MARGIN_ENV, "0.5"), (MARGIN_ENV, "-2"), (MARGIN_ENV, "nan"),
    (MARGIN_ENV, "inf"), (MAX_CYCLES_ENV, "abc"), (MAX_CYCLES_ENV, "0"), (MAX_CYCLES_ENV, "-5"),
    (MAX_CYCLES_ENV, "1.5"), (MAX_CYCLES_ENV, "1e6"),
])
def test_a_bad_override_is_refused_in_one_line(name: str, value: str) -> None:
    with pytest.raises(BadInput) as exc:
        overrides({name: value})
    text = str(exc.value)
    assert "\n" not in text and text.startswith(f"{name}={value!r} is not ") and f"write e.g. {name}=" in text


def test_good_overrides_and_the_command_line_entries() -> None:
    assert overrides({}) == (None, None)
    assert overrides({MARGIN_ENV: " 1.5 ", MAX_CYCLES_ENV: "4,000,000"}) == (1.5, 4_000_000)
    assert override_env("3", None, {}) == {MARGIN_ENV: "3"}
    assert override_env(None, "5000000", {}) == {MAX_CYCLES_ENV: "5000000"}
    assert override_env(None, None, {}) == {}
    with pytest.raises(BadInput):
        override_env(None, None, {MARGIN_ENV: "x"})  # a bad value already in the environment is refused too


@pytest.mark.parametrize("option", [["--cycle-margin", "0.5"], ["--max-cycles", "lots"]])
def test_the_command_refuses_a_bad_option_before_anything_runs(tmp_path: Path, option: list[str]) -> None:
    cmd = [sys.executable, "-m", "tb.client", "run", str(BUNDLES / MATMUL), "--build", str(tmp_path / "build"),
           *option]
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("refused: AGSIM_"), done.stderr
    assert not (tmp_path / "build").exists()


def test_the_wall_backstop_grows_with_long_programs() -> None:
    """One simulator process running long programs gets a wall-clock backstop from their cycle limits at the
    slowest healthy rate, never below the table's hour; short ones keep the hour."""
    from tb.bundle.cycle_limits import SLOWEST_CYCLES_PER_S, wall_backstop_s

    small = [Bundle("matmul_m32k64n32")]
    assert wall_backstop_s(small, "icarus", 3600.0, {}) == 3600.0
    model = Bundle(BUNDLES.parent / "model" / "llm_block1_l64d64")
    got = wall_backstop_s([model, model], "icarus", 3600.0, {})
    assert got == math.ceil(2 * limits_for(model, {}).total / SLOWEST_CYCLES_PER_S["icarus"]) and got > 3600.0
    assert wall_backstop_s([model], "verilator", 3600.0, {}) == 3600.0
