"""Unit tests for tb.noc.scoreboard: every fault class must fail, exactly once.

Each fault test starts from a clean synthetic run (which passes), injects one
fault into the captured stream, and asserts the category counts exactly, so a
scoreboard that stops detecting a fault - or starts cascading - fails here.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass

import pytest

from models.noc.flit import FIELDS, pack_flit
from models.noc.mesh import MeshGeometry
from models.noc.traffic import uniform_random
from tb.noc.scoreboard import CATEGORIES, FlitScoreboard
from tb.perf.model_speed import match_all, scoreboard_traffic

GEOM = MeshGeometry.with_all_edges(3, 3)
CYCLES_PER_HOP = 3


@dataclass
class Event:
    """One synthetic flit: where it entered, where and when it should leave."""

    src: int
    dst: int
    flit: int
    inject: int
    capture: int


def make_flit(src: int, dst: int, k: int) -> int:
    """Unique-payload flit from endpoint ``src`` to endpoint ``dst``."""
    sx, sy = GEOM.port_coord(src)
    dx, dy = GEOM.port_coord(dst)
    return pack_flit(dst_x=dx, dst_y=dy, src_x=sx, src_y=sy, type=8, txn=k & 0xFF, last=1,
                     payload=(k * 0x9E3779B97F4A7C15 + 1) << 64)


def clean_run(n: int = 60, seed: int = 7) -> list[Event]:
    """Random traffic plus a guaranteed 4-flit stream on one pair, delivered in order."""
    pairs = uniform_random(GEOM, random.Random(seed), n) + [(0, 20)] * 4
    events = []
    for k, (s, d) in enumerate(pairs):
        inject = k
        events.append(Event(s, d, make_flit(s, d, k), inject,
                            inject + CYCLES_PER_HOP * GEOM.hops(s, d) + 1))
    return events


def score(events: list[Event], captures: list[tuple[int, int, int]] | None = None,
          min_cycles_per_hop: int = CYCLES_PER_HOP):
    """Feed injections and captures (default: the events' own) to a fresh scoreboard."""
    sb = FlitScoreboard(GEOM, min_cycles_per_hop=min_cycles_per_hop)
    for e in events:
        sb.expect(e.src, e.flit, e.inject)
    if captures is None:
        captures = [(e.dst, e.flit, e.capture) for e in events]
    for port, flit, cycle in sorted(captures, key=lambda c: c[2]):
        sb.observe(port, flit, cycle)
    return sb.finish()


def caps_of(events: list[Event]) -> list[tuple[int, int, int]]:
    return [(e.dst, e.flit, e.capture) for e in events]


def stream(events: list[Event]) -> list[int]:
    """Indices of the guaranteed (0 -> 20) stream."""
    return [i for i, e in enumerate(events) if (e.src, e.dst) == (0, 20)]


def test_clean_run_passes_with_expected_check_count() -> None:
    events = clean_run()
    rep = score(events)
    assert rep.passed, rep.errors
    rep.raise_if_errors()
    n = len(events)
    pair_sizes: dict[tuple[int, int], int] = {}
    for e in events:
        pair_sizes[(e.src, e.dst)] = pair_sizes.get((e.src, e.dst), 0) + 1
    ordering = sum(v - 1 for v in pair_sizes.values())
    # identity + routing + latency + loss per flit + ordering + non-empty (the bench's own stimulus is not a
    # check of the device: SRC_MISMATCH / BAD_DST fail the run but count nothing).
    assert rep.checks == n + n + n + n + ordering + 1
    assert rep.expected == rep.delivered == rep.observed == n
    assert rep.counts == {}
    assert rep.latency_min is not None and rep.latency_min >= CYCLES_PER_HOP + 1
    assert rep.slack_min is not None and rep.slack_min >= 1
    assert "PASS" in rep.summary()


def only(rep, category: str) -> str:
    """Assert the report has exactly one error, of ``category``; return it."""
    assert rep.counts == {category: 1}, rep.errors
    assert not rep.passed
    assert rep.errors[0].startswith(category + " ")
    return rep.errors[0]


def test_dropped_flit_is_one_lost() -> None:
    events = clean_run()
    victim = stream(events)[1]  # mid-stream: must not also look like a reorder
    caps = [c for i, c in enumerate(caps_of(events)) if i != victim]
    msg = only(score(events, caps), "LOST")
    assert "#0(1,1)->#20(4,3)" in msg and "type=CU_DATA" in msg


def test_duplicated_flit_is_one_duplicate() -> None:
    events = clean_run()
    e = events[stream(events)[0]]
    caps = caps_of(events) + [(e.dst, e.flit, e.capture + 1)]
    only(score(events, caps), "DUPLICATE")


def test_misrouted_flit_is_one_misroute() -> None:
    events = clean_run()
    e = events[10]
    wrong = next(p for p in GEOM.endpoints() if p != e.dst)
    caps = caps_of(events)
    caps[10] = (wrong, e.flit, e.capture)
    msg = only(score(events, caps), "MISROUTE")
    assert f"#{wrong}{GEOM.port_coord(wrong)}".replace(" ", "") in msg


def test_dst_corrupted_in_flight_is_one_misroute() -> None:
    events = clean_run()
    idx = stream(events)[2]
    e = events[idx]
    bad = (e.flit & ~(FIELDS["dst_x"].mask << FIELDS["dst_x"].lsb)) | (1 << FIELDS["dst_x"].lsb)
    assert GEOM.port_coord(e.dst) == (4, 3)
    new_port = GEOM.port_index((1, 3))  # dst_x 4 -> 1
    caps = caps_of(events)
    caps[idx] = (new_port, bad, e.capture)
    msg = only(score(events, caps), "MISROUTE")
    assert "dst field changed in flight from (4, 3) to (1, 3)" in msg


def test_swapped_pair_is_reorder_not_lost() -> None:
    events = clean_run()
    a, b = stream(events)[1:3]
    caps = caps_of(events)
    caps[a], caps[b] = (caps[a][0], caps[a][1], caps[b][2]), (caps[b][0], caps[b][1], caps[a][2])
    rep = score(events, caps)
    msg = only(rep, "REORDER")
    assert "LOST" not in rep.counts
    assert f"payload=0x{events[a].flit & ((1 << 256) - 1):064x}" in msg
    assert f"payload=0x{events[b].flit & ((1 << 256) - 1):064x}" in msg


def test_one_late_flit_is_one_reorder() -> None:
    events = clean_run()
    first = stream(events)[0]
    caps = caps_of(events)
    caps[first] = (caps[first][0], caps[first][1], max(c[2] for c in caps) + 5)
    only(score(events, caps), "REORDER")


def test_corrupted_payload_is_one_corrupt() -> None:
    events = clean_run()
    caps = caps_of(events)
    port, flit, cycle = caps[5]
    caps[5] = (port, flit ^ (1 << 100), cycle)
    msg = only(score(events, caps), "CORRUPT")
    assert "payload changed" in msg and "xor=0x1" + "0" * 25 in msg


def test_corrupted_header_field_is_one_corrupt() -> None:
    events = clean_run()
    caps = caps_of(events)
    port, flit, cycle = caps[7]
    caps[7] = (port, flit ^ (1 << FIELDS["txn"].lsb), cycle)
    msg = only(score(events, caps), "CORRUPT")
    assert "changed: txn" in msg


def test_unknown_flit_is_one_unknown() -> None:
    events = clean_run()
    stranger = pack_flit(dst_x=1, dst_y=1, src_x=2, src_y=2, type=0xF, payload=0xBAD)
    rep = score(events, caps_of(events) + [(0, stranger, 3)])
    only(rep, "UNKNOWN")


def test_latency_below_hop_count_is_one_latency() -> None:
    events = clean_run()
    caps = caps_of(events)
    e = events[12]
    hops = GEOM.hops(e.src, e.dst)
    caps[12] = (e.dst, e.flit, e.inject + CYCLES_PER_HOP * hops - 1)
    msg = only(score(events, caps), "LATENCY")
    assert f"{CYCLES_PER_HOP} x {hops} hops" in msg


def test_the_default_floor_is_the_routers_three_registers_per_hop() -> None:
    """noc_router.v registers a flit three times per router: a capture one cycle under 3 x hops is impossible."""
    from tb.noc.scoreboard import ROUTER_MIN_CYCLES_PER_HOP
    assert ROUTER_MIN_CYCLES_PER_HOP == 3 and FlitScoreboard(GEOM).min_cycles_per_hop == 3
    s, d = 0, GEOM.num_ports - 1
    hops = GEOM.hops(s, d)
    flit = make_flit(s, d, 3)
    for lat, ok in ((3 * hops, True), (3 * hops - 1, False)):
        sb = FlitScoreboard(GEOM)
        sb.expect(s, flit, 10)
        sb.observe(d, flit, 10 + lat)
        rep = sb.finish()
        assert rep.passed == ok and (ok or rep.counts == {"LATENCY": 1}), rep.errors


def test_latency_floor_scales_with_min_cycles_per_hop() -> None:
    events = clean_run()
    assert score(events, min_cycles_per_hop=CYCLES_PER_HOP).passed
    assert score(events, min_cycles_per_hop=1).passed
    assert not score(events, min_cycles_per_hop=CYCLES_PER_HOP + 2).passed


def test_src_mismatch_is_one_error() -> None:
    sb = FlitScoreboard(GEOM)
    flit = make_flit(3, 5, 1)
    sb.expect(4, flit, 0)  # injected by endpoint 4, header claims endpoint 3
    sb.observe(5, flit, 10)
    only(sb.finish(), "SRC_MISMATCH")


def test_bad_dst_is_reported_once() -> None:
    g = MeshGeometry(2, 2)  # no edge endpoints
    sb = FlitScoreboard(g)
    flit = pack_flit(dst_x=3, dst_y=1, src_x=1, src_y=1, payload=1)
    sb.expect(0, flit, 0)
    sb.observe(1, flit, 5)
    only(sb.finish(), "BAD_DST")


def test_identical_flits_are_interchangeable() -> None:
    sb = FlitScoreboard(GEOM)
    flit = make_flit(0, 4, 0)
    for t in (0, 1, 2):
        sb.expect(0, flit, t)
    for t in (20, 21, 22):
        sb.observe(4, flit, t)
    assert sb.finish().passed
    sb2 = FlitScoreboard(GEOM)
    for t in (0, 1):
        sb2.expect(0, flit, t)
    sb2.observe(4, flit, 20)
    only(sb2.finish(), "LOST")


def test_empty_run_fails_unless_allowed() -> None:
    sb = FlitScoreboard(GEOM)
    only(sb.finish(), "EMPTY")
    assert sb.finish(allow_empty=True).passed


def test_raise_if_errors_lists_first_errors_and_total() -> None:
    events = clean_run()
    rep = score(events, [])
    assert rep.counts == {"LOST": len(events)}
    with pytest.raises(AssertionError) as exc:
        rep.raise_if_errors(limit=3)
    text = str(exc.value)
    assert text.count("LOST ") == 3 and f"and {len(events) - 3} more" in text
    assert f"{len(events)} errors" in text


def test_all_categories_are_documented() -> None:
    assert set(CATEGORIES) >= {"LOST", "DUPLICATE", "MISROUTE", "REORDER", "CORRUPT",
                               "UNKNOWN", "SRC_MISMATCH", "LATENCY"}


def test_bad_arguments_refused() -> None:
    sb = FlitScoreboard(MeshGeometry(2, 2))
    with pytest.raises(ValueError):
        sb.expect(4, 0, 0)  # absent edge endpoint
    with pytest.raises(ValueError):
        sb.observe(99, 0, 0)
    with pytest.raises(ValueError):
        sb.observe(0, 1 << 288, 0)
    with pytest.raises(ValueError):
        FlitScoreboard(GEOM, min_cycles_per_hop=-1)


def test_finish_is_repeatable() -> None:
    events = clean_run()
    sb = FlitScoreboard(GEOM, CYCLES_PER_HOP)
    for e in events:
        sb.expect(e.src, e.flit, e.inject)
    for e in events[:-1]:
        sb.observe(e.dst, e.flit, e.capture)
    r1, r2 = sb.finish(), sb.finish()
    assert dataclasses.asdict(r1) == dataclasses.asdict(r2)
    assert r1.counts == {"LOST": 1}


def test_twenty_thousand_flits_match() -> None:
    """The benchmark's traffic (tb/perf/model_speed.py) passes clean and every flit is delivered; how fast
    it runs is a make bench figure, not a verdict here."""
    assert match_all(*scoreboard_traffic(20_000)) == 20_000
