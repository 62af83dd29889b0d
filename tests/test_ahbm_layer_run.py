"""A whole layer's decode attention, small (64 tokens, every head), run as the user runs it
(``python -m tb.ahbm.layer``): 8 CUBE launches on Icarus, each a task on a local Dask cluster of 2 workers,
every query head's O scored, merged into one layer report (tb/ahbm/layer.py, docs/ahbm.md "A whole layer")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from models.ahbm.layer import H_Q, layer_mapping
from tb.ahbm import layer


def test_a_small_layer_runs_every_head_on_its_cube(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status = layer.main(["--context", "64", "--sim", "icarus", "--jobs", "2", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert status == 0, out
    rec = json.loads((tmp_path / "layer_s64_b1_w256.json").read_text())
    assert rec["whole_layer"] and rec["workers"] == "a local Dask cluster of 2 worker(s)"
    cubes = rec["cubes"]
    assert [c["cube"]["query_heads"] for c in cubes] == [list(a.query_heads) for a in layer_mapping()]
    assert all(c["passed"] and c["checks"] > 0 for c in cubes)
    assert len({c["seed"] for c in cubes}) == 8, "each KV head its own operands"
    launches = {c["metrics"]["launch"] for c in cubes}
    assert len(launches) == 1, "the same shapes on every CUBE take the same cycles (timing is data-independent)"
    assert all(c["metrics"]["pushes"] == 7 for c in cubes), "N = 8 PEs: 7 (m,l,O) partials up the tree"
    assert f"O checked: {H_Q} of {H_Q} query heads x 1 request(s)" in out
    assert f"layer attention latency: {launches.pop():,} cycles" in out
    # the work the cost model charges, as the PEs counted it: 64 tokens over 8 PEs, 8 rows a key
    assert all(c["metrics"]["scores"] == 64 * 8 for c in cubes), "cnt_score: every key scored for each of 8 rows"
    assert all(c["metrics"]["merges"] == 7 and c["metrics"]["stores"] == 1 for c in cubes)
    assert "what a token costs (priced in an HBM3 cube, PE clock 1.60 GHz" in out
