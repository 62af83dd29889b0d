"""A bundle's golden results (models/bundle_golden.py) computed in a process beside the simulator.

A bundle test starts :class:`GoldenAhead` before its RTL run and calls
:meth:`GoldenAhead.result` when it judges: the machine model and the derived
bound then run on another core while the simulator runs, instead of inside the
simulator's process (measured on flash_attention_l64d64: 6 s of Python that no
longer adds to the test's wall). The child is the same Python as cocotb's
(PYGPI_PYTHON_BIN), so the same models answer. A child that fails is a named
error carrying the end of its stderr, never a silent absence of the judge.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from models.bundle import Bundle
from models.bundle_golden import Golden

ROOT = Path(__file__).resolve().parents[2]


class GoldenAhead:
    """One bundle's golden computation running in a child process."""

    def __init__(self, b: Bundle, machine: str, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.name = b.name
        self.out = workdir / f"golden_{b.name}.pkl"
        self.out.unlink(missing_ok=True)
        self.err = workdir / f"golden_{b.name}.stderr"
        python = os.environ.get("PYGPI_PYTHON_BIN") or sys.executable
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([python, "-m", "models.bundle_golden", str(b.path), machine, str(self.out)],
                                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)

    def result(self) -> Golden:
        """The child's result (waits for it); RuntimeError naming the bundle and the child's error otherwise."""
        rc = self.proc.wait()
        if rc != 0 or not self.out.exists():
            tail = self.err.read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"the golden run of {self.name} (python -m models.bundle_golden) exited with status "
                               f"{rc}: {' | '.join(tail) or 'no message'}")
        golden = pickle.loads(self.out.read_bytes())
        assert isinstance(golden, Golden), f"{self.out} holds a {type(golden).__name__}, not a Golden"
        return golden


__all__ = ["GoldenAhead"]
