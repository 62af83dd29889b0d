"""docs/getting-started.md, run as it is written: its files saved, its commands run from the project folder,
and the lines it shows under each command found, in order, in that command's output.

Why: a newcomer copies the page; if the tool's output or interface changes, this test fails until the page
is mended. The commands run in the project folder as the page says (the main job's sim_build/ and
its lock, like a user's); the files and folders the page creates (my_tb/, my_bundle/) are removed after.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "getting-started.md"
FENCE = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```$", re.M | re.S)
CREATED = ("my_tb", "my_bundle")


def blocks() -> list[tuple[str, str, str]]:
    """(kind, info, body) of every fenced block of the page, in order."""
    return [(m.group(1), m.group(2).strip(), m.group(3)) for m in FENCE.finditer(DOC.read_text())]


def commands(body: str) -> list[tuple[str, list[str]]]:
    """A console block's commands ("$ ...") and the output lines shown under each."""
    out: list[tuple[str, list[str]]] = []
    for line in body.splitlines():
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif line.strip():
            out[-1][1].append(line)
    return out


def missing_in_order(shown: list[str], output: str) -> str | None:
    """The first shown line not found (after the previous one) in `output`, compared without surrounding
    blanks; None when every line is there in order."""
    got = [line.strip() for line in output.splitlines()]
    at = 0
    for want in shown:
        try:
            at = next(i for i in range(at, len(got)) if got[i].endswith(want.strip())) + 1
        except StopIteration:
            return want
    return None


def test_the_order_check_fails_on_a_line_not_shown() -> None:
    assert missing_in_order(["a", "c"], "x a\nb\nc") is None
    assert missing_in_order(["c", "a"], "a\nb\nc") == "a"
    assert missing_in_order(["d"], "a\nb\nc") == "d"


def test_every_example_runs_as_written() -> None:
    found = blocks()
    assert sum(kind == "python" for kind, _, _ in found) == 2 and sum(kind == "console" for kind, _, _ in found) == 5
    for name in CREATED:
        assert not (ROOT / name).exists(), f"{name}/ is in the project folder already; move it away to run this test"
    try:
        for kind, info, body in found:
            if kind == "python":
                path = ROOT / info.removeprefix("file=")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(body)
                continue
            for command, shown in commands(body):
                proc = subprocess.run(["bash", "-c", command], cwd=ROOT, capture_output=True, text=True,
                                      timeout=1800)
                output = proc.stdout + proc.stderr
                assert proc.returncode == 0, f"{command}: exit {proc.returncode}\n{output[-3000:]}"
                absent = missing_in_order(shown, output)
                assert absent is None, f"{command}: the page shows {absent!r}, not in the output:\n{output[-3000:]}"
    finally:
        for name in CREATED:
            shutil.rmtree(ROOT / name, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(pytest.main([__file__]))
