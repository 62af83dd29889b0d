"""A bundle's kernel calls: which rounds of the plan belong to which kernel.

Why: a whole model's forward pass is ONE bundle of many kernels (clients/model/).
Its outputs are judged kernel by kernel (models/bundle/kernel_judge.py): a kernel's
results against float64 evaluated on the values that kernel read, so an error bound
never compounds from one kernel into the next; and its cost is reported per kernel
(tb.client's per-kernel summary). Nothing here knows a kernel by name: the kernel's
name is only printed.

Where the calls come from, in order of preference (clients/model/README.md):

1. ``calls`` in bundle.json: each call's ``call`` index, ``kernel`` and ``rounds``;
2. else each round's ``call`` field;
3. else the stage structure: a stage's ``name`` is ``<kernel>:<k>`` with k counting the
   kernel's stages from 0 (clients/README.md), so a stage numbered 0 opens a call, and
   a round belongs to the call of its stage;
4. else (no stage names of that form): the whole plan is one call.

A single-kernel bundle is one call. The calls partition the plan's rounds into
consecutive runs, in plan order; anything else is refused (BundleError, one line).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from models.bundle.schema import BundleError


@dataclass(frozen=True)
class Call:
    """One kernel call: its index, the kernel's name (printed only) and its rounds (plan order)."""

    index: int
    kernel: str
    rounds: tuple[int, ...]


def _plan_rounds(meta: dict[str, Any]) -> list[dict[str, Any]]:
    return [p for p in meta["plan"] if p["kind"] == "round"]


def _from_calls_field(meta: dict[str, Any]) -> list[Call]:
    calls = meta["calls"]
    if not isinstance(calls, list) or not calls:
        raise BundleError("bundle.json calls: expected a non-empty list of kernel calls; export the bundle again")
    out = []
    for i, c in enumerate(calls):
        if not isinstance(c, dict) or not isinstance(c.get("rounds"), list) or \
                not all(isinstance(r, int) and not isinstance(r, bool) for r in c["rounds"]):
            raise BundleError(f"bundle.json calls[{i}]: expected an object with rounds (a list of round numbers); "
                              f"export the bundle again")
        out.append(Call(int(c.get("call", i)), str(c.get("kernel", f"call{i}")), tuple(c["rounds"])))
    return out


def _from_round_field(rounds: list[dict[str, Any]], meta: dict[str, Any]) -> list[Call]:
    names = {int(s["index"]): str(s.get("name", "")) for s in meta.get("stages", []) if "index" in s}
    out: list[Call] = []
    for p in rounds:
        call = p["call"]
        if not isinstance(call, int) or isinstance(call, bool):
            raise BundleError(f"bundle.json plan round {p['round']}: call {call!r} is not an integer; export the "
                              f"bundle again")
        if not out or out[-1].index != call:
            kernel = names.get(int(p.get("stage", -1)), str(p.get("name", ""))).split(":")[0] or f"call{call}"
            out.append(Call(call, kernel, ()))
        last = out[-1]
        out[-1] = Call(last.index, last.kernel, last.rounds + (int(p["round"]),))
    return out


def _stage_number(name: str) -> tuple[str, int] | None:
    kernel, sep, k = name.rpartition(":")
    return (kernel, int(k)) if sep and kernel and k.isdigit() else None


def _from_stages(rounds: list[dict[str, Any]], meta: dict[str, Any]) -> list[Call]:
    parsed = {int(s["index"]): _stage_number(str(s.get("name", ""))) for s in meta.get("stages", [])
              if "index" in s}
    if not rounds or any(parsed.get(int(p.get("stage", -1))) is None for p in rounds):
        return []
    out: list[Call] = []
    prev_stage = None
    for p in rounds:
        stage = int(p["stage"])
        kernel, k = parsed[stage]  # type: ignore[misc]
        if not out or (stage != prev_stage and k == 0):
            out.append(Call(len(out), kernel, ()))
        last = out[-1]
        out[-1] = Call(last.index, last.kernel, last.rounds + (int(p["round"]),))
        prev_stage = stage
    return out


def kernel_calls(meta: dict[str, Any]) -> list[Call]:
    """The plan's kernel calls, in plan order (module doc); BundleError if they do not partition the rounds
    into consecutive runs."""
    rounds = _plan_rounds(meta)
    if "calls" in meta:
        calls = _from_calls_field(meta)
    elif rounds and all("call" in p for p in rounds):
        calls = _from_round_field(rounds, meta)
    else:
        calls = _from_stages(rounds, meta)
    order = [int(p["round"]) for p in rounds]
    if not calls:
        return [Call(0, str(meta.get("kernel", {}).get("name", "")) or "kernel", tuple(order))]
    flat = [r for c in calls for r in c.rounds]
    if flat != order:
        raise BundleError(f"bundle.json calls: the calls' rounds {flat[:12]}{'...' if len(flat) > 12 else ''} are "
                          f"not the plan's rounds in plan order {order[:12]}{'...' if len(order) > 12 else ''}; "
                          f"export the bundle again")
    if any(not c.rounds for c in calls):
        raise BundleError(f"bundle.json calls: call {next(c.index for c in calls if not c.rounds)} has no round; "
                          f"export the bundle again")
    return calls


def kernel_starts(meta: dict[str, Any]) -> frozenset[int]:
    """The first round of every call but the first: where one kernel's results are handed to the next."""
    return frozenset(c.rounds[0] for c in kernel_calls(meta)[1:])


def call_of_round(meta: dict[str, Any]) -> dict[int, Call]:
    """Round number -> its call."""
    return {r: c for c in kernel_calls(meta) for r in c.rounds}


__all__ = ["Call", "call_of_round", "kernel_calls", "kernel_starts"]
