"""A printed seed replays a test: one test run alone equals the same test inside its bench's full run.

Why: a user reruns a failing test with ``COCOTB_TEST_FILTER`` and the run's
seed. That only helps if nothing of the tests before it leaks into it: the
stall patterns restart from the test's own seed at every configure
(tb_pattern.v's ``reseed``), and every TB class prepares a run in one order
(tb.lib.harness.EndpointBank.begin: configure, then reset, then load). For
each TB class, a bench's full run and a run of one of its later tests alone,
with the same run seed, must record the same cycles, checks, verdict and
seed for that test (the per-test seed is derived from the run seed and the
test's name, tb.lib.verdict.derive_seed). A second seed must change the run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tb.run.benches import get_bench
from tb.lib.verdict import STATS_FILE
from tb.run.runner import BUILD_ROOT, list_tests, run_bench

# (TB class, bench, test): a test well inside its bench, under seeded stalls, so what runs before it matters
CASES = [
    ("NocTB", "router", "test_traffic/pattern=hotspot/stalls=bursts"),
    ("MagTB", "mag", "test_quant_reads/stalls=hostile"),
    ("OrchTB", "orch", "test_stage_and_dispatch"),
    ("SystemTB", "mm_mesh_sys", "test_fp16_saturation"),
]
SEED = 20261201


def _records(root: Path, bench: str, test_filter: str | None, seed: int) -> dict[str, dict]:
    result = run_bench(get_bench(bench), seed=seed, test_filter=test_filter, build_root=root, log_to_file=True)
    assert not result.error, f"{bench}: {result.error}"
    out = {}
    for line in (root / bench / STATS_FILE).read_text().splitlines():
        rec = json.loads(line)
        out[rec["test"]] = {k: rec[k] for k in ("cycles", "checks", "verdict", "seed")}
    return out


def _full_name(bench: str, short: str) -> str:
    names = [n for n in list_tests(get_bench(bench)) if n.endswith("." + short) or n.endswith(short)]
    assert len(names) == 1, f"{bench}: {short} names {names}"
    return names[0]


@pytest.mark.parametrize("tb_class, bench, test", CASES, ids=[c[0] for c in CASES])
def test_alone_equals_inside_the_full_run(tb_class: str, bench: str, test: str) -> None:
    full_name = _full_name(bench, test)
    assert list_tests(get_bench(bench)).index(full_name) > 0, "pick a test that does not run first"
    root = BUILD_ROOT / "pytest-replay" / bench
    everything = _records(root / "full", bench, None, SEED)
    alone = _records(root / "alone", bench, re.escape(full_name) + "$", SEED)
    key = next(k for k in everything if k.endswith(test))
    assert list(alone) == [key], f"the filtered run ran {list(alone)}"
    assert alone[key] == everything[key], (f"{tb_class}: {key} alone {alone[key]} inside the full run "
                                           f"{everything[key]}")
    other = _records(root / "other", bench, re.escape(full_name) + "$", SEED + 1)
    assert other[key]["seed"] != alone[key]["seed"], "the run seed does not change the test's seed"
