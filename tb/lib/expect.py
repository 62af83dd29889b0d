"""Compare what a bench captured with what a model predicted, per endpoint.

For devices that answer flits with other flits (compute units, the memory
agent): the protocol orders traffic per (source, destination) pair, so the
prediction is one ordered list per capturing port, optionally split by a key
(e.g. the flit type) when two streams to one port have no order between them.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Iterable, Mapping, Sequence

from models.noc.flit import describe_flit
from tb.lib.harness import CaptureRecord

Key = Callable[[int], object]


def compare_per_port(
    expected: Mapping[int, Sequence[int]],
    records: Iterable[CaptureRecord],
    key: Key = lambda flit: None,
    limit: int = 10,
) -> tuple[int, list[str]]:
    """(checks made, errors): every expected flit seen, in order, nothing extra.

    Flits are grouped by (port, key(flit)); within a group the captured order
    must equal the predicted order exactly. A wrong flit is reported with the
    expected and captured flits decoded.
    """
    want: dict[tuple[int, object], list[int]] = defaultdict(list)
    for port, flits in expected.items():
        for f in flits:
            want[(port, key(f))].append(f)
    got: dict[tuple[int, object], list[tuple[int, int]]] = defaultdict(list)
    for r in records:
        got[(r.port, key(r.flit))].append((r.cycle, r.flit))
    checks = 0
    errors: list[str] = []
    for group in sorted(set(want) | set(got), key=str):
        w, g = want.get(group, []), got.get(group, [])
        port, k = group
        label = f"port {port}" + (f" [{k}]" if k is not None else "")
        for i in range(max(len(w), len(g))):
            checks += 1
            if i >= len(g):
                errors.append(f"MISSING {label} #{i}: never captured: {describe_flit(w[i])}")
            elif i >= len(w):
                errors.append(f"SURPLUS {label} #{i} at cycle {g[i][0]}: {describe_flit(g[i][1])}")
            elif w[i] != g[i][1]:
                errors.append(f"WRONG {label} #{i} at cycle {g[i][0]}:\n    expected {describe_flit(w[i])}"
                              f"\n    captured {describe_flit(g[i][1])}")
    return checks, errors[:limit] + ([f"... {len(errors) - limit} more"] if len(errors) > limit else [])
