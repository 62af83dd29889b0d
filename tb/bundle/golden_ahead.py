"""A bundle's golden results (models/bundle/golden.py) computed in a process beside the simulator.

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

The child never outlives the run, whatever way the run ends: it watches its
stdin, a pipe only this process holds open, and exits as soon as it reads its
end (``--watch-stdin``, models/bundle/golden.py), which the kernel delivers
when this process dies for any reason, SIGKILL included; and every way out of
a bundle test (pass, failure, watchdog, exception) calls :meth:`GoldenAhead.close`,
which kills a child still running (tb/bundle/test_clients.py). A Ctrl-C reaches
it with the rest of the simulator's process group.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

from models.bundle.reader import Bundle
from models.bundle.golden import Golden
from tb.run.benches import ROOT
from tb.run.content_hash import files_digest


def golden_key(b: Bundle, machine: str) -> str:
    """A hash of everything the golden result depends on (see the module doc)."""
    import numpy

    from models.machine.unit_timing import TIMING_ENV

    files = [p for p in Path(b.path).rglob("*") if p.is_file()] + list((ROOT / "models").rglob("*.py"))
    # the timed models' rounds depend on the machine's timing overrides (the child reads them from TIMING_ENV)
    return files_digest(files, machine, f"numpy {numpy.__version__}", os.environ.get(TIMING_ENV, ""))[:20]


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
            self.proc = subprocess.Popen([python, "-m", "models.bundle.golden", "--watch-stdin", str(b.path), machine,
                                          str(self.out)], cwd=ROOT, stdin=subprocess.PIPE,
                                         stdout=subprocess.DEVNULL, stderr=err)

    def result(self) -> Golden:
        """The child's result (waits for it); RuntimeError naming the bundle and the child's error otherwise."""
        rc = self.proc.wait() if self.proc is not None else 0
        self.close()
        if rc != 0 or not self.out.exists():
            tail = self.err.read_text(errors="replace").strip().splitlines()[-5:]
            raise RuntimeError(f"the golden run of {self.name} (python -m models.bundle.golden) exited with status "
                               f"{rc}: {' | '.join(tail) or 'no message'}")
        golden = pickle.loads(self.out.read_bytes())
        assert isinstance(golden, Golden), f"{self.out} holds a {type(golden).__name__}, not a Golden"
        return golden

    def finished(self, wait_s: float = 0.0) -> Golden | None:
        """The result if the child ends with one within `wait_s` seconds: what the models said about a run the
        RTL could not finish; None while it still computes after that, or when it left none."""
        if self.proc is not None:
            try:
                self.proc.wait(timeout=wait_s)
            except subprocess.TimeoutExpired:
                return None
        try:
            return self.result()
        except RuntimeError:
            return None

    def close(self) -> None:
        """Kill the child if it still runs, reap it and close its pipe (every exit path of a run calls this)."""
        if self.proc is None:
            return
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdin is not None:
            self.proc.stdin.close()


__all__ = ["GoldenAhead"]
