"""Run one damaged copy of a bundle through ``python -m tb.client run --models`` and judge what it did.

Why: what matters of a damaged input is what the user sees: a refusal in one
line naming the file (exit 2), a failed verdict (exit 1: FAIL or NOT
JUDGED), or a pass, and never a traceback, a hang or output a terminal
cannot show on one line. The command runs in this process (hundreds of cases
in seconds), under an interval timer that turns a hang into an outcome
instead of a stuck suite; a permission case run as root, whom no mode bit
stops, runs in a child process without the capabilities that let root pass
them.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import signal
import subprocess
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from models.bundle import lane_bound
from models.bundle.judge import NOT_JUDGED
from tb.fuzz.damage import FILES, HARMLESS, NOT_PASS, REFUSE, Damage

ROOT = Path(__file__).resolve().parents[2]
HANG_S = 120.0  # a case's backstop: the models' own watchdog ends a runaway program long before
DAC_CAPS = "-dac_override,-dac_read_search"  # what lets root read past mode bits


class Hang(Exception):
    """The interval timer fired: the case ran past its backstop."""


@dataclass(frozen=True)
class Outcome:
    """What the command did with one damaged copy, and whether that is a defect."""

    bundle: str
    damage: Damage
    kind: str  # refused, failed, not judged, passed, traceback, hang
    text: str  # the refusal line, the first failure or the traceback's last line
    defect: str = ""  # empty: the outcome is the one its damage allows

    def to_row(self) -> str:
        mark = f"DEFECT ({self.defect})" if self.defect else "ok"
        return f"{self.bundle} | {self.damage.family} | {self.damage.name} | {self.kind} | {mark} | {self.text}"


def make_copy(src: Path, damage: Damage, where: Path) -> Path:
    """A copy of bundle folder `src` under `where`, named as the damage says, with the damage applied."""
    folder = where / (damage.folder_name or src.name)
    shutil.copytree(src, folder, symlinks=True)
    damage.edit(folder)
    return folder


def _alarm(signum: int, frame: FrameType | None) -> None:
    raise Hang()


def run_here(folder: Path, build: Path, hang_s: float = HANG_S) -> tuple[str, int | None, str, str]:
    """tb.client's ``run --models`` of `folder` in this process: (how it ended, exit status, stdout, stderr)."""
    from tb.client import main

    out, err = io.StringIO(), io.StringIO()
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, hang_s)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["run", str(folder), "--models", "--build", str(build)])
        return "exit", code, out.getvalue(), err.getvalue()
    except Hang:
        return "hang", None, out.getvalue(), err.getvalue()
    except BaseException:  # noqa: BLE001 - whatever escapes the command is the defect being looked for
        return "traceback", None, out.getvalue(), err.getvalue() + traceback.format_exc()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        lane_bound.forget_all()


def run_unprivileged(folder: Path, build: Path, hang_s: float = HANG_S) -> tuple[str, int | None, str, str]:
    """The same command in a child process that mode bits stop: this process is root, so the child runs
    without the capabilities that let root read past them (setpriv's bounding set, util-linux)."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return "not run", None, "", "setpriv (util-linux) missing: a permission case needs it when run as root"
    cmd = [setpriv, f"--bounding-set={DAC_CAPS}", sys.executable, "-m", "tb.client", "run", str(folder), "--models",
           "--build", str(build)]
    try:
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, timeout=hang_s)
    except subprocess.TimeoutExpired as exc:
        return "hang", None, str(exc.stdout or ""), str(exc.stderr or "")
    if "Traceback (most recent call last)" in proc.stderr:
        return "traceback", proc.returncode, proc.stdout, proc.stderr
    return "exit", proc.returncode, proc.stdout, proc.stderr


def classify(bundle: str, damage: Damage, folder: Path, ended: str, code: int | None, out: str,
             err: str) -> Outcome:
    """The outcome's kind and, against what `damage` allows, its defect (empty when none)."""
    lines = [ln for ln in err.splitlines() if ln]
    if ended == "not run":
        return Outcome(bundle, damage, ended, err, "a case that could not be run here")
    if ended != "exit":
        return Outcome(bundle, damage, ended, (lines or ["(no output)"])[-1], f"a {ended}")
    if code == 2:
        kind, text = "refused", " | ".join(lines)
    elif code == 1:
        kind = "not judged" if NOT_JUDGED in out else "failed"
        text = next((ln.strip() for ln in out.splitlines() if "FAILED:" in ln), "(no failure line)")
    else:
        kind, text = "passed", ""
    return Outcome(bundle, damage, kind, text, _defect(damage, folder, kind, lines, out + err))


def _defect(damage: Damage, folder: Path, kind: str, err_lines: list[str], text: str) -> str:
    if kind == "refused":
        if len(err_lines) != 1 or not err_lines[0].startswith("refused: "):
            return "a refusal not on one line"
        if not any(f in err_lines[0] for f in FILES) and "folder" not in err_lines[0]:
            return "a refusal naming no file"
    if any(not ch.isprintable() or 0xD800 <= ord(ch) <= 0xDFFF for ln in text.splitlines() for ch in ln):
        return "output a terminal cannot show"
    if damage.folder_name and any(ln.startswith("second line") for ln in text.splitlines()):
        return "a folder's name split a line"
    if damage.expect == REFUSE and kind != "refused":
        return f"expected a refusal, got {kind}"
    if damage.expect == NOT_PASS and kind == "passed":
        return "a silent pass on a change of meaning"
    if damage.expect == HARMLESS and kind != "passed":
        return f"a documented-harmless change {kind}"
    return ""


def run_case(src: Path, damage: Damage, where: Path, hang_s: float = HANG_S) -> Outcome:
    """Copy, damage, run, classify; the copy is removed afterwards (modes restored so it can be)."""
    where.mkdir(parents=True, exist_ok=True)
    folder = make_copy(src, damage, where)
    try:
        unprivileged = damage.needs_user and os.geteuid() == 0
        ended, code, out, err = (run_unprivileged if unprivileged else run_here)(folder, where / "build", hang_s)
        return classify(src.name, damage, folder, ended, code, out, err)
    finally:
        _remove(where)


def _remove(where: Path) -> None:
    for dirpath, dirnames, filenames in os.walk(where):
        for name in dirnames + filenames:
            p = os.path.join(dirpath, name)
            if not os.path.islink(p):
                with contextlib.suppress(OSError):
                    os.chmod(p, 0o700)
    with contextlib.suppress(OSError):
        os.chmod(where, 0o700)
    shutil.rmtree(where, ignore_errors=True)


__all__ = ["HANG_S", "Hang", "Outcome", "classify", "make_copy", "run_unprivileged", "run_case", "run_here"]
