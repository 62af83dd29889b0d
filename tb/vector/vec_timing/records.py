"""The records of clients/vec_timing/ (micro.jsonl, random.jsonl) as typed, checked values.

Each line of a corpus file is one program run on upstream's vector core with
everything that run produced (clients/vec_timing/README.md, "Record format").
The loader reads only the fields the bench uses, checks each one's type and
width as it reads it, and refuses the first bad one in one line naming the
file, the line, the record and the field, with the fix: a corpus that does not
read cleanly is never half-replayed.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from models.cu.base import cu_data_descriptor
from models.noc.flit import FlitType, make_flit

ROOT = Path(__file__).resolve().parents[3]
CORPUS_DIR = ROOT / "clients" / "vec_timing"
SETS: tuple[str, ...] = ("micro", "random")
CORE = (3, 3)  # the core's coordinate in upstream's bench (README.md, "How the bench feeds a program")
HOST = (0, 0)  # the source of every flit the bench sent
SIG_INST_COMPLETE, SIG_BATCH_COMPLETE, SIG_FAULT = 0, 1, 4
INST_RUN = 3  # CU_INST payload opcode [255:252] of a RUN (units.md V.2)
FIX = "restore it from the corpus (clients/vec_timing/, byte for byte as received; README.md there)"


class CorpusError(ValueError):
    """A corpus file that is missing or does not read as the record format says (one line)."""


@dataclass(frozen=True)
class Completion:
    """One CU_SIGNAL completion upstream's bench saw: code, arg, and the bench cycle it was seen."""

    code: int
    arg: int
    at: int


@dataclass(frozen=True)
class RunTrace:
    """One RUN's execute trace: its start pc, the bench cycle it was accepted, and (pc, t) per executed word,
    t = the kernel count in the cycle the word was in the execute state."""

    pc: int
    at: int
    words: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Result:
    """What upstream's RTL produced for a record (README.md, `result.*`)."""

    sigs: tuple[Completion, ...]
    kernel_cycles: int
    total_cyc: int
    faults: int
    watchdog: bool
    dram_drained: tuple[int, ...]
    dram_other: Mapping[int, int]
    cu_data_out: tuple[int, ...]
    trace: tuple[RunTrace, ...]


@dataclass(frozen=True)
class Record:
    """One program of the corpus and its result."""

    id: str
    set: str
    label: str  # the micro group (case.group) or the random class
    vl: int
    l1_word0: int
    l1_words: tuple[int, ...]
    dram_line0: int
    dram_lines: tuple[int, ...]
    cu_inst: tuple[int, ...]
    imem: Mapping[int, int]  # pc -> program word, every IMEM word the record loads
    runs: tuple[int, ...]  # start pc of each RUN, in order
    drain_line0: int
    drain_n: int
    result: Result

    def flits(self) -> list[int]:
        """Every flit in the order upstream's bench sent it: the CU_DATA burst writing L1 (descriptor: buf 0,
        off = word0, len = n - 1, flags 0; then the n words, last on the final one), then `cu_inst`."""
        burst: list[int] = []
        if self.l1_words:
            n = len(self.l1_words)
            burst.append(cu_data_descriptor(CORE, HOST, 0, self.l1_word0, n))
            burst += [make_flit(CORE, HOST, FlitType.CU_DATA, 0, int(i == n - 1), w) for i, w in enumerate(self.l1_words)]
        return burst + list(self.cu_inst)

    def run_flits(self) -> list[int]:
        """Indices in `cu_inst` (and so in `result.sigs`) of the RUN flits."""
        return [i for i, f in enumerate(self.cu_inst) if (f >> 252) & 0xF == INST_RUN]

    def timed_runs(self) -> list[tuple[int, int]]:
        """(RUN number, upstream's cycle count) of every RUN whose count the record holds: a RUN that retired
        as INST_COMPLETE (arg = the count), and the last RUN, if it did not fault (`kernel_cycles`)."""
        out: list[tuple[int, int]] = []
        idx = self.run_flits()
        for k, i in enumerate(idx):
            sig = self.result.sigs[i]
            if sig.code == SIG_INST_COMPLETE:
                out.append((k, sig.arg))
            elif k == len(idx) - 1 and sig.code != SIG_FAULT:
                out.append((k, self.result.kernel_cycles))
        return out


# ---------------------------------------------------------------- reading
class _Reader:
    """Field access with one-line refusals naming the file, line, record and field."""

    def __init__(self, path: Path, line: int, rec_id: str = "?") -> None:
        self.path, self.line, self.id = path, line, rec_id

    def fail(self, field: str, what: str) -> CorpusError:
        return CorpusError(f"{self.path}: line {self.line} (record {self.id}): {field} {what}; {FIX}")

    def get(self, obj: Any, field: str, kind: type | tuple[type, ...]) -> Any:
        key = field.rsplit(".", 1)[-1]
        if not isinstance(obj, dict) or key not in obj:
            raise self.fail(field, "is missing")
        value = obj[key]
        if kind is int and (isinstance(value, bool) or not isinstance(value, int)):
            raise self.fail(field, f"is {value!r}, not an integer")
        if not isinstance(value, kind):
            raise self.fail(field, f"is {value!r}, not of type {getattr(kind, '__name__', kind)}")
        return value

    def nat(self, obj: Any, field: str, bits: int = 32) -> int:
        value = self.get(obj, field, int)
        if not 0 <= value < (1 << bits):
            raise self.fail(field, f"is {value}, outside 0..{(1 << bits) - 1}")
        return value

    def hexes(self, values: Any, field: str, digits: int) -> tuple[int, ...]:
        if not isinstance(values, list):
            raise self.fail(field, f"is {values!r}, not a list")
        out = []
        for k, v in enumerate(values):
            if not isinstance(v, str) or len(v) != digits:
                raise self.fail(f"{field}[{k}]", f"is {v!r}, not {digits} hex digits")
            try:
                out.append(int(v, 16))
            except ValueError:
                raise self.fail(f"{field}[{k}]", f"is {v!r}, not {digits} hex digits") from None
        return tuple(out)

    def nats(self, values: Any, field: str, n: int | None = None) -> tuple[int, ...]:
        if not isinstance(values, list) or (n is not None and len(values) != n):
            raise self.fail(field, f"is {values!r}, not a list of {n or 'some'} integers")
        return tuple(self.item(v, f"{field}[{k}]") for k, v in enumerate(values))

    def item(self, value: Any, field: str, bits: int = 32) -> int:
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < (1 << bits):
            raise self.fail(field, f"is {value!r}, not an integer in 0..{(1 << bits) - 1}")
        return value


def _result(r: _Reader, res: Any) -> Result:
    sigs = []
    for k, s in enumerate(r.get(res, "result.sigs", list)):
        code, arg, at = r.nats(s, f"result.sigs[{k}]", 3)
        sigs.append(Completion(code, arg, at))
    trace = []
    for k, t in enumerate(r.get(res, "result.trace", list)):
        where = f"result.trace[{k}]"
        words = tuple((pc, tt) for pc, tt in (r.nats(w, f"{where}.exec[{j}]", 2)
                                               for j, w in enumerate(r.get(t, f"{where}.exec", list))))
        trace.append(RunTrace(r.nat(t, f"{where}.pc", 9), r.nat(t, f"{where}.at"), words))
    other = r.get(res, "result.dram_other", dict)
    dram_other = {}
    for line, value in other.items():
        if not line.isdigit():
            raise r.fail("result.dram_other", f"has the key {line!r}, not a line number")
        dram_other[int(line)] = r.hexes([value], f"result.dram_other[{line}]", 64)[0]
    return Result(
        sigs=tuple(sigs),
        kernel_cycles=r.nat(res, "result.kernel_cycles"),
        total_cyc=r.nat(res, "result.total_cyc"),
        faults=r.nat(res, "result.faults"),
        watchdog=r.get(res, "result.watchdog", bool),
        dram_drained=r.hexes(r.get(res, "result.dram_drained", list), "result.dram_drained", 64),
        dram_other=dram_other,
        cu_data_out=r.hexes(res.get("cu_data_out", []), "result.cu_data_out", 72),
        trace=tuple(trace),
    )


def parse_record(obj: Any, path: Path, line: int) -> Record:
    """One JSON object of a corpus file as a Record (CorpusError naming the first bad field)."""
    r = _Reader(path, line)
    r.id = r.get(obj, "id", str)
    rec_set = r.get(obj, "set", str)
    if rec_set not in SETS:
        raise r.fail("set", f"is {rec_set!r}, not one of {', '.join(SETS)}")
    if rec_set == "micro":
        case = r.get(obj, "case", dict)
        label, vl = r.get(case, "case.group", str), r.nat(case, "case.vl", 8)
    else:
        label, vl = r.get(obj, "class", str), r.nat(obj, "vl", 8)
    l1, dram, drain = r.get(obj, "l1_init", dict), r.get(obj, "dram_init", dict), r.get(obj, "drain", dict)
    imem = {}
    for k, entry in enumerate(r.get(obj, "imem", list)):
        if not isinstance(entry, list) or len(entry) != 3:
            raise r.fail(f"imem[{k}]", f"is {entry!r}, not [pc, word, text]")
        imem[r.item(entry[0], f"imem[{k}][0]", 9)] = r.hexes([entry[1]], f"imem[{k}][1]", 8)[0]
    rec = Record(
        id=r.id, set=rec_set, label=label, vl=vl,
        l1_word0=r.nat(l1, "l1_init.word0", 9),
        l1_words=r.hexes(r.get(l1, "l1_init.words", list), "l1_init.words", 64),
        dram_line0=r.nat(dram, "dram_init.line0", 16),
        dram_lines=r.hexes(r.get(dram, "dram_init.lines", list), "dram_init.lines", 64),
        cu_inst=r.hexes(r.get(obj, "cu_inst", list), "cu_inst", 72),
        imem=imem,
        runs=r.nats(r.get(obj, "runs", list), "runs"),
        drain_line0=r.nat(drain, "drain.line0", 16),
        drain_n=r.nat(drain, "drain.n", 16),
        result=_result(r, r.get(obj, "result", dict)),
    )
    _check_consistent(r, rec)
    return rec


def _check_consistent(r: _Reader, rec: Record) -> None:
    """The facts the bench relies on, checked once per record: one completion per CU_INST, one trace per
    RUN, as many drained lines as `drain.n`, and a last RUN that reports its count agrees with kernel_cycles."""
    res = rec.result
    if len(res.sigs) != len(rec.cu_inst):
        raise r.fail("result.sigs", f"has {len(res.sigs)} completions for {len(rec.cu_inst)} CU_INST flits")
    runs = rec.run_flits()
    if len(runs) != len(rec.runs) or len(res.trace) != len(runs):
        raise r.fail("runs", f"lists {len(rec.runs)} RUNs, cu_inst holds {len(runs)}, result.trace {len(res.trace)}")
    if len(res.dram_drained) != rec.drain_n:
        raise r.fail("result.dram_drained", f"holds {len(res.dram_drained)} lines, drain.n is {rec.drain_n}")
    last = res.sigs[runs[-1]] if runs else None
    if last is not None and last.code == SIG_INST_COMPLETE and last.arg != res.kernel_cycles:
        raise r.fail("result.kernel_cycles", f"is {res.kernel_cycles}, the last RUN reported {last.arg}")


def load_set(name: str, corpus_dir: Path = CORPUS_DIR) -> list[Record]:
    """Every record of `<corpus_dir>/<name>.jsonl`, in file order."""
    if name not in SETS:
        raise CorpusError(f"unknown corpus set {name!r}; the sets are {', '.join(SETS)}")
    path = corpus_dir / f"{name}.jsonl"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise CorpusError(f"{path}: not found; {FIX}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise CorpusError(f"{path}: cannot be read as UTF-8 text ({e}); {FIX}") from None
    records: list[Record] = []
    seen: set[str] = set()
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            raise CorpusError(f"{path}: line {n} is not JSON ({e.msg} at column {e.colno}); {FIX}") from None
        rec = parse_record(obj, path, n)
        if rec.id in seen:
            raise CorpusError(f"{path}: line {n}: record id {rec.id} appears twice; {FIX}")
        seen.add(rec.id)
        records.append(rec)
    if not records:
        raise CorpusError(f"{path}: holds no record; {FIX}")
    return records


def load_corpus(corpus_dir: Path = CORPUS_DIR, sets: Iterable[str] = SETS) -> list[Record]:
    """The records of every set, micro first, each in file order."""
    return [rec for name in sets for rec in load_set(name, corpus_dir)]


def subset(records: Sequence[Record]) -> list[Record]:
    """The deterministic `make test` subset: per set and label (micro group, random class), the record with
    the fewest upstream bench cycles (result.total_cyc), the first in file order on a tie; in corpus order."""
    best: dict[tuple[str, str], Record] = {}
    for rec in records:
        key = (rec.set, rec.label)
        if key not in best or rec.result.total_cyc < best[key].result.total_cyc:
            best[key] = rec
    chosen = {id(r) for r in best.values()}
    return [r for r in records if id(r) in chosen]


def select(records: Sequence[Record], spec: str) -> list[Record]:
    """The records a run replays: `subset` (or empty), `all`, or a regular expression searched in each id."""
    spec = spec.strip()
    if spec in ("", "subset"):
        return subset(records)
    if spec == "all":
        return list(records)
    try:
        pattern = re.compile(spec)
    except re.error as e:
        raise CorpusError(f"record selection {spec!r} is not a regular expression ({e}); give subset, all, "
                          f"or a pattern of record ids such as 'm[.]vfill[.]' or '^r01'") from None
    chosen = [r for r in records if pattern.search(r.id)]
    if not chosen:
        raise CorpusError(f"record selection {spec!r} matches no record id (micro ids look like "
                          f"m.alu.VADD.dep8.vl64, random ones r000..r299); give subset, all, or a pattern that matches")
    return chosen


__all__ = ["CORPUS_DIR", "SETS", "Completion", "CorpusError", "Record", "Result", "RunTrace", "load_corpus",
           "load_set", "parse_record", "select", "subset"]
