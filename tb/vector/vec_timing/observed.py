"""What rtl/bench/vt_harness.v recorded for one record, parsed from its logs; and whether a record fits them.

The harness keeps fixed-size logs (parameters of the bench in tb/run/benches.py);
`refusal` says, before any simulation, which record would not fit and why.
The hex dump layouts below are the harness's (its header comment).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from tb.vector.vec_timing.records import CORE, HOST, SIG_INST_COMPLETE, Record

DRAM_LINES = 1 << 16  # the harness's DRAM: line = byte address bits [20:5]
L1_WORDS = 512
BURST_MAX = 256  # data flits of one CU_DATA burst (protocol.md §4)
HARNESS_ERRORS: Mapping[int, str] = {  # vt_harness err bits
    0: "an entry read (STREAM or QUANT) was requested; the bench answers plain reads only",
    1: "a memory flit was addressed elsewhere than the memory port (1,1)",
    2: "MEM_WR_DATA without an open write from its source, or MEM_WR_REQ while data was owed",
    3: "MEM_WR_REQ with len > 7",
    4: "the core sent a flit type the bench does not take",
    5: "a harness log or the read queue overflowed",
    6: "the watchdog: the record did not end within MAX_CYCLES",
}


@dataclass(frozen=True)
class Limits:
    """The harness's array sizes (the bench's parameters)."""

    flits: int
    sigs: int
    trace: int
    runs: int
    cu_data: int
    writes: int
    mem_log: int

    @classmethod
    def from_parameters(cls, p: Mapping[str, int]) -> "Limits":
        return cls(p["FLIT_DEPTH"], p["SIG_DEPTH"], p["TRACE_DEPTH"], p["RUN_DEPTH"], p["CUDO_DEPTH"],
                   p["WLOG_DEPTH"], p["MLOG_DEPTH"])


def refusal(rec: Record, lim: Limits) -> str | None:
    """None if the record fits the harness, else one line naming the value, the limit and the fix."""
    fix = "raise the parameter in tb/run/benches.py (bench vec_timing)"
    words = sum(len(t.words) for t in rec.result.trace)
    checks = (
        (len(rec.flits()), lim.flits, "flits", "FLIT_DEPTH"),
        (len(rec.cu_inst), lim.sigs, "completions", "SIG_DEPTH"),
        (words, lim.trace, "executed words", "TRACE_DEPTH"),
        (len(rec.runs), lim.runs, "RUNs", "RUN_DEPTH"),
        (len(rec.result.cu_data_out), lim.cu_data, "CU_DATA flits sent", "CUDO_DEPTH"),
        (rec.drain_n, lim.writes, "drained lines", "WLOG_DEPTH"),
    )
    for n, limit, what, param in checks:
        if n > limit:
            return f"record {rec.id}: {n} {what}, the harness holds {param}={limit}; {fix}"
    if len(rec.l1_words) > BURST_MAX or rec.l1_word0 + len(rec.l1_words) > L1_WORDS:
        return (f"record {rec.id}: L1 image of {len(rec.l1_words)} words from word {rec.l1_word0}: one CU_DATA burst "
                f"carries 1..{BURST_MAX} words within L1's {L1_WORDS}; the record is not of the corpus format")
    for what, first, n in (("dram_init", rec.dram_line0, len(rec.dram_lines)), ("drain", rec.drain_line0, rec.drain_n)):
        if first + n > DRAM_LINES:
            return f"record {rec.id}: {what} lines {first}..{first + n - 1} pass the harness's {DRAM_LINES} lines"
    for k, f in enumerate(rec.cu_inst):
        dst, src, ftype = ((f >> 284) & 0xF, (f >> 280) & 0xF), ((f >> 276) & 0xF, (f >> 272) & 0xF), (f >> 268) & 0xF
        if dst != CORE or src != HOST or ftype != 5:
            return (f"record {rec.id}: cu_inst[{k}] is type {ftype} from {src} to {dst}; the harness sends CU_INST "
                    f"(type 5) from {HOST} to the core at {CORE}")
    return None


@dataclass(frozen=True)
class Signal:
    """One CU_SIGNAL the core sent: the harness cycle it was seen, destination (x, y), txn, code, arg."""

    at: int
    dst: tuple[int, int]
    txn: int
    code: int
    arg: int


@dataclass(frozen=True)
class RunLog:
    """One RUN as the probe saw it: start and end cycle (end None: it never ended), fault flag, result
    (the cycle count, or the fault code)."""

    start: int
    end: int | None
    fault: bool
    result: int


@dataclass
class Observed:
    """Everything the harness recorded for one record."""

    sigs: list[Signal]
    runs: list[RunLog]
    trace: list[list[tuple[int, int]]]  # per RUN: (pc, cycles) of every executed word
    drained: list[int]  # DRAM lines drain.line0 .. + n - 1 at the end
    writes: list[tuple[int, int]]  # (line, data) of every DRAM write, in order
    cu_data_out: list[int]
    request_cycles: list[int]  # the harness cycle each read request was taken
    response_cycles: list[int]  # the harness cycle each response beat was presented
    harness_err: int = 0
    core_err: int = 0
    cycles: int = 0
    hazards: dict[str, int] = field(default_factory=dict)
    stray_trace: int = 0  # executed words seen outside any RUN (probe error)


def hex_values(lines: Sequence[str]) -> list[int]:
    """The values of a $writememh dump (comments and @address lines skipped)."""
    return [int(s, 16) for s in (ln.strip() for ln in lines) if s and not s.startswith(("//", "@"))]


def parse_signals(values: Sequence[int]) -> list[Signal]:
    """sig_log entries {cycle 32, dst {x,y} 8, txn 8, code 8, arg 32}."""
    return [Signal(v >> 56, ((v >> 52) & 0xF, (v >> 48) & 0xF), (v >> 40) & 0xFF, (v >> 32) & 0xFF, v & 0xFFFF_FFFF)
            for v in values]


def parse_runs(values: Sequence[int]) -> list[RunLog]:
    """run_log entries {start 32, end 32 (all ones: none), 7'b0, fault 1, result 32}."""
    out = []
    for v in values:
        end = (v >> 40) & 0xFFFF_FFFF
        out.append(RunLog(v >> 72, None if end == 0xFFFF_FFFF else end, bool((v >> 32) & 1), v & 0xFFFF_FFFF))
    return out


def parse_trace(values: Sequence[int], n_runs: int) -> tuple[list[list[tuple[int, int]]], int]:
    """trace entries {RUN number (1-based) 8, 7'b0, pc 9, cycles 32} split per RUN; and the count of entries
    naming no RUN of the record (a probe fault)."""
    per_run: list[list[tuple[int, int]]] = [[] for _ in range(n_runs)]
    stray = 0
    for v in values:
        run = (v >> 48) & 0xFF
        if 1 <= run <= n_runs:
            per_run[run - 1].append(((v >> 32) & 0x1FF, v & 0xFFFF_FFFF))
        else:
            stray += 1
    return per_run, stray


def parse_writes(values: Sequence[int]) -> list[tuple[int, int]]:
    """wlog entries {line 16, data 256}."""
    return [(v >> 256, v & ((1 << 256) - 1)) for v in values]


def our_counts(rec: Record, obs: Observed) -> list[int | None]:
    """Our cycle count per RUN of the record: the INST_COMPLETE arg where the wire carries it, else the count
    the probe read from the core at the RUN's end (u_exec.result); None for a RUN that faulted or never ended."""
    counts: list[int | None] = []
    for k, i in enumerate(rec.run_flits()):
        sig = obs.sigs[i] if i < len(obs.sigs) else None
        run = obs.runs[k] if k < len(obs.runs) else None
        if sig is not None and sig.code == SIG_INST_COMPLETE:
            counts.append(sig.arg)
        elif run is not None and run.end is not None and not run.fault:
            counts.append(run.result)
        else:
            counts.append(None)
    return counts


def response_schedule(takes: Sequence[int], first: int, interval: int) -> list[int]:
    """The cycle each read's (single-beat) response is presented, by upstream's bench rule (clients/vec_timing/
    README.md): answered in order; one taken into an empty queue is presented `first` cycles later (it enters
    the core at the end of that cycle); while requests are queued, one every `interval` cycles."""
    out: list[int] = []
    for k, take in enumerate(takes):
        out.append(out[-1] + interval if k and take <= out[-1] else take + first)
    return out


def rhythm_errors(obs: Observed, first: int, interval: int) -> list[str]:
    """Where the harness's responses left upstream's rhythm (first few), as error lines."""
    want = response_schedule(obs.request_cycles, first, interval)
    if len(obs.response_cycles) != len(want):
        return [f"{len(obs.response_cycles)} read responses presented for {len(want)} single-line requests"]
    return [f"read response {k} presented at cycle {got}, upstream's rhythm says {w} (request taken at "
            f"{obs.request_cycles[k]})" for k, (got, w) in enumerate(zip(obs.response_cycles, want)) if got != w][:4]


__all__ = ["DRAM_LINES", "HARNESS_ERRORS", "Limits", "Observed", "RunLog", "Signal", "hex_values", "our_counts",
           "parse_runs", "parse_signals", "parse_trace", "parse_writes", "refusal", "response_schedule",
           "rhythm_errors"]
