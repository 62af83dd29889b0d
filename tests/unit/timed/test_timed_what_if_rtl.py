"""The timed models under an override of each fact family against the RTL built with the same override
(Icarus): a bundle with a cluster round and a vector round, each round's machine cycles within 1 % (the
orchestrator's TX_DEPTH moves neither: its FIFO never fills on these programs).

The whole matrix (24 bundles, one override set per family, on Verilator) is measured in docs/machine.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from models.bundle.reader import BUNDLES

ROOT = Path(__file__).resolve().parents[3]
BUNDLE = BUNDLES / "linear_gelu_unfused_m32k64n32"  # an MG round (the matmul) and a VC round (the GELU)
SET = ["vector.FETCH=2", "cluster.CASCADE_LAT=27", "mag.QUANT_LAT=12", "dram.RD_LATENCY=3", "orch.TX_DEPTH=4"]
ROUND = re.compile(r"^\s+(\d+)\s+(MG|VC)\s+\d+\s+\d+\s+\d+\s+\S+\s+\d+\s+\d+/\d+\s+(\d+)/\d+\s", re.M)


def _rounds(facts: list[str], *args: str) -> dict[int, int]:
    done = subprocess.run([sys.executable, "-m", "tb.client", "run", str(BUNDLE), *args,
                           *[a for fact in facts for a in ("--timing", fact)]],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    found = {int(m.group(1)): int(m.group(3)) for m in ROUND.finditer(done.stdout)}
    assert len(found) == 2, done.stdout[-3000:]
    return found


@pytest.mark.parametrize("facts", [[f] for f in SET], ids=[f.split("=")[0] for f in SET])
def test_with_a_family_overridden_the_models_keep_the_rtls_clock(tmp_path: Path, facts: list[str]) -> None:
    rtl = _rounds(facts, "--build", str(tmp_path / "build"), "--sim", "icarus")
    models = _rounds(facts, "--build", str(tmp_path / "build"), "--models")
    for r in rtl:
        assert abs(models[r] / rtl[r] - 1) <= 0.01, (r, models[r], rtl[r])
