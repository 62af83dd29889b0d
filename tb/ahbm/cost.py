"""What a token costs: the layer runs' records priced in a technology, as one table and one plot.

``python -m tb.ahbm.cost [--records DIR] [--plot PNG] [--clock-ghz F]`` (``make cost``): every whole-layer
record in DIR (tb/ahbm/layer.py's ``layer_s<context>_b<B>_w<link>.json``; default sim_build/ahbm_layer,
the project's own measured ones in docs/data/ahbm_layer) becomes a row: context, B, the launch's cycles and
their ratio to the KV-read roofline, the layer's decode-attention latency, tokens/s for the 80 layers'
attention, energy per token by charged event, the same cubes at their roofline, a GPU's HBM roofline for
the same KV bytes, and how long the simulation took. The technology (models/ahbm/cost.py) and every
constant's source are printed under the table; the published anchors (docs/ahbm.md §13) are not
recomputed here, they are cited there beside this table.

Why a command of its own: a layer run at 128k tokens takes minutes, pricing it takes none; the same
records can be priced again in another technology (``--clock-ghz``) without running anything.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Sequence

from models.ahbm.cost import EVENTS, TokenCost, Tech, at_clock, hbm3_cube, token_cost, work_from_record
from models.ahbm.layer import LAYERS
from tb.run.benches import ROOT

RECORDS = ROOT / "sim_build" / "ahbm_layer"
PLOT = ROOT / "docs" / "img" / "ahbm_cost.png"


def load_costs(folder: Path, tech: Tech) -> list[TokenCost]:
    """Every layer record in `folder`, priced, by (B, context); ValueError naming the first that cannot be."""
    files = sorted(folder.glob("layer_s*_b*_w*.json"))
    if not files:
        raise ValueError(f"no layer records (layer_s*_b*_w*.json) in {folder}: run make layer first, or give "
                         "--records docs/data/ahbm_layer (the project's measured ones)")
    out = []
    for f in files:
        try:
            rec = json.loads(f.read_text())
            out.append(token_cost(work_from_record(rec), tech))
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{f}: {exc}") from exc
    return sorted(out, key=lambda c: (c.work.b, c.work.context))


def format_costs(costs: Sequence[TokenCost], tech: Tech) -> str:
    """The cost table, then the technology, then what the energy leaves out."""
    head = (f"{'context':>8s} {'B':>2s} {'launch cyc':>10s} {'/roof':>5s} {'layer us':>8s} {'tok/s':>8s} "
            f"{'roof tok/s':>10s} {'H100 tok/s':>10s} {'mJ/token':>8s} {'bank%':>5s} {'fma%':>5s} {'ipcq%':>5s} "
            f"{'conv%':>5s} {'sim s':>6s}")
    lines = [f"AHBM decode attention of Llama3-70B ({LAYERS} layers), what a token costs in {tech.name} "
             f"(PE clock {tech.clock_hz.value / 1e9:.2f} GHz, {tech.pe_bandwidth / 1e9:.1f} GB/s a PE)",
             head, "-" * len(head)]
    for c in costs:
        w, pj = c.work, c.pj_per_token
        share = [100 * x for x in c.shares.values()]
        lines.append(f"{w.context:8d} {w.b:2d} {w.latency_cycles:10d} {w.latency_cycles / w.roofline_cycles:5.3f} "
                     f"{1e6 * c.layer_s:8.2f} {c.tokens_per_s:8.1f} {c.roofline_tokens_per_s:10.1f} "
                     f"{c.gpu_tokens_per_s:10.1f} {pj / 1e9:8.2f} "
                     + " ".join(f"{s:5.1f}" for s in share) + f" {w.sim_elapsed_s:6.0f}")
    lines.append("tok/s: B / (80 x the layer's latency), attention only; roof: the same cubes at their KV-read "
                 "roofline; H100: the same KV bytes at its HBM bandwidth (capacity not considered)")
    lines.append("technology:")
    lines += [f"  {k.name}: {k.value:.4g} {k.unit} ({k.source})" for k in tech.constants()]
    if costs:
        w = costs[-1].work
        lines.append(f"not charged: exponentials ({w.exps:,} a layer at s={w.context:,} B={w.b}, against "
                     f"{w.fmas:,} multiply-adds), compares, divides, the PE's SRAM buffers, control, clock "
                     "and static power")
    return "\n".join(lines)


def _pct(x: float) -> str:
    """A share in percent, with the digits a small one needs to show."""
    return f"{100 * x:.1f} %" if x >= 0.01 else f"{100 * x:.2f} %"


def markdown_costs(costs: Sequence[TokenCost]) -> str:
    """The cost table as docs/ahbm.md shows it (`make cost MARKDOWN=1`)."""
    out = ["| context | B | launch (cycles) | / KV-read roofline | layer latency | tokens/s, 80 layers | "
           "cube roofline tokens/s | H100 HBM roofline tokens/s | energy a token | bank / FMA / IPCQ / conversions | "
           "simulated in |", "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|"]
    for c in costs:
        w, pj = c.work, c.pj_per_token
        share = " / ".join(_pct(x) for x in c.shares.values())
        out.append(f"| {w.context:,} | {w.b} | {w.latency_cycles:,} | {w.latency_cycles / w.roofline_cycles:.3f} | "
                   f"{1e6 * c.layer_s:.1f} us | {c.tokens_per_s:.1f} | {c.roofline_tokens_per_s:.1f} | "
                   f"{c.gpu_tokens_per_s:.1f} | {pj / 1e9:.0f} mJ | {share} | {w.sim_elapsed_s:,.0f} s |")
    return "\n".join(out)


def token_lines(c: TokenCost, tech: Tech) -> list[str]:
    """One layer run's cost in two lines (the layer report's tail; `make cost` gives the table)."""
    pj = c.pj_per_token
    share = ", ".join(f"{e} {100 * x:.1f}%" for e, x in c.shares.items())
    return [f"what a token costs (priced in {tech.name}, PE clock {tech.clock_hz.value / 1e9:.2f} GHz; "
            f"make cost): layer {1e6 * c.layer_s:.2f} us, {c.tokens_per_s:.1f} tokens/s for {LAYERS} layers' attention "
            f"(cube KV-read roofline {c.roofline_tokens_per_s:.1f}, H100 HBM roofline {c.gpu_tokens_per_s:.1f})",
            f"  {pj / 1e9:.2f} mJ a token in charged events ({share}); exponentials, SRAM and static power not charged"]


def plot_costs(costs: Sequence[TokenCost], path: Path) -> Path:
    """tokens/s and energy per token against context, one line per B, the rooflines dashed."""
    from tb.perf.figures import pyplot, save_png

    plt = pyplot()
    fig, (ax_t, ax_e) = plt.subplots(1, 2, figsize=(11, 4.2))
    for i, b in enumerate(sorted({c.work.b for c in costs})):
        pts = [c for c in costs if c.work.b == b]
        ctx = [c.work.context for c in pts]
        colour = f"C{i}"
        ax_t.plot(ctx, [c.tokens_per_s for c in pts], "o-", color=colour, label=f"B={b} simulated")
        ax_t.plot(ctx, [c.roofline_tokens_per_s for c in pts], "--", color=colour, alpha=0.6,
                  label=f"B={b} cube KV-read roofline")
        ax_t.plot(ctx, [c.gpu_tokens_per_s for c in pts], ":", color=colour, alpha=0.8,
                  label=f"B={b} H100 HBM roofline, same KV bytes")
        ax_e.plot(ctx, [c.pj_per_token / 1e9 for c in pts], "o-", color=colour, label=f"B={b}")
    for ax in (ax_t, ax_e):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("context (tokens)")
        ax.grid(True, which="both", alpha=0.3)
    ax_t.set_ylabel(f"tokens/s, {LAYERS} layers' decode attention")
    ax_e.set_ylabel("energy per token (mJ = 1e9 pJ), charged events")
    ax_t.legend(fontsize=7)
    ax_e.legend(fontsize=8)
    ax_t.set_title("Llama3-70B decode attention on AHBM (8 CUBEs a layer)", fontsize=9)
    ax_e.set_title("bank reads + IPCQ + fp32 multiply-adds + bf16 conversions", fontsize=9)
    return save_png(fig, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.ahbm.cost", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--records", type=Path, default=RECORDS, help="folder of layer records (default %(default)s)")
    ap.add_argument("--plot", type=Path, default=None, help=f"write the plot here (e.g. {PLOT.relative_to(ROOT)})")
    ap.add_argument("--markdown", action="store_true", help="print the table as docs/ahbm.md shows it")
    ap.add_argument("--clock-ghz", type=float, default=None,
                    help="price at another PE clock (the bank bandwidth scales with it); default the HBM3 cube's")
    args = ap.parse_args(argv)
    tech = hbm3_cube()
    if args.clock_ghz is not None:
        if not 0.1 <= args.clock_ghz <= 10:
            print(f"refused: --clock-ghz {args.clock_ghz}: give 0.1..10 GHz", file=sys.stderr)
            return 2
        tech = at_clock(tech, args.clock_ghz * 1e9)
    try:
        costs = load_costs(args.records, tech)
    except ValueError as exc:
        print(f"refused: {exc}", file=sys.stderr)
        return 2
    print(markdown_costs(costs) if args.markdown else format_costs(costs, tech))
    if args.plot:
        print(f"plot: {plot_costs(costs, args.plot)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
