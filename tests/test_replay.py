"""A run replays from its seed: same seed, same stimulus, same cycle counts.

Runs one hostile mesh test twice with one seed and once with another, in
separate build folders, and compares what each verdict recorded.
"""

from __future__ import annotations

import json

from tb.benches import get_bench
from tb.runner import BUILD_ROOT, run_bench
from tb.lib.verdict import STATS_FILE

FILTER = "test_traffic/pattern=uniform/hostile=True"


def _run(tag: str, seed: int) -> dict:
    root = BUILD_ROOT / "pytest-replay" / tag
    result = run_bench(get_bench("mesh_2x2"), seed=seed, test_filter=FILTER, build_root=root, log_to_file=True)
    assert not result.error and len(result.tests) == 1 and result.tests[0].passed, result
    rec = json.loads((root / "mesh_2x2" / STATS_FILE).read_text().splitlines()[-1])
    return {k: rec[k] for k in ("cycles", "checks", "seed")}


def test_same_seed_same_run_other_seed_other_run() -> None:
    a = _run("a", 1234)
    b = _run("b", 1234)
    c = _run("c", 4321)
    assert a == b, f"same seed, different runs: {a} vs {b}"
    assert (c["seed"], c["cycles"]) != (a["seed"], a["cycles"]), "the seed does not change the run"
