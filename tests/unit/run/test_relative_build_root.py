"""A bench run given a build folder relative to the caller's folder (tb.client --build, make sweep OUT=) builds
and runs: the runner makes it absolute before the simulator, which runs in other folders, sees it (a relative
one made Verilator's build fail with "No such file or directory")."""

from __future__ import annotations

import os
from pathlib import Path

from tb.run.benches import get_bench
from tb.run.runner import run_bench


def test_a_relative_build_root_is_made_absolute(tmp_path: Path) -> None:
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        result = run_bench(get_bench("fifo"), sim="icarus", seed=1, build_root=Path("rel"), log_to_file=True)
    finally:
        os.chdir(here)
    assert not result.error and result.tests and all(t.passed for t in result.tests), result.error
    assert result.build_log is not None and result.build_log.is_absolute()
    assert result.build_log.parent == (tmp_path / "rel" / "fifo")
