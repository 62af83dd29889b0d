"""An RTL syntax error ends the bench with the compiler's own lines and the build log's path, not a bare
"return code 2" and "no test ran" (a real iverilog build of the fifo bench with one broken source)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from tb.run.benches import ROOT, get_bench
from tb.run.summary import describe_failures
from tb.run.runner import run_bench


def test_a_syntax_error_is_shown_with_its_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "noc_fifo.v"
    broken.write_text((ROOT / "rtl/noc/noc_fifo.v").read_text().replace("endmodule", "endmodul", 1))
    bench = get_bench("fifo")
    bench = dataclasses.replace(bench, sources=tuple(str(broken) if s == "rtl/noc/noc_fifo.v" else s
                                                     for s in bench.sources))
    result = run_bench(bench, build_root=tmp_path / "build", log_to_file=True)
    log = tmp_path / "build" / "fifo" / "build.log"
    assert result.error.startswith("build failed:") and str(log) in result.error and not result.tests
    assert result.build_errors and result.build_errors[0].startswith(f"{broken}:")
    lines = describe_failures(result)
    assert lines[0].startswith("FAILED fifo: build failed:") and lines[1] == f"    | {result.build_errors[0]}"
