"""`python -m tb.client run DIR ...`: a bundle folder in, a per-round table, a verdict and an exit status out.

The command is what a user points at an exported bundle, so each outcome is
tested on a real run: a pass exits 0, a planted wrong lane in the bundle's
expected output exits 1 naming the output, bad input exits 2 before anything
runs, a bundle without upstream's RTL run says how it was judged. One RTL run
(two small bundles, one of them planted) shows the same on the simulator,
with each round's timing beside upstream's ("no reference" for the planted
copy, its timing_rtl.json removed); a run whose timing misses a target fails
the command.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from models.bundle.reader import BUNDLES, Bundle
from models.bundle.report import BundleReport, RoundRow
from models.bundle.round_timing import RoundTiming
from tb.client import main, print_timing
from tb.lib.artifacts import load

ROOT = Path(__file__).resolve().parent.parent


def _copy(tmp: Path, name: str, as_name: str | None = None) -> Path:
    dst = tmp / (as_name or name)
    shutil.copytree(BUNDLES / name, dst)
    return dst


def _plant(path: Path, lane: int = 5) -> None:
    """Flip one bit of one output lane in the bundle's expected_rtl.npz."""
    b = Bundle(path)
    reg = next(iter(b.outputs.values()))
    z = dict(np.load(path / "expected_rtl.npz"))
    final = z["dram_final"].copy()
    lo = reg.addr - b.image_base
    final[lo + 2 * lane] ^= 1
    z["dram_final"] = final
    name = next(iter(b.outputs))
    z[f"{name}__raw"] = final[lo:lo + reg.nbytes].copy()  # the same lie everywhere the file states the lane
    slots = b.expected_models[f"{name}__slots"]
    z[name] = np.where(slots >= 0, z[f"{name}__raw"].view(np.float16)[np.maximum(slots, 0)], z[name])
    np.savez(path / "expected_rtl.npz", **z)


def test_a_program_of_many_kernels_is_judged_and_costed_kernel_by_kernel(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The one-layer forward pass (clients/model): its kernels judged one by one, the whole program's error a
    figure beside upstream's models', the kernel whose error is the largest named with its operations'
    losses, and the per-kernel table (dispatches, rounds, share, DRAM bytes, lanes judged)."""
    folder = BUNDLES.parent / "model" / "llm_block1_l64d64"
    rc = main(["run", str(folder), "--models", "--build", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    # the figures to meet, from the bundle and upstream's own run of it, not from this output
    meta = json.loads((folder / "bundle.json").read_text())
    upstream = json.loads((folder / "result.json").read_text())["ports"]["x"]
    attention = next(c for c in meta["calls"] if c["kernel"] == "flash_attention")
    timing = {r["round"]: r["machine_cycles"] for r in json.loads((folder / "timing_rtl.json").read_text())["rounds"]}
    stages = {p["stage"] for p in meta["plan"] if p["kind"] == "round" and p["round"] in attention["rounds"]}
    assert re.search(rf"float64 bound \(derived, per kernel\): {len(meta['calls'])} kernel\(s\), \d+ lanes judged "
                     rf"against float64 on the values each read", out), out
    assert (f"  whole program against x__ref (float64, not judged): max |y - ref| "
            f"{upstream['rtl_max_abs_err_vs_ref']:.3g} at ") in out  # our lanes are upstream RTL's, bit for bit
    assert f"; upstream's Python models {upstream['model_max_abs_err_vs_ref']:.3g}" in out
    assert "  largest kernel error: 4:flash_attention, " in out and "its operations' own rounding" in out
    assert re.search(r"\n  kernel +disp rounds +machine ours +upstream +share +DRAM bytes +lanes err/bound  worst at\n",
                     out)
    row = re.search(rf"\n  {attention['call']}:flash_attention +{len(stages)} +{len(attention['rounds'])} +\d+ "
                    rf"+{sum(timing[r] for r in attention['rounds'])} +([\d.]+)% +(\d+) +(\d+) ", out)
    share = 100 * sum(timing[r] for r in attention["rounds"]) / sum(timing.values())  # upstream's: 60.6 %
    assert row and abs(float(row.group(1)) - share) <= 1 and int(row.group(2)) > 0 and int(row.group(3)) > 0, out
    assert "PASS llm_block1_l64d64 on models" in out


def test_models_pass_prints_rounds_and_verdict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["run", str(BUNDLES / "mlp_silu_m32k64f64n32"), "--models", "--build", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert "awaits met" in out and "relayouts" in out
    assert out.count("\n      ") >= 4  # four rounds
    assert "PASS mlp_silu_m32k64f64n32 on models" in out and "lanes differing from expected_rtl 0" in out
    assert "  float64 bound (derived): worst |y - ref|/bound 0.4" in out and "(derived), " in out
    assert "every lane the kernel produced: worst |y - exact|/bound 0." in out
    assert "  whole program against y__ref (float64, judged within the bound above): max |y - ref| " in out
    # the timed golden models' cycles (models/timed) beside upstream's RTL, every round within 1 %
    rounds = json.loads((BUNDLES / "mlp_silu_m32k64f64n32" / "timing_rtl.json").read_text())["rounds"]
    found = re.search(r"  timing: machine cycles (\d+) ours / (\d+) upstream, ratio ([\d.]+)", out)
    assert found and int(found.group(2)) == sum(r["machine_cycles"] for r in rounds), out
    assert abs(int(found.group(1)) / int(found.group(2)) - 1) <= 0.01
    assert "timing against upstream's RTL: MET" in out
    arts = load(tmp_path / "models" / "artifacts.npz")
    rep = json.loads(str(arts["models.mlp_silu_m32k64f64n32"]["report_json"]))
    assert rep["passed"] and len(rep["rows"]) == 4 and sum(r["relayouts"] for r in rep["rows"]) == 1


def test_models_planted_lane_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = _copy(tmp_path, "ops_log2_m32n64", "planted")
    _plant(bad)
    rc = main(["run", str(BUNDLES / "matmul_m32k64n32"), str(bad), "--models", "--build", str(tmp_path)])
    out = capsys.readouterr().out
    assert rc == 1
    assert "FAILED: output y: 1 FP16 lane(s) differ from upstream's rtl (first slots [5])" in out
    assert "1 of 2 bundle(s) FAILED: planted" in out


def test_without_expected_rtl_says_how_it_is_judged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    mine = _copy(tmp_path, "matmul_m32k64n32", "mine")
    (mine / "expected_rtl.npz").unlink()
    assert main(["run", str(mine), "--models", "--build", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "NOTE: no expected_rtl.npz" in out and "lanes differing from expected_rtl -" in out


@pytest.mark.parametrize("case, words", [
    ("missing", "no such directory"),
    ("no_json", "no bundle.json in it"),
    ("no_image", "dram_in.npz missing"),
    ("twice", "a second bundle named matmul_m32k64n32"),
    ("bad_step", "unknown step 'jump'"),
    ("other_machine", "compiled for machine mm_mesh_sys; the RTL client bench is fused4"),
    ("unknown_machine", "unknown machine 'fused9'"),
])
def test_bad_input_refused_before_running(tmp_path: Path, capsys: pytest.CaptureFixture[str], case: str,
                                          words: str) -> None:
    dirs = [str(tmp_path / "nowhere")]
    if case != "missing":
        b = _copy(tmp_path, "matmul_m32k64n32")
        dirs = [str(b)]
        meta = json.loads((b / "bundle.json").read_text())
        if case == "no_json":
            (b / "bundle.json").unlink()
        elif case == "no_image":
            (b / "dram_in.npz").unlink()
        elif case == "twice":
            dirs.append(str(BUNDLES / "matmul_m32k64n32"))
        elif case == "bad_step":
            meta["plan"][0]["steps"][0]["op"] = "jump"
        elif case in ("other_machine", "unknown_machine"):
            meta["machine"]["name"] = "mm_mesh_sys" if case == "other_machine" else "fused9"
        (b / "bundle.json").write_text(json.dumps(meta)) if case not in ("no_json",) else None
    rc = main(["run", *dirs, "--build", str(tmp_path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("refused: ") and words in err and err.count("\n") == 1, err


def _as_calls(path: Path) -> None:
    """Declare each stage of the bundle a kernel call of its own (bundle.json ``calls``, clients/model/README.md):
    a program of several kernels whose results cross DRAM from one to the next."""
    meta = json.loads((path / "bundle.json").read_text())
    stages: dict[int, list[int]] = {}
    for p in meta["plan"]:
        if p["kind"] == "round":
            stages.setdefault(int(p["stage"]), []).append(int(p["round"]))
    meta["calls"] = [{"call": i, "kernel": f"stage{s}", "rounds": r} for i, (s, r) in enumerate(sorted(stages.items()))]
    (path / "bundle.json").write_text(json.dumps(meta))


def test_rtl_run_passes_and_fails_by_exit_status(tmp_path: Path) -> None:
    """On the simulator: a good bundle passes, a planted one fails; exit 1, both tables printed; the good one's
    rounds timed beside upstream's, the planted one (its timing_rtl.json removed) with no reference. A third,
    the MLP declared as three kernel calls, is judged kernel by kernel on the RTL's own image at each kernel
    boundary, and costed per kernel."""
    bad = _copy(tmp_path, "ops_log2_m32n64", "planted")
    _plant(bad, lane=7)
    (bad / "timing_rtl.json").unlink()
    calls = _copy(tmp_path, "mlp_silu_m32k64f64n32", "mlp_as_three_calls")
    _as_calls(calls)
    proc = subprocess.run([sys.executable, "-m", "tb.client", "run", str(BUNDLES / "matmul_m32k64n32"), str(bad),
                           str(calls), "--build", str(tmp_path / "build")], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)
    out = proc.stdout
    assert proc.returncode == 1, out + proc.stderr
    assert "PASS matmul_m32k64n32 on rtl" in out
    assert "FAILED: output y: 1 FP16 lane(s) differ from upstream's rtl (first slots [7])" in out
    assert "FAIL (1 failure(s)) planted on rtl" in out and "cycles" in out
    assert (tmp_path / "build" / "clients" / "artifacts.npz").exists()
    # timing: matmul's one round, ours beside upstream's (host 188, machine 1236 in its timing_rtl.json)
    row = next(line for line in out.splitlines() if line.endswith("matmul:0")).split()
    host, machine, rate = row[-4].split("/"), row[-3].split("/"), float(row[-2])
    assert host[1] == "188" and machine[1] == "1236" and int(host[0]) > 0 and int(machine[0]) > 0
    assert rate == round(int(machine[0]) / 1236, 3)
    assert f"  timing: machine cycles {machine[0]} ours / 1236 upstream, ratio {rate:.3f}; worst round 0 (MG)" in out
    assert re.search(r"  timing: no reference \(the bundle has no timing_rtl.json\); machine cycles \d+ ours", out)
    table = [line.split() for line in out.splitlines() if line.startswith("  matmul_m32k64n32 ")]
    assert table and table[0][4:7] == [machine[0], "1236", f"{rate:.3f}"] and table[0][7:] == ["r0", f"{rate:.3f}"]
    assert "timing against upstream's RTL: " in out and "; 2 bundle(s), 5 round(s) judged" in out
    assert "  not judged: planted: no reference" in out
    assert "PASS mlp_as_three_calls on rtl" in out
    # the first GEMM drains into the vector cores' L1 (a fused drain): nothing of it reaches DRAM to judge
    assert re.search(r"float64 bound \(derived, per kernel\): 2 kernel\(s\), [1-9]\d* lanes judged", out), out
    assert re.search(r"\n  0:stage0 +1 +1 +\d+ +2260 +[\d.]+% +\d+ +0 +-  nothing it produced reached DRAM", out)
    assert re.search(r"\n  1:stage1 +1 +2 +\d+ +3244 +[\d.]+% +\d+ +2048 +0\.\d+ ", out), out


def test_timing_off_target_fails_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """A run whose timing misses a target fails the command, naming the round; one on target passes."""
    ours, theirs = RoundTiming(0, 188, (0,), ((1, 1, 500),), 500), RoundTiming(0, 188, (0,), ((1, 1, 1000),), 1000)
    rep = BundleReport("k", "rtl", True, [], [RoundRow(0, "k:0", "MG", 8, 8, 900, 1, 1, 4, 0, ours.to_json())], 900,
                       1.0, upstream_timing=[theirs.to_json()])
    assert print_timing([rep]) is False
    out = capsys.readouterr().out
    assert out.count("bundle k round 0 (MG) machine cycles: ours 500, upstream 1000, ratio 0.500") == 1
    assert "timing against upstream's RTL: NOT MET" in out
    good = BundleReport("k", "rtl", True, [], [RoundRow(0, "k:0", "MG", 8, 8, 900, 1, 1, 4, 0, theirs.to_json())],
                        900, 1.0, upstream_timing=[theirs.to_json()])
    assert print_timing([good]) is True


def test_a_run_without_upstream_timing_is_not_judged(capsys: pytest.CaptureFixture[str]) -> None:
    """One's own export has no timing_rtl.json: the timing is said to be not judged, with our machine cycles,
    and does not fail the command (its bundles' verdicts do); with one reference among them it is judged."""
    ours = RoundTiming(0, 188, (0,), ((1, 1, 500),), 500)
    own = BundleReport("own", "rtl", True, [], [RoundRow(0, "own:0", "MG", 8, 8, 900, 1, 1, 4, 0, ours.to_json())],
                       900, 1.0)
    assert print_timing([own]) is True
    out = capsys.readouterr().out
    assert ("timing against upstream's RTL: not judged, no bundle has a timing_rtl.json to compare with; "
            "machine cycles 500 ours") in out
    far = RoundTiming(0, 188, (0,), ((1, 1, 1000),), 1000)
    timed = BundleReport("k", "rtl", True, [], [RoundRow(0, "k:0", "MG", 8, 8, 900, 1, 1, 4, 0, ours.to_json())],
                         900, 1.0, upstream_timing=[far.to_json()])
    assert print_timing([own, timed]) is False
    assert "  not judged: own: no reference" in capsys.readouterr().out


def test_a_reference_with_nothing_timed_fails_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    """A bundle with timing_rtl.json whose round was not timed (the run ended early) is not one's own export:
    its timing is NOT MET, and the command fails on it."""
    theirs = RoundTiming(0, 188, (0,), ((1, 1, 1000),), 1000)
    early = BundleReport("k", "rtl", True, [], [RoundRow(0, "k:0", "MG", 8, 8, 900, 1, 1, 4, 0, None)], 900, 1.0,
                         upstream_timing=[theirs.to_json()])
    assert print_timing([early]) is False
    out = capsys.readouterr().out
    assert "timing against upstream's RTL: NOT MET (1 reason(s)); 0 bundle(s)" in out
    assert "  not judged: k: not measured (0 of 1 rounds timed: the run ended early)" in out
