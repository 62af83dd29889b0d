"""What a token costs (models/ahbm/cost.py, tb/ahbm/cost.py): the counts priced as stated, worked by hand."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from models.ahbm import cost
from tb.ahbm import cost as cost_cli


def metrics(launch: int = 1_100, roof: int = 1_000) -> dict:
    """One CUBE's figures as tb/ahbm/layer.py records them: 8 PEs of 1 MiB each, 7 pushes of 4 KiB."""
    return {"launch": launch, "dma_roof": roof, "vs_dma": launch / roof, "dma_bytes": [2 ** 20] * 8,
            "ipcq_bytes": 7 * 4096, "pushes": 7, "scores": 8 * 4096, "composites": 64, "merges": 7, "stores": 1}


def record(context: int = 4_096, b: int = 1, whole: bool = True, slow: int = 1_100) -> dict:
    cubes = [{"cube": {"cube": k, "kv_head": k, "query_heads": list(range(8 * k, 8 * k + 8))}, "passed": True,
              "metrics": metrics(slow if k == 3 else 1_050)} for k in range(8)]
    return {"context": context, "b": b, "width": 256, "tile": 64, "n": 8, "d": 128, "g": 8, "elapsed_s": 12.5,
            "whole_layer": whole, "cubes": cubes}


def test_the_default_cube_is_an_hbm3_stack_shared_by_its_pes() -> None:
    tech = cost.hbm3_cube()
    assert tech.clock_hz.value == pytest.approx(1.6e9), "819.2 GB/s / 8 PEs / 64 B a cycle"
    assert tech.pe_bandwidth * 8 == pytest.approx(819.2e9)
    assert all(k.source and k.value > 0 for k in tech.constants()), "every constant has a value and a source"


def test_the_work_is_summed_over_the_cubes_and_the_latency_is_the_slowest() -> None:
    w = cost.work_from_record(record())
    assert (w.latency_cycles, w.roofline_cycles, w.cubes) == (1_100, 1_000, 8)
    assert w.bank_bytes == 8 * 8 * 2 ** 20 and w.ipcq_bytes == 8 * 7 * 4096
    assert (w.scores, w.composites, w.merges, w.stores) == (8 * 32_768, 8 * 64, 8 * 7, 8)
    # by hand: 2 x 128 a score element; 8 x 129 a composite; 2 x 8 x 129 a merge
    assert w.fmas == 2 * 128 * 262_144 + 512 * 8 * 129 + 56 * 2 * 8 * 129
    assert w.conversions == 64 * 2 ** 20 // 2 + 8 * 8 * 128
    assert w.exps == 262_144 + 512 * 8 + 2 * 56 * 8


def test_a_token_is_priced_as_stated() -> None:
    tech = cost.hbm3_cube()
    tech = replace(tech, bank_pj_per_bit=replace(tech.bank_pj_per_bit, value=2.0),
                   ipcq_pj_per_bit=replace(tech.ipcq_pj_per_bit, value=0.5))
    c = cost.token_cost(cost.work_from_record(record(b=2)), tech)
    w = c.work
    assert c.layer_s == pytest.approx(1_100 / 1.6e9)
    assert c.tokens_per_s == pytest.approx(2 / (80 * 1_100 / 1.6e9)), "B tokens a step of 80 layers"
    assert c.roofline_tokens_per_s == pytest.approx(2 / (80 * 1_000 / 1.6e9))
    kv = 8 * 2 * 2 * 4_096 * 128 * 2  # 8 KV heads, B = 2, K and V, bf16
    assert c.gpu_tokens_per_s == pytest.approx(2 / (80 * kv / 3.35e12))
    assert c.energy_pj["bank"] == pytest.approx(8 * w.bank_bytes * 2.0 * 40)  # 80 layers / 2 tokens
    assert c.energy_pj["ipcq"] == pytest.approx(8 * w.ipcq_bytes * 0.5 * 40)
    assert c.energy_pj["fma"] == pytest.approx(w.fmas * 4.6 * 40)
    assert c.energy_pj["conversion"] == pytest.approx(w.conversions * 0.1 * 40)
    assert c.pj_per_token == pytest.approx(sum(c.energy_pj.values()))
    assert list(c.shares) == ["bank", "fma", "ipcq", "conversion"] and sum(c.shares.values()) == pytest.approx(1)
    assert c.shares["fma"] == pytest.approx(c.energy_pj["fma"] / c.pj_per_token)


@pytest.mark.parametrize("bad,why", [({"whole_layer": False}, "not a whole layer"),
                                     ({"drop": "scores"}, "no scores")])
def test_a_record_that_cannot_be_priced_is_refused(bad: dict, why: str) -> None:
    rec = record(whole=bad.get("whole_layer", True))
    if "drop" in bad:
        for c in rec["cubes"]:
            del c["metrics"][bad["drop"]]
    with pytest.raises(ValueError, match=why):
        cost.work_from_record(rec)


def test_a_partial_layer_is_not_priced_as_a_token() -> None:
    w = replace(cost.work_from_record(record()), cubes=7)
    with pytest.raises(ValueError, match="whole layer's 8"):
        cost.token_cost(w, cost.hbm3_cube())


def test_a_run_at_another_dma_rate_is_not_priced_at_this_one() -> None:
    w = cost.work_from_record({**record(), "dma_bw": 32})
    with pytest.raises(ValueError, match="moved 32 B a cycle"):
        cost.token_cost(w, cost.hbm3_cube())
    assert cost.token_cost(w, cost.hbm3_cube(pe_bytes_per_cycle=32)).layer_s == pytest.approx(1_100 / 3.2e9)


def test_the_command_prints_the_table_and_draws_the_plot(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for ctx, b in ((4_096, 1), (8_192, 1), (4_096, 8)):
        (tmp_path / f"layer_s{ctx}_b{b}_w256.json").write_text(json.dumps(record(ctx, b)))
    png = tmp_path / "cost.png"
    assert cost_cli.main(["--records", str(tmp_path), "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    rows = [ln.split() for ln in out.splitlines() if ln.split() and ln.split()[0].isdigit()]
    assert [(int(r[0]), int(r[1])) for r in rows] == [(4_096, 1), (8_192, 1), (4_096, 8)]
    assert "JESD238" in out and "Horowitz" in out and "not charged: exponentials" in out
    assert png.stat().st_size > 10_000


def test_the_command_refuses_what_it_cannot_price(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    assert cost_cli.main(["--records", str(tmp_path)]) == 2
    assert "no layer records" in capsys.readouterr().err
    (tmp_path / "layer_s4096_b1_w256.json").write_text(json.dumps(record(whole=False)))
    assert cost_cli.main(["--records", str(tmp_path)]) == 2
    assert "layer_s4096_b1_w256.json" in capsys.readouterr().err
    assert cost_cli.main(["--records", str(tmp_path), "--clock-ghz", "0"]) == 2


def test_another_clock_scales_the_bandwidth_with_it(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    tech = cost.at_clock(cost.hbm3_cube(), 1.0e9)
    assert tech.pe_bandwidth == pytest.approx(64e9) and tech.cube_bytes_per_s.value == pytest.approx(512e9)
    c = cost.token_cost(cost.work_from_record(record()), tech)
    assert c.layer_s == pytest.approx(1_100 / 1.0e9)
    (tmp_path / "layer_s4096_b1_w256.json").write_text(json.dumps(record()))
    assert cost_cli.main(["--records", str(tmp_path), "--clock-ghz", "1"]) == 0
    assert "an HBM3 cube at 1 GHz (PE clock 1.00 GHz, 64.0 GB/s a PE)" in capsys.readouterr().out


def test_the_markdown_table_has_a_row_a_record(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    for ctx in (4_096, 8_192):
        (tmp_path / f"layer_s{ctx}_b1_w256.json").write_text(json.dumps(record(ctx)))
    assert cost_cli.main(["--records", str(tmp_path), "--markdown"]) == 0
    rows = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("| 4,096") or ln.startswith("| 8,192")]
    assert len(rows) == 2 and all(r.count("|") == 12 for r in rows)


def test_the_documented_table_is_the_kept_records_priced(capsys: pytest.CaptureFixture) -> None:
    """docs/ahbm.md's cost table is what `make cost RECORDS=docs/data/ahbm_layer MARKDOWN=1` prints: the
    six measured layer runs (32k-128k, B = 1 and 8), every one a whole layer that passed."""
    root = Path(__file__).resolve().parents[3]
    assert cost_cli.main(["--records", str(root / "docs" / "data" / "ahbm_layer"), "--markdown"]) == 0
    table = capsys.readouterr().out.strip()
    assert len(table.splitlines()) == 2 + 6
    assert table in (root / "docs" / "ahbm.md").read_text()
