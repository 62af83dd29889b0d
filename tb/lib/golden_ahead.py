"""A bundle's golden results (models/bundle_golden.py) computed in a process beside the simulator.

A bundle test starts :class:`GoldenAhead` before its RTL run and calls
:meth:`GoldenAhead.result` when it judges: the machine model and the derived
bound then run on another core while the simulator runs, instead of inside the
simulator's process (measured on flash_attention_l64d64: 6 s of Python that no
longer adds to the test's wall). The child is the same Python as cocotb's
(PYGPI_PYTHON_BIN), so the same models answer. A child that fails is a named
error carrying the end of its stderr, never a silent absence of the judge.

The result is kept in the work folder under a key hashed from everything it
depends on (the bundle folder's files, every source file of models/, the
machine's name, numpy's version): a later run of the same bundle with the same
models reads it instead of starting the child, as a build is reused when its
sources are unchanged. Any change to one of them is a new key.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import subprocess
import sys
from pathlib import Path

from models.bundle import Bundle
from models.bundle_golden import Golden

ROOT = Path(__file__).resolve().parents[2]


def golden_key(b: Bundle, machine: str) -> str:
    """A hash of everything the golden result depends on (see the module doc)."""
    import numpy

    h = hashlib.sha256(f"{machine}\0numpy {numpy.__version__}\0".encode())
    files = sorted(p for p in Path(b.path).rglob("*") if p.is_file())
    files += sorted((ROOT / "models").rglob("*.py"))
    for p in files:
        h.update(str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p.name).encode() + b"\0")
        h.update(p.read_bytes())
    return h.hexdigest()[:20]


class GoldenAhead:
    """One bundle's golden computation running in a child process."""

    def __init__(self, b: Bundle, machine: str, workdir: Path) -> None:
        workdir.mkdir(parents=True, exist_ok=True)
        self.name = b.name
        self.out = workdir / f"golden_{b.name}_{golden_key(b, machine)}.pkl"
        self.err = workdir / f"golden_{b.name}.stderr"
        self.proc: subprocess.Popen[bytes] | None = None
        self.reused = self.out.exists()
        if self.reused:
            return
        python = os.environ.get("PYGPI_PYTHON_BIN") or sys.executable
        with open(self.err, "wb") as err:
            self.proc = subprocess.Popen([python, "-m", "models.bundle_golden", str(b.path), machine, str(self.out)],
                                         cwd=ROOT, stdout=subprocess.DEVNULL, stderr=err)

    def result(self) -> Golden:
        """The child's result (waits for it); RuntimeError naming the bundle and the child's error otherwise."""
        rc = self.proc.wait() if self.proc is not None else 0
        if rc != 0 or not self.out.exists():
            tail = self.err.read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"the golden run of {self.name} (python -m models.bundle_golden) exited with status "
                               f"{rc}: {' | '.join(tail) or 'no message'}")
        golden = pickle.loads(self.out.read_bytes())
        assert isinstance(golden, Golden), f"{self.out} holds a {type(golden).__name__}, not a Golden"
        return golden


__all__ = ["GoldenAhead"]
