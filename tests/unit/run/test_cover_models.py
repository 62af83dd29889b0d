"""The NoC and AHBM coverage models (tb/cover/noc.py, ahbm.py): what a sample hits, and what it must not."""

from __future__ import annotations

from pathlib import Path

import pytest

from models.noc.flit import FIELDS
from tb.cover import ahbm, db, noc


def _flit(src: tuple[int, int], dst: tuple[int, int]) -> int:
    return (FIELDS["src_x"].place(src[0]) | FIELDS["src_y"].place(src[1]) | FIELDS["dst_x"].place(dst[0])
            | FIELDS["dst_y"].place(dst[1]))


@pytest.fixture
def fresh():
    """Each test builds the models anew (they are built once per simulator process)."""
    noc.samplers.cache_clear()
    ahbm.samplers.cache_clear()
    db.reset("noc")
    db.reset("ahbm")
    yield
    db.reset("noc")
    db.reset("ahbm")


def _bins(name: str) -> dict[str, int]:
    return dict(next(i for i in db.current().items if i.name == name).bins)


def test_noc_run_counts_pairs_stalls_and_full_fifos(fresh) -> None:
    ends = [(1, 1), (2, 1)]
    delivered = [(_flit((1, 1), (2, 1)), (2, 1)), (_flit((2, 1), (2, 1)), (2, 1)), (_flit((1, 1), (2, 1)), (2, 1))]
    noc.sample_run("m", ends, delivered, "RANDOM", "BURST", [((1, 1), 0), ((2, 1), 7)])
    assert _bins("noc.m.src_x_dst") == {"('1,1', '1,1')": 0, "('1,1', '2,1')": 2, "('2,1', '1,1')": 0,
                                        "('2,1', '2,1')": 1}
    assert _bins("noc.m.idle_x_backpressure")["('RANDOM', 'BURST')"] == 1
    assert _bins("noc.m.idle_x_backpressure_x_fifo_full")["('RANDOM', 'BURST', 'yes')"] == 1
    assert _bins("noc.m.filled") == {"1,1": 0, "2,1": 1}


def test_noc_a_run_without_a_full_fifo_or_with_an_always_mode_hits_nothing_there(fresh) -> None:
    ends = [(1, 1), (2, 1)]
    noc.sample_run("m", ends, [(_flit((9, 9), (1, 1)), (1, 1))], "NONE", "NONE", [((1, 1), 0), ((2, 1), 0)])
    assert sum(_bins("noc.m.src").values()) == 0  # a source that is no endpoint is no bin
    assert _bins("noc.m.idle_x_backpressure")["('NONE', 'NONE')"] == 1
    assert sum(_bins("noc.m.idle_x_backpressure_x_fifo_full").values()) == 0
    noc.sample_run("m", ends, [], "ALWAYS", "NONE", [((1, 1), 3), ((2, 1), 0)])
    assert sum(_bins("noc.m.idle").values()) == 1 and sum(_bins("noc.m.filled").values()) == 0


def test_ahbm_launch_polls_and_b_classes(fresh) -> None:
    ahbm.sample_launch("decode", 8, 5, 256, [("hit", 3), ("miss-covered", 0), ("miss-idle", 2)])
    ahbm.sample_launch("ring", 4, 1, 64)
    assert _bins("ahbm.kind_x_n")["('decode', '8')"] == 1 and _bins("ahbm.kind_x_n")["('ring', '4')"] == 1
    assert _bins("ahbm.decode_b") == {"1": 0, "2-4": 0, "5-8": 1}
    polls = _bins("ahbm.width_x_poll")
    assert polls["('256', 'hit')"] == 1 and polls["('256', 'miss-idle')"] == 1
    assert polls["('256', 'miss-covered')"] == 0 and sum(polls.values()) == 2
    assert [ahbm.b_class(b) for b in (1, 2, 4, 5, 8)] == ["1", "2-4", "2-4", "5-8", "5-8"]


def test_a_saved_database_reads_back_the_same(fresh, tmp_path: Path) -> None:
    ahbm.sample_launch("prefill", 2, 1, 512, [("miss-in-flight", 4)])
    db.save(tmp_path / "c.xml")
    assert tuple(db.read(tmp_path / "c.xml").of("ahbm")) == db.current(["ahbm"]).items  # other tests' models
    # may share this process's database: only the model built here is compared
