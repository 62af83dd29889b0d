"""Only cocotb's public API: no `cocotb._*` module and no `_manager_inst` anywhere in the framework, so the
next cocotb release cannot silently break how verdicts are joined to results; and `make tests` lists a
bench's test names as COCOTB_TEST_FILTER matches them."""

from __future__ import annotations

import re
from pathlib import Path

from tb.run import regress
from tb.run.benches import ROOT, get_bench

PRIVATE = re.compile(r"\bcocotb\._\w+|\b_manager_inst\b|from cocotb import _\w+")


def test_no_private_cocotb_api() -> None:
    offenders = []
    for folder in ("tb", "models", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            for i, line in enumerate(path.read_text().splitlines(), 1):
                if PRIVATE.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_list_tests_prints_filterable_names(capsys) -> None:
    regress.print_tests([get_bench("orch")])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "orch: 10 test(s)" and "  test_credit_seed_512" in out
    assert out[-1] == "run one: make SIM=icarus BENCH=orch COCOTB_TEST_FILTER='test_registers$'"
    assert regress.main(["--list-tests", "--bench", "fifo", "--results", "/dev/null"]) == 0
