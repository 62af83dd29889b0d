"""The functional half of the replay: what the core produced against what upstream's RTL produced.

Compared for every record, and always enforced (a functional mismatch fails
the bench whatever the timing): the completions in order (code, and arg except
a RUN's INST_COMPLETE, whose arg is its cycle count: the timing half), each
addressed to the host with the CU_INST's txn; the FAULT count; the DRAM lines
of `drain` and every other line the core changed; the CU_DATA flits of node
drains; and the bench's own health (no harness protocol error, no core
monitor error, every RUN seen by the probe, the probe's count equal to the
wire's where the wire carries it).
"""

from __future__ import annotations

from typing import Callable

from models.noc.flit import describe_flit
from tb.vector.vec_timing.observed import HARNESS_ERRORS, Observed
from tb.vector.vec_timing.records import HOST, SIG_FAULT, SIG_INST_COMPLETE, Record

SHOWN = 4  # differing items named per comparison before a count of the rest


def _txn(flit: int) -> int:
    return (flit >> 260) & 0xFF


def compare(rec: Record, obs: Observed) -> tuple[int, list[str]]:
    """(checks made, errors): one line per mismatch, naming the record, the item and both values."""
    checks = 0
    errors: list[str] = []

    def check(ok: bool, what: str) -> None:
        nonlocal checks
        checks += 1
        if not ok:
            errors.append(f"{rec.id}: {what}")

    for bit, text in HARNESS_ERRORS.items():
        check(not (obs.harness_err >> bit) & 1, f"harness error bit {bit}: {text}")
    check(obs.core_err == 0, "the core's assertion monitors reported an error (mon_err; its ERROR line is in the log)")
    _compare_completions(rec, obs, check)
    _compare_runs(rec, obs, check)
    _compare_dram(rec, obs, check)
    _compare_cu_data(rec, obs, check)
    return checks, errors


def _pairs(check, label: str, n: int, equal: Callable[[int], bool], text: Callable[[int], str]) -> None:
    """One check per compared item k < n; the first SHOWN mismatches named, then their count."""
    bad = 0
    for k in range(n):
        ok = equal(k)
        bad += not ok
        check(ok or bad > SHOWN, text(k))
    if bad > SHOWN:
        check(False, f"... {bad} {label} differ in all")


def _compare_completions(rec: Record, obs: Observed, check) -> None:
    want, got = rec.result.sigs, obs.sigs
    check(len(got) == len(want), f"{len(got)} CU_SIGNALs, upstream {len(want)} (one per CU_INST)")
    runs = set(rec.run_flits())
    n = min(len(want), len(got))

    def same(i: int) -> bool:
        w, g = want[i], got[i]
        timed = i in runs and w.code == g.code == SIG_INST_COMPLETE  # its arg is the RUN's count: timing
        return g.code == w.code and (timed or g.arg == w.arg)

    _pairs(check, "completions", n, same, lambda i: f"completion {i}: code {got[i].code:#04x} arg {got[i].arg:#x}, "
                                                    f"upstream code {want[i].code:#04x} arg {want[i].arg:#x}")
    _pairs(check, "completion addresses", n, lambda i: got[i].dst == HOST and got[i].txn == _txn(rec.cu_inst[i]),
           lambda i: f"completion {i} went to {got[i].dst} with txn {got[i].txn:#04x}; the CU_INST came from "
                     f"{HOST} with txn {_txn(rec.cu_inst[i]):#04x}")
    faults = sum(1 for g in got if g.code == SIG_FAULT)
    check(faults == rec.result.faults, f"{faults} FAULT completions, upstream {rec.result.faults}")


def _compare_runs(rec: Record, obs: Observed, check) -> None:
    idx = rec.run_flits()
    check(len(obs.runs) == len(idx), f"the probe saw {len(obs.runs)} RUNs start, the record sends {len(idx)}")
    check(obs.stray_trace == 0, f"the probe saw {obs.stray_trace} executed words outside a RUN")
    for k, (i, run) in enumerate(zip(idx, obs.runs)):
        check(run.end is not None, f"RUN {k} (pc {rec.runs[k]}) never ended")
        if i < len(obs.sigs) and obs.sigs[i].code == SIG_INST_COMPLETE:
            wire = obs.sigs[i].arg
            check(run.result == wire and not run.fault,
                  f"RUN {k}: the probe read count {run.result} (fault {int(run.fault)}), the wire carried {wire}")


def _compare_dram(rec: Record, obs: Observed, check) -> None:
    want, got = rec.result.dram_drained, obs.drained
    check(len(got) == len(want), f"{len(got)} drained lines read back, the record drains {len(want)}")
    _pairs(check, "drained lines", min(len(want), len(got)), lambda k: want[k] == got[k],
           lambda k: f"DRAM line {rec.drain_line0 + k}: {got[k]:064x}, upstream {want[k]:064x}")
    # every other line the core left different from the initial image (upstream: result.dram_other)
    init = {rec.dram_line0 + k: v for k, v in enumerate(rec.dram_lines)}
    final: dict[int, int] = {}
    for line, data in obs.writes:
        final[line] = data
    drain = range(rec.drain_line0, rec.drain_line0 + rec.drain_n)
    other = {line: v for line, v in final.items() if line not in drain and v != init.get(line, 0)}
    check(other == dict(rec.result.dram_other),
          f"DRAM lines outside the drain changed: {_lines(other)}; upstream: {_lines(rec.result.dram_other)}")


def _lines(lines) -> str:
    if not lines:
        return "none"
    shown = ", ".join(f"{line} = {v:064x}" for line, v in sorted(lines.items())[:SHOWN])
    return shown + (f" ... ({len(lines)} lines)" if len(lines) > SHOWN else "")


def _compare_cu_data(rec: Record, obs: Observed, check) -> None:
    want, got = rec.result.cu_data_out, obs.cu_data_out
    check(len(got) == len(want), f"{len(got)} CU_DATA flits sent to other nodes, upstream {len(want)}")
    _pairs(check, "CU_DATA flits", min(len(want), len(got)), lambda k: want[k] == got[k],
           lambda k: f"CU_DATA flit {k}: {describe_flit(got[k])}; upstream {describe_flit(want[k])}")


__all__ = ["compare"]
