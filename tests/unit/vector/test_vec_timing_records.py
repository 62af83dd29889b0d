"""The timing corpus loader (tb/vector/vec_timing/records.py), the record selection and the harness-fit refusal:
the real corpus reads whole, every broken file is refused in one line naming the file, line, record, field and
the fix, and a record that does not fit the harness is refused before any simulation."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from tb.run.benches import get_bench
from tb.vector.vec_timing.observed import Limits, refusal
from tb.vector.vec_timing.records import CORPUS_DIR, CorpusError, Record, load_corpus, load_set, select, subset


@pytest.fixture(scope="module")
def corpus() -> list[Record]:
    return load_corpus()


def test_the_corpus_reads_whole(corpus: list[Record]) -> None:
    micro = [r for r in corpus if r.set == "micro"]
    rand = [r for r in corpus if r.set == "random"]
    assert (len(micro), len(rand)) == (609, 300)
    # micro: both RUNs report their count; random: the last RUN's kernel_cycles (a faulting first RUN has none)
    assert all(len(r.timed_runs()) == 2 for r in micro)
    assert all(len(r.timed_runs()) == 1 for r in rand)
    r = next(r for r in micro if r.id == "m.alu.VADD.dep8.vl64")
    assert r.timed_runs()[1] == (1, r.result.kernel_cycles)
    assert r.flits()[0] >> 268 & 0xF == 8 and len(r.flits()) == 1 + len(r.l1_words) + len(r.cu_inst)


def test_the_subset_covers_every_group_and_class_once(corpus: list[Record]) -> None:
    chosen = subset(corpus)
    groups = {(r.set, r.label) for r in corpus}
    assert sorted((r.set, r.label) for r in chosen) == sorted(groups) and len(groups) == 13 + 15
    for r in chosen:  # the cheapest of its label upstream
        assert r.result.total_cyc == min(x.result.total_cyc for x in corpus if (x.set, x.label) == (r.set, r.label))
    assert [r.id for r in subset(corpus)] == [r.id for r in chosen]


def test_selection(corpus: list[Record]) -> None:
    assert select(corpus, "") == select(corpus, "subset") == subset(corpus)
    assert len(select(corpus, "all")) == 909
    assert [r.id for r in select(corpus, r"^m[.]vfill[.]VFILL[.]n1[.]fill[.]")] == [
        "m.vfill.VFILL.n1.fill.vl16", "m.vfill.VFILL.n1.fill.vl64", "m.vfill.VFILL.n1.fill.vl128"]
    with pytest.raises(CorpusError, match=r"^record selection '\[' is not a regular expression"):
        select(corpus, "[")
    with pytest.raises(CorpusError, match=r"^record selection 'zz' matches no record id"):
        select(corpus, "zz")


def _line(set_name: str = "micro") -> dict:
    with (CORPUS_DIR / f"{set_name}.jsonl").open() as f:
        return json.loads(f.readline())


def _refused(tmp_path: Path, obj: object | str) -> str:
    text = obj if isinstance(obj, str) else json.dumps(obj)
    (tmp_path / "micro.jsonl").write_text(text + "\n")
    with pytest.raises(CorpusError) as e:
        load_set("micro", tmp_path)
    msg = str(e.value)
    assert "\n" not in msg and msg.startswith(str(tmp_path / "micro.jsonl"))
    assert msg.endswith("restore it from the corpus (clients/vec_timing/, byte for byte as received; README.md there)")
    return msg


def test_a_missing_file_is_refused(tmp_path: Path) -> None:
    with pytest.raises(CorpusError, match=r"micro.jsonl: not found; restore it from the corpus"):
        load_set("micro", tmp_path)


def test_broken_records_are_refused_by_field(tmp_path: Path) -> None:
    assert ": line 1 is not JSON (Expecting value at column 1)" in _refused(tmp_path, "not json")
    rec = _line()
    del rec["result"]["sigs"]
    assert "line 1 (record m.alu.VMOV.single.vl16): result.sigs is missing" in _refused(tmp_path, rec)
    rec = _line()
    rec["cu_inst"][3] = rec["cu_inst"][3][:-1]
    assert "cu_inst[3] is '" in _refused(tmp_path, rec) and "not 72 hex digits" in _refused(tmp_path, rec)
    rec = _line()
    rec["result"]["dram_drained"] = ["xyz"]
    assert "result.dram_drained[0] is 'xyz', not 64 hex digits" in _refused(tmp_path, rec)
    rec = _line()
    rec["set"] = "other"
    assert "set is 'other', not one of micro, random" in _refused(tmp_path, rec)
    rec = _line()
    rec["result"]["kernel_cycles"] = "84"
    assert "result.kernel_cycles is '84', not an integer" in _refused(tmp_path, rec)
    rec = _line()
    rec["result"]["sigs"].pop()
    assert "result.sigs has 41 completions for 42 CU_INST flits" in _refused(tmp_path, rec)
    rec = _line()
    rec["result"]["kernel_cycles"] += 1
    assert "result.kernel_cycles is 85, the last RUN reported 84" in _refused(tmp_path, rec)
    rec = _line()
    assert "appears twice" in _refused(tmp_path, json.dumps(rec) + "\n" + json.dumps(rec))


def test_a_record_that_does_not_fit_is_refused_before_simulation(corpus: list[Record]) -> None:
    lim = Limits.from_parameters(get_bench("vec_timing").parameters)
    assert all(refusal(r, lim) is None for r in corpus)  # the bench's arrays hold every record
    big = max(corpus, key=lambda r: len(r.flits()))
    small = replace(lim, flits=len(big.flits()) - 1)
    assert refusal(big, small) == (f"record {big.id}: {len(big.flits())} flits, the harness holds "
                                   f"FLIT_DEPTH={len(big.flits()) - 1}; raise the parameter in tb/run/benches.py "
                                   f"(bench vec_timing)")
    r = corpus[0]
    assert "TRACE_DEPTH=3" in refusal(r, replace(lim, trace=3))
    moved = replace(r, cu_inst=(r.cu_inst[0] ^ (1 << 284),) + r.cu_inst[1:])  # dst x 3 -> 2
    assert refusal(moved, lim) == (f"record {r.id}: cu_inst[0] is type 5 from (0, 0) to (2, 3); the harness sends "
                                   f"CU_INST (type 5) from (0, 0) to the core at (3, 3)")
