"""Replay of upstream's vector-core timing corpus (clients/vec_timing/) on our core.

records: the corpus as typed, checked records (the loader); observed: what the
bench harness recorded for one record; compare: the functional comparison;
judge: the timing judge and the per-set summary; sim: the cocotb driver of
rtl/bench/vt_harness.v. Everything but sim is plain Python (no simulator).
"""

from tb.vector.vec_timing.records import (
    CORPUS_DIR, SETS, Completion, CorpusError, Record, Result, RunTrace, load_corpus, load_set, subset,
)

__all__ = ["CORPUS_DIR", "SETS", "Completion", "CorpusError", "Record", "Result", "RunTrace", "load_corpus",
           "load_set", "subset"]
