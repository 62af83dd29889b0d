"""The loader (models/bundle/loader.py) against upstream's own: the same operations, in the same order, per round.

Every bundle records the commands upstream's loader ran for it on a fresh machine
(`loader_commands`: WR / POLL at upstream's host window 0x1000_0000, polls with
the counts its model run observed). Our translation, given the same baselines
(the `observed` ones), must be those commands exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from models.bundle.reader import Bundle, bundle_names
from models.bundle.loader import LoaderRefused, Poll, Relayout, Write, plan_rounds, staged_flit

UPSTREAM_WINDOW = 0x1000_0000


def upstream(p: dict) -> list[tuple[str, int, int, int]]:
    return [(c[0], int(c[1], 16) - UPSTREAM_WINDOW, int(c[2], 16), int(c[3], 16)) for c in p["loader_commands"]
            if c[0] in ("WR", "POLL")]


def ours(cmds) -> list[tuple[str, int, int, int]]:
    return [("WR", c.addr, c.value, 0) if isinstance(c, Write) else ("POLL", c.addr, c.want, c.mask) for c in cmds]


@pytest.mark.parametrize("name", bundle_names())
def test_commands_are_upstream_loaders(name: str) -> None:
    b = Bundle(name)
    rounds = [p for p in b.meta["plan"] if p["kind"] == "round"]
    programs = plan_rounds(b)
    assert len(programs) == len(rounds)
    for prog, p in zip(programs, rounds):
        base = {tuple(int(v) for v in k.split(",")): o["baseline"] for k, o in p["observed"].items()}
        assert set(prog.await_nodes) <= set(base), f"round {p['round']}: an awaited node has no observed baseline"
        assert ours(prog.commands(base)) == upstream(p), f"round {p['round']} of {name}"
        assert set(prog.stage) == set(range(len(prog.stage))), "rounds restage from slot 0, consecutive slots"


def test_staging_ors_the_header_and_keeps_payload_bits_above_255() -> None:
    vc_payload = (0x54 << 264) | 0x1234  # type 5 / txn 0x40 riding in the payload word of a vector flit
    f = staged_flit(vc_payload, last=True)
    assert (f >> 268) & 0xF == 5 and (f >> 260) & 0xFF == 0x40 and (f >> 259) & 1 == 1 and f & 0xFFFF == 0x1234
    assert staged_flit(f, last=True) == f  # idempotent: a staged value stages to itself


def test_a_kick_past_the_staging_ram_is_refused_before_anything_runs() -> None:
    b = Bundle("ops_log2_m32n64")
    p = next(e for e in b.meta["plan"] if e["kind"] == "round")
    kick = next(s for s in p["steps"] if s["op"] == "kick")
    kick["base"] = 100  # 44 flits from slot 100: past 127
    with pytest.raises(LoaderRefused, match="128-slot staging RAM"):
        plan_rounds(b)


def test_relayout_gathers_and_zero_fills() -> None:
    r = Relayout(0x8000_0000, 8, 8, np.array([3, 2, -1, 0]))
    old = np.array([1, 0, 2, 0, 3, 0, 4, 0], dtype=np.uint8)
    assert list(r.apply(old).view("<u2")) == [4, 3, 0, 1]
