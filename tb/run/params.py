"""A bench's parameters against its top module, before anything is simulated.

Why: Icarus only warns, deep in build.log, about a parameter the top does not
declare (``FIFO_DEPHT=8`` then runs with the default), and a value the RTL
cannot take (``FIFO_DEPTH=0``) used to surface as X values long after. Two
checks, both before the first test:

* names and types (:func:`check_names`): every parameter the bench sets is
  declared by its top module (read from the Verilog source) and is an integer;
* values (:func:`elaboration_check`): the built simulator runs for 1 ns with
  ``+agsim_elab_check`` (harness_clock.v stops it there), so every module's
  parameter guard (an ``initial`` ``$fatal`` naming the values and the rule)
  fires before cocotb starts; its FATAL line becomes the bench's error.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Mapping, Sequence

_MODULE = re.compile(r"^\s*module\s+(\w+)\s*#\s*\((.*?)\)\s*\(", re.S | re.M)
_PARAM = re.compile(r"\bparameter\s+(?:(?:integer|real|string)\s+|\[[^\]]*\]\s*)?(\w+)\s*=")
ELAB_TIMEOUT_S = 120


def declared_parameters(sources: Sequence[Path], module: str) -> list[str] | None:
    """The parameter names `module` declares in its #( ... ) header, or None if no source defines it."""
    for src in sources:
        text = Path(src).read_text(errors="replace")
        text = re.sub(r"//[^\n]*", "", text)
        for m in _MODULE.finditer(text):
            if m.group(1) == module:
                return _PARAM.findall(m.group(2))
        if re.search(rf"^\s*module\s+{module}\b", text, re.M):
            return []  # a module without a parameter list
    return None


def check_names(bench: str, top: str, parameters: Mapping[str, object], sources: Sequence[Path]) -> None:
    """Refuse (ValueError, one line) a parameter the top does not declare, or a value that is not an integer."""
    declared = declared_parameters(sources, top)
    if declared is None:
        raise ValueError(f"bench {bench}: no source defines its top module {top}; add its file to the bench's "
                         f"sources in tb/run/benches.py")
    for name, value in parameters.items():
        if name not in declared:
            near = ", ".join(declared) or "none"
            raise ValueError(f"bench {bench}: parameter {name}={value} is not a parameter of {top} (it declares "
                             f"{near}); fix the name in tb/run/benches.py")
        if isinstance(value, bool) or not isinstance(value, int):
            raise ValueError(f"bench {bench}: parameter {name}={value!r} is not an integer; give {top}.{name} an "
                             f"integer value in tb/run/benches.py")


def check_shape(bench: str, parameters: Mapping[str, object], shape: object | None) -> None:
    """Refuse NX / NY / EDGE_MASK parameters that disagree with the bench's endpoint geometry (the Python
    side would address ports the RTL does not have, or miss ports it has)."""
    if shape is None:
        return
    for name, attr in (("NX", "nx"), ("NY", "ny"), ("EDGE_MASK", "edge_mask")):
        if name in parameters and parameters[name] != getattr(shape, attr):
            raise ValueError(f"bench {bench}: parameter {name}={parameters[name]:#x} disagrees with the bench's "
                             f"shape ({attr}={getattr(shape, attr):#x}); set both alike in tb/run/benches.py")


def elaboration_check(bench: str, sim: str, built: Path, parameters: Mapping[str, object]) -> str | None:
    """Run the built simulator to 1 ns; the first FATAL line of a parameter guard (with the fix), or None."""
    from tb.run.simulators import elaboration_command, elaboration_env

    try:
        proc = subprocess.run(elaboration_command(sim, built), capture_output=True, text=True,
                              timeout=ELAB_TIMEOUT_S, cwd=built.parent, env=elaboration_env(sim))
    except subprocess.TimeoutExpired:
        return (f"bench {bench}: the elaboration check did not stop within {ELAB_TIMEOUT_S} s (does its top "
                f"instantiate harness_clock?)")
    out = proc.stdout + proc.stderr
    fatal = next((line.strip() for line in out.splitlines() if "FATAL" in line.upper()), None)
    if fatal is None and proc.returncode == 0:
        return None
    shown = ", ".join(f"{k}={v}" for k, v in parameters.items()) or "defaults"
    why = fatal or f"{sim} exited with {proc.returncode}: {out.strip().splitlines()[-1] if out.strip() else ''}"
    return f"bench {bench} ({shown}): parameter out of range: {why}; fix the value in tb/run/benches.py"


__all__ = ["check_names", "check_shape", "declared_parameters", "elaboration_check"]
