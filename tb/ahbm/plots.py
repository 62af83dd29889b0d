"""Pictures of the AHBM benchmarks (matplotlib, PNG): where one launch's cycles go on every PE, and the
sweeps against their rooflines.

* `timeline`: one row per PE from its activity log (rtl/ahbm/pe/pe_stats.v `alog`: the cycle of every
  change of {DMA moving words, engine activity}; read by tb/ahbm/test_sweep.py): the engine's
  MM, VEC, wait for DMA, push, pop, merge, store and idle as coloured spans, the DMA's transfer below.
* `roofline_plot`: the decode sweep's cycles per tile against the DMA roofline (per PREFETCH and tile
  size) and the launch sweep's launch cycles against the batch's DMA roofline (per B and link width).

Everything drawn is a measured count; the only computed lines are the rooflines, labelled as such.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

from tb.perf.figures import pyplot, save_png

# engine activity classes of pe_stats's alog code [2:0]; bit 3 = the DMA moved words that cycle
CLASSES = ("idle", "wait DMA", "MM", "VEC", "push", "pop", "merge", "store")
COLOURS = ("#f0f0f0", "#c9c9c9", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#d62728", "#8c564b")
DMA_BIT = 8


@dataclass(frozen=True)
class Span:
    start: int
    end: int
    what: str


def spans(log: Sequence[tuple[int, int]], end: int) -> tuple[list[Span], list[Span]]:
    """(engine spans, DMA transfer spans) from a PE's activity log [(cycle, code), ...] in cycle order,
    the last code lasting until `end`. Zero-length spans (two changes in one cycle) are dropped."""
    engine: list[Span] = []
    dma: list[Span] = []
    for i, (t, code) in enumerate(log):
        t1 = log[i + 1][0] if i + 1 < len(log) else end
        if t1 < t:
            raise ValueError(f"activity log not in cycle order at entry {i}: {t} then {t1}")
        if t1 == t:
            continue
        engine.append(Span(t, t1, CLASSES[code & 7]))
        if code & DMA_BIT:
            dma.append(Span(t, t1, "DMA"))
    return _merge(engine), _merge(dma)


def _merge(xs: list[Span]) -> list[Span]:
    out: list[Span] = []
    for s in xs:
        if out and out[-1].what == s.what and out[-1].end == s.start:
            out[-1] = Span(out[-1].start, s.end, s.what)
        else:
            out.append(s)
    return out


def busy_by_class(engine: Sequence[Span]) -> dict[str, int]:
    """Cycles per engine class (what the timeline's legend reports)."""
    out = {c: 0 for c in CLASSES}
    for s in engine:
        out[s.what] += s.end - s.start
    return out


def timeline(logs: dict[int, Sequence[tuple[int, int]]], start: int, end: int, title: str, path: Path) -> Path:
    """One launch, one row per PE (its engine above, its DMA's transfers below), cycles from `start`."""
    plt = pyplot()
    from matplotlib.patches import Patch

    pes = sorted(logs)
    fig, ax = plt.subplots(figsize=(12, 0.6 * len(pes) + 1.6))
    totals = {c: 0 for c in CLASSES}
    for row, p in enumerate(pes):
        eng, dma = spans([(t, c) for t, c in logs[p] if t < end], end)
        y = len(pes) - 1 - row
        for cls, colour in zip(CLASSES, COLOURS):
            bars = [(s.start - start, s.end - s.start) for s in eng if s.what == cls]
            if bars:
                ax.broken_barh(bars, (y + 0.30, 0.6), facecolors=colour)
        ax.broken_barh([(s.start - start, s.end - s.start) for s in dma], (y + 0.05, 0.2), facecolors="black")
        for k, v in busy_by_class(eng).items():
            totals[k] += v
    ax.set_yticks([len(pes) - 1 - i + 0.5 for i in range(len(pes))], [f"PE {p}" for p in pes])
    ax.set_xlim(0, end - start)
    ax.set_xlabel("cycles from the launch's start")
    ax.set_title(title)
    handles = [Patch(color=c, label=f"{k} ({totals[k]})") for k, c in zip(CLASSES, COLOURS) if totals[k]]
    handles.append(Patch(color="black", label="DMA moving words"))
    ax.legend(handles=handles, loc="upper center", bbox_to_anchor=(0.5, -0.18), ncol=5, fontsize=8,
              title="engine cycles summed over the PEs", title_fontsize=8)
    return save_png(fig, path)


def roofline_plot(decode: Sequence[tuple[int, int, int, float, float]], launch: Sequence[tuple[int, int, int, int]],
                  path: Path, target: float = 1.10) -> Path:
    """Measured cycles over their roofline. Left: the decode sweep's cycles per tile over the DMA roofline,
    per PREFETCH (and DMA latency) over tile sizes; decode rows are (prefetch, dma_lat, tile, cycles per
    tile, roofline). Right: launch cycles over the batch's DMA roofline (its K+V bytes over DMA_BW) per
    batch size and link width; launch rows are (B, link bits, launch cycles, DMA roofline). 1.0 is the
    roofline; `target` is the batch target's line."""
    plt = pyplot()

    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    for pf, lat in sorted({(r[0], r[1]) for r in decode}):
        rows = sorted((r for r in decode if r[0] == pf and r[1] == lat), key=lambda r: r[2])
        a.plot([r[2] for r in rows], [r[3] / r[4] for r in rows], marker="o",
               linestyle="-" if lat == min(x[1] for x in decode) else "--", label=f"PREFETCH {pf}, DMA_LAT {lat}")
    a.axhline(1.0, color="k", linewidth=0.8, label="DMA roofline 2*tile*d*2/DMA_BW")
    a.set_xscale("log", base=2)
    a.set_xlabel("tile (keys)")
    a.set_ylabel("measured cycles per tile / roofline")
    a.set_title("decode composites (span of the composites)")
    a.legend(fontsize=7)
    for w in sorted({r[1] for r in launch}):
        rows = sorted(r for r in launch if r[1] == w)
        b.plot([r[0] for r in rows], [r[2] / r[3] for r in rows], marker="o", label=f"{w}-bit IPCQ link")
    b.axhline(1.0, color="k", linewidth=0.8, label="DMA roofline: the batch's K+V bytes / DMA_BW")
    b.axhline(target, color="grey", linestyle=":", label=f"target at B = 8: {target:.1f}x")
    b.set_xlabel("requests in the launch (B)")
    b.set_ylabel("measured launch cycles / DMA roofline")
    b.set_title("decode launches (composites and reduction)")
    b.legend(fontsize=7)
    return save_png(fig, path)
