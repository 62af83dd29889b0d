"""A compiled bundle the format does not allow is refused in one line before anything runs, naming the file,
the field (round, step), what was expected and the fix; a bundle compiled for another machine description is
refused naming the field and both values.

Each case edits a copy of a real bundle in tmp_path (a dropped field, a corrupt flit, a truncated archive, a
changed machine) and asks tb.client's reader (``resolve``, the same for the RTL and the models) for it; one
subprocess shows the command exits 2 with that one line and no traceback.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pytest

from models.bundle.reader import BUNDLES, Bundle, bundle_names
from models.bundle.executor import check_machine
from models.machine.layouts import get_machine
from tb.client import Refused, resolve
from tb.fuzz.edits import Edit, drop_field, flip_byte, json_edit, npz_edit, remove, set_field, truncate, write_text

ROOT = Path(__file__).resolve().parents[3]
FIX = "correct it or export the bundle again (the format: clients/README.md)"
AGAIN = "export the bundle again (the format: clients/README.md)"
MATMUL = "matmul_m32k64n32"  # one MG round: seed, kick (1,1) slots 0-3, kick (2,1) slots 4-7, two awaits
MLP = "mlp_silu_m32k64f64n32"  # plan[3] is a host relayout after round 2


def broken(tmp_path: Path, edit: Edit, name: str = MATMUL) -> Path:
    folder = tmp_path / name
    shutil.copytree(BUNDLES / name, folder)
    edit(folder)
    return folder


def refusal(folder: Path) -> str:
    """What tb.client's reader says of the folder (the --models path; the RTL path reads the same way)."""
    with pytest.raises(Refused) as caught:
        resolve([str(folder)], rtl=False)
    line = str(caught.value)
    assert "\n" not in line
    prefix = f"{folder}: "
    assert line.startswith(prefix), line
    return line[len(prefix):]


F16 = np.float16
FLIT = "00005008320000c000008000000128000000000000000000000000000000000000000000"
R0 = "(round 0"
# (case, bundle, edit, the whole refusal after "<dir>: ")
JSON_CASES: list[tuple[str, str, Edit, str]] = [
    ("not_json", MATMUL, write_text("bundle.json", '{"plan": '),
     f"bundle.json: not JSON (Expecting value at line 1 column 10); {AGAIN}"),
    ("not_utf8", MATMUL, lambda folder: (folder / "bundle.json").write_bytes(b'{"kernel": "\xff"}'),
     f"bundle.json: byte 12 is not UTF-8; {AGAIN}"),
    ("not_an_object", MATMUL, write_text("bundle.json", "[]"), f"bundle.json: [] is not a JSON object; {FIX}"),
    ("no_machine", MATMUL, drop_field("machine"),
     "bundle.json: no field 'machine' (expected the machine description {name, units, agent, mag, routers, "
     f"stage_flits, inst_depth, mem_window_base}}); {FIX}"),
    ("routers_length", MATMUL, set_field("machine.routers", [3]),
     f"bundle.json machine.routers: [3] is not [nx, ny] routers, each 1..14; {FIX}"),
    ("unit_coordinate", MATMUL, set_field("machine.units.VC.1", [2, 16]),
     f"bundle.json machine.units.VC[1][1]: 16 is not an integer 0..15; {FIX}"),
    ("stage_flits_text", MATMUL, set_field("machine.stage_flits", "128"),
     f"bundle.json machine.stage_flits: '128' is not an integer >= 1 (staging slots); {FIX}"),
    ("window_not_hex", MATMUL, set_field("machine.mem_window_base", "2147483648"),
     f"bundle.json machine.mem_window_base: '2147483648' is not a byte address as a '0x...' hex string of up to "
     f"40 bits; {FIX}"),
    ("no_reference", MATMUL, drop_field("kernel.reference"),
     f"bundle.json kernel: no field 'reference' (expected a non-empty string); {FIX}"),
    ("dram_base_hex", MATMUL, set_field("dram.base", "0x8000_1000"),
     f"bundle.json dram.base: '0x8000_1000' is not a byte address as a '0x...' hex string of up to 40 bits; {FIX}"),
    ("region_kind", MATMUL, set_field("dram.regions.2.kind", "scratch"),
     f"bundle.json dram.regions[2].kind: 'scratch' is not one of 'input', 'constant', 'output', 'temp'; {FIX}"),
    ("region_outside", MATMUL, set_field("dram.regions.2.nbytes", 8192),
     "bundle.json dram.regions[2] (region c): bytes 0x80003000..0x80004fff lie outside the image "
     f"0x80001000..0x800037ff (dram.base, dram.nbytes); {FIX}"),
    ("region_twice", MATMUL, set_field("dram.regions.1.name", "a"),
     f"bundle.json dram.regions[1] (region a): a second region named 'a'; {FIX}"),
    ("input_dtype", MATMUL, set_field("inputs.a.dtype", "float32"),
     f"bundle.json inputs.a.dtype: 'float32' is not one of 'float16'; {FIX}"),
    ("input_shape", MATMUL, set_field("inputs.a.shape", ["32", 64]),
     f"bundle.json inputs.a.shape[0]: '32' is not an integer >= 1; {FIX}"),
    ("expected_port", MATMUL, json_edit(lambda m: m["expected"].update(d=m["expected"]["c"])),
     f"bundle.json expected: ports ['c', 'd'], the output regions of dram.regions are ['c']; expected the same "
     f"names; {FIX}"),
    ("plan_not_list", MATMUL, set_field("plan", {}), f"bundle.json plan: {{}} is not a list of plan entries; {FIX}"),
    ("plan_kind", MATMUL, set_field("plan.0.kind", "loop"),
     f"bundle.json plan[0]: unknown plan entry 'loop' (field 'kind'; known: round, host_convert); {FIX}"),
    ("no_steps", MATMUL, drop_field("plan.0.steps"),
     f"bundle.json plan[0] {R0}): no field 'steps' (expected a list of steps); {FIX}"),
    ("round_text", MATMUL, set_field("plan.0.round", "0"),
     f"bundle.json plan[0].round (round ?): '0' is not an integer >= 0; {FIX}"),
    ("round_unit", MATMUL, set_field("plan.0.unit", "PE"),
     f"bundle.json plan[0].unit (round 0): 'PE' is not one of 'MG', 'VC'; {FIX}"),
    ("step_op", MATMUL, set_field("plan.0.steps.0.op", "jump"),
     f"bundle.json plan[0].steps[0] {R0}): unknown step 'jump' (field 'op'; known: seed, kick, await, barrier); "
     f"{FIX}"),
    ("flit_hex", MATMUL, set_field("plan.0.steps.1.flits.3", "zz" + FLIT[2:]),
     f"bundle.json plan[0].steps[1].flits[3] {R0}, kick to [1, 1]): '{('zz' + FLIT[2:])[:36]}... "
     f"is not a staged 288-bit flit: 72 hex digits, MSB first; {FIX}"),
    ("flit_short", MATMUL, set_field("plan.0.steps.1.flits.3", FLIT[1:]),
     f"bundle.json plan[0].steps[1].flits[3] {R0}, kick to [1, 1]): '{FLIT[1:37]}... "
     f"is not a staged 288-bit flit: 72 hex digits, MSB first; {FIX}"),
    ("flit_number", MATMUL, set_field("plan.0.steps.1.flits.0", 5),
     f"bundle.json plan[0].steps[1].flits[0] {R0}, kick to [1, 1]): 5 is not a staged 288-bit flit: 72 hex "
     f"digits, MSB first; {FIX}"),
    ("kick_nflits", MATMUL, set_field("plan.0.steps.1.nflits", 5),
     f"bundle.json plan[0].steps[1] {R0}, kick to [1, 1]): 4 flits listed, nflits says 5; {FIX}"),
    ("kick_base", MATMUL, set_field("plan.0.steps.2.base", -4),
     f"bundle.json plan[0].steps[2].base {R0}, kick to [2, 1]): -4 is not an integer >= 0 (staging slot); {FIX}"),
    ("kick_node_not_mg", MATMUL, set_field("plan.0.steps.2.node", [1, 0]),
     f"bundle.json plan[0].steps[2].node {R0}, kick to [1, 0]): [1, 0] is not a MG unit of machine.units "
     f"(expected one of [[1, 1], [1, 2], [2, 1], [2, 2]]); {FIX}"),
    ("await_node", MATMUL, set_field("plan.0.steps.3.node", [0, 1]),
     f"bundle.json plan[0].steps[3].node {R0}, await on [0, 1]): [0, 1] is no unit of machine.units (expected "
     f"one of [[1, 0], [1, 1], [1, 2], [2, 0], [2, 1], [2, 2], [3, 0], [3, 1]]); {FIX}"),
    ("await_count", MATMUL, set_field("plan.0.steps.3.count", 0),
     f"bundle.json plan[0].steps[3].count {R0}, await on [1, 1]): 0 is not an integer 1..65535 (signals); {FIX}"),
    ("seed_credits", MATMUL, set_field("plan.0.steps.0.credits", True),
     f"bundle.json plan[0].steps[0].credits {R0}, seed): True is not an integer 0..65535 (instruction credits); "
     f"{FIX}"),
    ("round_nflits", MATMUL, set_field("plan.0.nflits", 7),
     f"bundle.json plan[0].nflits (round 0): 7, but its kicks stage 8 slot(s); expected the count of slots "
     f"staged; {FIX}"),
    ("observed_key", MATMUL, json_edit(lambda m: m["plan"][0]["observed"].update({"1-1": {}})),
     f"bundle.json plan[0].observed (round 0): key '1-1' is not a node 'x,y'; {FIX}"),
    ("observed_after", MATMUL, drop_field("plan.0.observed.2,1.after"),
     f"bundle.json plan[0].observed.2,1 (round 0): no field 'after' (expected an integer 0..65535); {FIX}"),
    ("round_twice", MLP, set_field("plan.2.round", 1),
     f"bundle.json plan[2].round (round 1): round 1 appears twice in the plan; {FIX}"),
    ("no_round", MATMUL, set_field("plan", []),
     f"bundle.json plan: no round in the plan: expected at least one entry of kind 'round'; {FIX}"),
    ("relayout_round", MLP, set_field("plan.3.after_round", 3),
     f"bundle.json plan[3].after_round (host_convert): 3 names no round before this entry (rounds so far: "
     f"[0, 1, 2]); {FIX}"),
    ("relayout_gather", MLP, set_field("plan.3.gather", [0, 1]),
     f"bundle.json plan[3].gather: [0, 1] is not 'dram_in.npz:<key>', naming the gather map; {FIX}"),
    ("relayout_outside", MLP, set_field("plan.3.addr", "0x80006000"),
     "bundle.json plan[3] (host_convert): bytes 0x80006000..0x80006fff lie outside the image "
     f"0x80001000..0x800067ff (dram.base, dram.nbytes); {FIX}"),
    ("busy_cycles", MATMUL, set_field("upstream_model.busy_cycles", {"1,1": "300"}),
     f"bundle.json upstream_model.busy_cycles.1,1: '300' is not an integer >= 0; {FIX}"),
]

TIMING = "timing_rtl.json"
TIMING_FIX = ("correct it, export the bundle again (the format: clients/README.md), or remove timing_rtl.json (the "
              "run is then reported with no reference timing)")
T0 = "timing_rtl.json rounds[0]"
# matmul's timing_rtl.json: one round, kicks [0, 36], awaits [1, 1, 900] and [2, 1, 1236], host 188, total 1424
TIMING_CASES: list[tuple[str, str, Edit, str]] = [
    ("timing_not_json", MATMUL, write_text(TIMING, '{"rounds": '),
     f"timing_rtl.json: not JSON (Expecting value at line 1 column 12); {TIMING_FIX}"),
    ("timing_no_rounds", MATMUL, drop_field("rounds", TIMING),
     f"timing_rtl.json: no field 'rounds' (expected a list of rounds); {TIMING_FIX}"),
    ("timing_host_text", MATMUL, set_field("rounds.0.host_cycles", "188", TIMING),
     f"{T0}.host_cycles (round 0): '188' is not an integer >= 0 (cycles); {TIMING_FIX}"),
    ("timing_no_machine", MATMUL, drop_field("rounds.0.machine_cycles", TIMING),
     f"{T0} (round 0): no field 'machine_cycles' (expected an integer >= 0 (cycles)); {TIMING_FIX}"),
    ("timing_await_pair", MATMUL, set_field("rounds.0.awaits.1", [2, 1], TIMING),
     f"{T0}.awaits[1] (round 0): [2, 1] is not [node x, node y, cycle met] (x, y 0..15, cycle >= 0); {TIMING_FIX}"),
    ("timing_rounds_count", MATMUL, json_edit(lambda t: t["rounds"].append(t["rounds"][0]), TIMING),
     f"timing_rtl.json rounds: 2 round(s), the plan (bundle.json) has 1; expected one entry per round, in plan "
     f"order; {TIMING_FIX}"),
    ("timing_round_number", MATMUL, set_field("rounds.0.round", 1, TIMING),
     f"{T0}.round (round 1): 1, the plan's round at this place is 0; expected the rounds in plan order; "
     f"{TIMING_FIX}"),
    ("timing_staged", MATMUL, set_field("rounds.0.staged", 9, TIMING),
     f"{T0}.staged (round 0): 9, the round stages 8 slot(s) (bundle.json nflits); expected the same; {TIMING_FIX}"),
    ("timing_kick_count", MATMUL, set_field("rounds.0.kicks", [0], TIMING),
     f"{T0}.kicks (round 0): 1 KICK cycle(s), the round has 2 kick(s); expected one cycle per kick; {TIMING_FIX}"),
    ("timing_kick_first", MATMUL, set_field("rounds.0.kicks", [4, 36], TIMING),
     f"{T0}.kicks (round 0): [4, 36]: expected cycles relative to the first KICK, so 0 first, never decreasing; "
     f"{TIMING_FIX}"),
    ("timing_await_nodes", MATMUL, set_field("rounds.0.awaits", [[2, 1, 1236], [1, 1, 900]], TIMING),
     f"{T0}.awaits (round 0): nodes [[2, 1], [1, 1]], the round awaits [[1, 1], [2, 1]]; expected one [x, y, "
     f"cycle] per await, in plan order; {TIMING_FIX}"),
    ("timing_machine_not_last", MATMUL, set_field("rounds.0.machine_cycles", 1200, TIMING),
     f"{T0}.machine_cycles (round 0): 1200, the last await was met at 1236; expected the first KICK to the last "
     f"await met; {TIMING_FIX}"),
    ("timing_round_total", MATMUL, set_field("rounds.0.total", 1425, TIMING),
     f"{T0}.total (round 0): 1425, host_cycles + machine_cycles = 1424; expected their sum; {TIMING_FIX}"),
    ("timing_sum", MLP, set_field("machine_cycles", 6741, TIMING),
     f"timing_rtl.json machine_cycles: 6741, the rounds' machine_cycles sum to 6740; expected their sum; "
     f"{TIMING_FIX}"),
]

ARRAY_CASES: list[tuple[str, str, Edit, str]] = [
    ("dram_in_missing", MATMUL, remove("dram_in.npz"),
     f"dram_in.npz missing; a bundle folder holds bundle.json, dram_in.npz, expected.npz and optionally "
     f"expected_rtl.npz; {AGAIN}"),
    ("dram_in_truncated", MATMUL, truncate("dram_in.npz"),
     f"dram_in.npz: not a readable .npz archive (BadZipFile: File is not a zip file); it may be truncated or "
     f"corrupt; {AGAIN}"),
    ("dram_in_bit_flipped", MATMUL, flip_byte("dram_in.npz", 3000),
     "dram_in.npz: not a readable .npz archive (BadZipFile: Bad CRC-32 for file 'image.npy'); it may be "
     f"truncated or corrupt; {AGAIN}"),
    ("dram_in_text", MATMUL, write_text("dram_in.npz", "image = 0\n"),
     f"dram_in.npz: not an .npz archive (it starts b'imag', a zip archive starts b'PK\\x03\\x04'); {AGAIN}"),
    ("dram_in_one_array", MATMUL, lambda folder: np.save(folder / "dram_in.npy", np.zeros(4, np.uint8))
     or (folder / "dram_in.npy").rename(folder / "dram_in.npz"),
     f"dram_in.npz: not an .npz archive (it starts b'\\x93NUM', a zip archive starts b'PK\\x03\\x04'); {AGAIN}"),
    ("dram_in_object_array", MATMUL, npz_edit("dram_in.npz", a=np.array([{}], dtype=object)),
     "dram_in.npz member a.npy: dtype object, expected plain numbers (bool, integer, float) or text; object "
     f"arrays are never unpickled; {AGAIN}"),
    ("image_missing", MATMUL, npz_edit("dram_in.npz", image=None),
     f"dram_in.npz: no array 'image' (the initial DRAM bytes, dram.nbytes = 10240 of them); {AGAIN}"),
    ("image_dtype", MATMUL, npz_edit("dram_in.npz", image=np.zeros(5120, np.uint16)),
     f"dram_in.npz image: dtype uint16, expected uint8 (the initial DRAM bytes, dram.nbytes = 10240 of them); "
     f"{AGAIN}"),
    ("image_length", MATMUL, npz_edit("dram_in.npz", image=np.zeros(10208, np.uint8)),
     f"dram_in.npz image: shape (10208,), expected (10240,) (the initial DRAM bytes, dram.nbytes = 10240 of "
     f"them); {AGAIN}"),
    ("image_base", MATMUL, npz_edit("dram_in.npz", base=np.uint64(0x80000000)),
     f"dram_in.npz base: values 2147483648..2147483648, expected 2147487744..2147487744 (image[0]'s byte "
     f"address, dram.base = 0x80001000); {AGAIN}"),
    ("dram_in_input_shape", MATMUL, npz_edit("dram_in.npz", b=np.zeros((64, 32), F16)),
     f"dram_in.npz b: shape (64, 32), expected (32, 64) (input b as declared in bundle.json inputs); {AGAIN}"),
    ("dram_in_input_dtype", MATMUL, npz_edit("dram_in.npz", a=np.zeros((32, 64), np.float32)),
     f"dram_in.npz a: dtype float32, expected float16 (input a as declared in bundle.json inputs); {AGAIN}"),
    ("gather_range", MLP, npz_edit("dram_in.npz", host_convert_0=np.full(2048, 2048, np.int32)),
     "dram_in.npz host_convert_0: values 2048..2048, expected -1..2047 (the gather map of plan[3], write_nbytes/2 "
     f"slot indices into read_nbytes/2 slots, -1 for none); {AGAIN}"),
    ("gather_size", MLP, npz_edit("dram_in.npz", host_convert_0=np.zeros(2047, np.int32)),
     f"dram_in.npz host_convert_0: 2047 entries, plan[3] writes 4096 bytes = 2048 slots; {AGAIN}"),
    ("expected_a_folder", MATMUL, lambda folder: remove("expected.npz")(folder) or (folder / "expected.npz").mkdir(),
     f"expected.npz: not a regular file (a directory); a bundle's files are plain files, a bundle folder holds "
     f"bundle.json, dram_in.npz, expected.npz and optionally expected_rtl.npz; {AGAIN}"),
    ("expected_missing", MATMUL, remove("expected.npz"),
     f"expected.npz missing; a bundle folder holds bundle.json, dram_in.npz, expected.npz and optionally "
     f"expected_rtl.npz; {AGAIN}"),
    ("final_length", MATMUL, npz_edit("expected.npz", dram_final=np.zeros(10241, np.uint8)),
     f"expected.npz dram_final: shape (10241,), expected (10240,) (the DRAM bytes after the last round, "
     f"dram.nbytes = 10240); {AGAIN}"),
    ("slots_missing", MATMUL, npz_edit("expected.npz", c__slots=None),
     "expected.npz: no array 'c__slots' (output c's slot map: an FP16 slot 0..1023 of its region or -1 per "
     f"element, shape as bundle.json expected.c); {AGAIN}"),
    ("slots_range", MATMUL, npz_edit("expected.npz", c__slots=np.full((32, 32), 1024, np.int32)),
     "expected.npz c__slots: values 1024..1024, expected -1..1023 (output c's slot map: an FP16 slot 0..1023 of "
     f"its region or -1 per element, shape as bundle.json expected.c); {AGAIN}"),
    ("ref_dtype", MATMUL, npz_edit("expected.npz", c__ref=np.zeros((32, 32), np.int64)),
     f"expected.npz c__ref: dtype int64, expected floating (output c's float64 reference, shape as bundle.json "
     f"expected.c); {AGAIN}"),
    ("valid_shape", MATMUL, npz_edit("expected.npz", c__valid=np.ones(32, bool)),
     f"expected.npz c__valid: shape (32,), expected (32, 32) (output c's valid mask); {AGAIN}"),
    ("rtl_truncated", MATMUL, truncate("expected_rtl.npz", 100),
     f"expected_rtl.npz: not a readable .npz archive (BadZipFile: File is not a zip file); it may be truncated "
     f"or corrupt; {AGAIN}"),
    ("rtl_final_dtype", MATMUL, npz_edit("expected_rtl.npz", dram_final=np.zeros(10240, np.int8)),
     f"expected_rtl.npz dram_final: dtype int8, expected uint8 (the DRAM bytes after the last round, "
     f"dram.nbytes = 10240); {AGAIN}"),
]

MACHINE_FIX = ("(models/machine/layouts.py); recompile it for fused4 as described there, or describe the machine it was "
               "compiled for there under a name of its own")
MACHINE_CASES: list[tuple[str, Any, str]] = [
    ("routers", [2, 2], "[2, 2] (bundle.json), machine fused4 has [3, 2]"),
    ("stage_flits", 256, "256 (bundle.json), machine fused4 has 128"),
    ("inst_depth", 1024, "1024 (bundle.json), machine fused4 has 512"),
    ("agent", [3, 1], "[3, 1] (bundle.json), machine fused4 has [3, 2]"),
    ("mag", [0, 2], "[0, 2] (bundle.json), machine fused4 has [0, 1]"),
    ("mem_window_base", "0x0", "0x0 (bundle.json), machine fused4 has 0x80000000"),
    ("units.VC", [[1, 0], [2, 0], [3, 0]], "[[1, 0], [2, 0], [3, 0]] (bundle.json), machine fused4 has "
                                           "[[1, 0], [2, 0], [3, 0], [3, 1]]"),
]


@pytest.mark.parametrize("case, name, edit, words", JSON_CASES + TIMING_CASES + ARRAY_CASES,
                         ids=[c[0] for c in JSON_CASES + TIMING_CASES + ARRAY_CASES])
def test_a_broken_bundle_is_refused_in_one_line(tmp_path: Path, case: str, name: str, edit: Edit,
                                                words: str) -> None:
    assert refusal(broken(tmp_path, edit, name)) == words


@pytest.mark.parametrize("field, value, words", MACHINE_CASES, ids=[c[0] for c in MACHINE_CASES])
def test_a_bundle_compiled_for_another_machine_is_refused(tmp_path: Path, field: str, value: Any,
                                                          words: str) -> None:
    folder = broken(tmp_path, set_field(f"machine.{field}", value))
    assert refusal(folder) == f"bundle {MATMUL} was compiled for machine.{field} = {words} {MACHINE_FIX}"


def test_every_shipped_bundle_is_read_without_a_refusal() -> None:
    """The checks refuse nothing the format allows: all of clients/bundles pass them and their machine's."""
    for name in bundle_names():
        b = Bundle(name)
        b.check()
        check_machine(b, get_machine(b.meta["machine"]["name"]))
    assert len(resolve([str(BUNDLES / n) for n in bundle_names()], rtl=True)) == len(bundle_names())


def test_a_bundle_without_timing_is_read_with_no_reference(tmp_path: Path) -> None:
    folder = broken(tmp_path, remove(TIMING))
    assert [b.name for b in resolve([str(folder)], rtl=True)] == [MATMUL]
    assert Bundle(folder).timing_rtl is None and Bundle(MATMUL).timing_rtl is not None


def test_the_reader_refuses_what_a_property_would_read_later(tmp_path: Path) -> None:
    """A caller that skips check() (the bench's helpers, the tests) meets the same one line on first use."""
    b = Bundle(broken(tmp_path, truncate("expected.npz")))
    assert b.meta["machine"]["name"] == "fused4" and b.image.size == 10240  # the other files are fine
    with pytest.raises(ValueError, match=r"^expected\.npz: not a readable \.npz archive"):
        b.expected_models


@pytest.mark.parametrize("models", [True, False], ids=["models", "rtl"])
def test_the_command_exits_2_with_the_line_and_no_traceback(tmp_path: Path, models: bool) -> None:
    folder = broken(tmp_path, drop_field("plan.0.steps"))
    cmd = [sys.executable, "-m", "tb.client", "run", str(folder), "--build", str(tmp_path / "build")]
    proc = subprocess.run(cmd + (["--models"] if models else []), cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert proc.stdout == ""
    assert proc.stderr == (f"refused: {folder}: bundle.json plan[0] (round 0): no field 'steps' (expected a list "
                           f"of steps); {FIX}\n")
    assert not (tmp_path / "build").exists()  # refused before anything was built or run
