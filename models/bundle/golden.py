"""The golden side of judging a bundle on the RTL, computed apart from the simulator.

Judging an RTL run of a compiled bundle needs two things that depend on the
bundle only, never on the run: the bundle on the machine model
(models.machine.event_model.run_bundle, the bit-exact judge) and its derived float64
error bound (models.bundle.lane_bound); both come from one run of the plan on
the shadowed machine where the analysis can follow it (:func:`judged_run`). For flash_attention_l64d64 they take
several seconds of pure Python; done inside the simulator's process they add to
its wall time. `python -m models.bundle.golden BUNDLE MACHINE OUT` computes
both in a process of its own and pickles a :class:`Golden` to OUT, so a bench
starts it before the RTL run and reads it after (tb/bundle/golden_ahead.py): on a
machine with a free core the simulator never waits for it.

A refusal or an error of the models is part of the result (its text), not a
crash: the bench reports it as the failure it would have been in-process.
With ``--watch-stdin`` the process exits as soon as its stdin reaches its end:
the bench holds the other end of that pipe, so the child dies with it however
the bench ends (SIGKILL included), never orphaned at full CPU.
"""

from __future__ import annotations

import argparse
import os
import pickle
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

from models.bundle.bound.machine import DerivedBound, derive_with_run
from models.bundle.bound.rules import BoundError
from models.bundle.reader import Bundle
from models.bundle.round_timing import RoundTiming
from models.bundle.lane_bound import derived_bound, remember
from models.machine.event_model import ModelRefused, ModelRun, model_refusal, run_bundle
from models.machine.layouts import Machine, get_machine


@dataclass
class Golden:
    """The bundle on the machine model (or why not) and its derived bound (or why not)."""

    model: ModelRun | None
    model_error: str
    bound: DerivedBound | BoundError
    # the timed golden models' rounds (models/timed), the RTL's second clock; or why there are none
    timed: list[RoundTiming] | None = None
    timed_error: str = ""


def judged_run(b: Bundle, m: Machine) -> Golden:
    """Both golden results of `b` on `m` from ONE run of the plan where the analysis can follow it (the
    shadowed machine, models/bundle/bound/machine.py, is the golden machine model bit for bit); where it
    cannot (an operation without a rule: BoundError), or the shadowed run failed, the plain golden run
    gives the model's result and the bound says why there is none. The bound is remembered for this
    process (models/bundle/lane_bound.py)."""
    if model_refusal(b, machine=m) is None:
        try:
            bound, model = derive_with_run(b)
            remember(b, bound)
            return Golden(model, "", bound)
        except BoundError as exc:
            remember(b, exc)
        except (ModelRefused, AssertionError, ValueError):
            pass  # the plain run below names what failed, as it always did
    try:
        model, error = run_bundle(b, m), ""
    except (ModelRefused, AssertionError, ValueError) as exc:  # MagUnit's request errors are ValueErrors
        model, error = None, f"{type(exc).__name__}: {exc}"
    try:
        bound: DerivedBound | BoundError = derived_bound(b)
    except BoundError as exc:
        bound = exc
    return Golden(model, error, bound)


def compute(bundle_dir: str | Path, machine: str, timing: Mapping[str, int] | None = None) -> Golden:
    """Both golden results of one bundle on the named machine, and its rounds on the timed golden models with
    `timing`'s overrides (the RTL machine's own)."""
    b, m = Bundle(str(bundle_dir)), get_machine(machine)  # an unknown machine is an error
    golden = judged_run(b, m)
    if golden.model is not None:
        from models.timed.run import run_timed

        try:
            run = run_timed(b, m, timing)
            golden.timed = [r.timing for r in run.result.rounds if r.timing is not None]
        except Exception as exc:  # the second clock's own failure, named where the RTL run reports it
            golden.timed_error = f"{type(exc).__name__}: {exc}"
    return golden


EXIT_PARENT_GONE = 3  # the status of a child whose parent closed its stdin (or died) before it finished


def exit_when_stdin_ends() -> None:
    """Exit (status EXIT_PARENT_GONE, at once, from a watcher thread) when stdin reaches its end: the parent
    closed the pipe or died. The computation in the main thread is not waited for."""
    def watch() -> None:
        while os.read(0, 4096):  # the raw descriptor: sys.stdin's buffer lock would stall interpreter shutdown
            pass
        os._exit(EXIT_PARENT_GONE)
    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m models.bundle.golden", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bundle", help="the bundle's folder")
    ap.add_argument("machine", help="the machine's name (models/machine/layouts.py)")
    ap.add_argument("out", help="the pickle file to write")
    ap.add_argument("--watch-stdin", action="store_true", help="exit when stdin ends (the parent's pipe closed)")
    args = ap.parse_args(argv)
    if args.watch_stdin:
        exit_when_stdin_ends()
    from models.bundle import golden as bundle_golden  # run as __main__: pickle the importable module's class, not __main__'s

    from models.machine.unit_timing import TIMING_ENV, from_canonical

    golden = bundle_golden.compute(args.bundle, args.machine, from_canonical(os.environ.get(TIMING_ENV, "")))
    tmp = Path(args.out + ".part")
    tmp.write_bytes(pickle.dumps(golden))
    tmp.replace(args.out)  # whole or absent: a reader never sees half a file
    return 0


if __name__ == "__main__":
    sys.exit(main())


__all__ = ["EXIT_PARENT_GONE", "Golden", "compute", "exit_when_stdin_ends", "judged_run", "main"]
