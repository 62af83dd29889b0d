"""A coverage database as a closure report: text (bins hit of total per model and item, the holes by
name) and a PNG heat map (one panel per item: a cross of two or more points as a grid, a point as a row)."""

from __future__ import annotations

import math
from pathlib import Path

from tb.cover.db import Database, Item

MAX_HOLES_SHOWN = 12  # per item; the rest are counted


def closure_text(database: Database, title: str = "coverage") -> str:
    """Per model: bins hit / total and percent; per item the same and its holes (the first few by name)."""
    hit, total = database.hit_total()
    lines = [f"{title}: {hit}/{total} bins hit ({_pct(hit, total)}), "
             f"{'CLOSED' if database.closed else f'{total - hit} hole(s)'}"]
    for model in database.models():
        h, t = database.hit_total(model)
        lines.append(f"  {model}: {h}/{t} ({_pct(h, t)})")
        for item in database.of(model):
            holes = item.holes
            shown = ", ".join(holes[:MAX_HOLES_SHOWN]) + (f", ... {len(holes) - MAX_HOLES_SHOWN} more"
                                                          if len(holes) > MAX_HOLES_SHOWN else "")
            lines.append(f"    {item.name.split('.', 1)[1]:<34} {item.hit:>4}/{item.total:<4}"
                         + (f"  holes: {shown}" if holes else ""))
    return "\n".join(lines)


def _pct(hit: int, total: int) -> str:
    return f"{100.0 * hit / total:.1f} %" if total else "no bins"


def grid(item: Item) -> tuple[list[str], list[str], list[list[int]]]:
    """(row labels, column labels, hits) of an item: a cross's first point down, the others across;
    a point is one row. A bin missing from the grid (a cross's ignored bins) reads -1."""
    parts = item.axes()
    rows = list(dict.fromkeys(p[0] if len(p) > 1 else "" for p in parts))
    cols = list(dict.fromkeys("/".join(p[1:]) if len(p) > 1 else p[0] for p in parts))
    cells = [[-1] * len(cols) for _ in rows]
    for p, (_, hits) in zip(parts, item.bins):
        r = rows.index(p[0] if len(p) > 1 else "")
        c = cols.index("/".join(p[1:]) if len(p) > 1 else p[0])
        cells[r][c] = hits
    return rows, cols, cells


def heat_map(database: Database, path: Path, ncol: int = 3) -> Path:
    """Every item as a panel, `ncol` a row: log10(hits + 1) in colour, holes in red, bins outside the item
    blank; a panel's height follows its rows, so a point is a strip and a cross a grid."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    items = list(database.items)
    if not items:
        raise ValueError("an empty coverage database has no heat map")
    grids = [grid(i) for i in items]
    nrow = math.ceil(len(items) / ncol)
    heights = [max(len(g[0]) for g in grids[r * ncol:(r + 1) * ncol]) + 2.5 for r in range(nrow)]
    fig, axes = plt.subplots(nrow, ncol, figsize=(6.5 * ncol, 0.22 * sum(heights) + 1),
                             gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax in axes.flat[len(items):]:
        ax.axis("off")
    for ax, item, (rows, cols, cells) in zip(axes.flat, items, grids):
        data = np.array(cells, dtype=float)
        logs = np.log10(np.where(data < 0, 0, data) + 1)
        ax.imshow(np.where(data == 0, 1.0, np.nan), cmap="Reds", vmin=0, vmax=1, aspect="auto")
        ax.imshow(np.ma.masked_where(data <= 0, logs), cmap="viridis", aspect="auto")
        ax.set_title(f"{item.name}: {item.hit}/{item.total}", fontsize=8)
        step = max(1, len(cols) // 40)
        ax.set_xticks(range(0, len(cols), step), cols[::step], rotation=90, fontsize=5)
        ax.set_yticks(range(len(rows)), rows, fontsize=5)
    fig.suptitle("coverage: log10(hits + 1) in colour; red = a hole", fontsize=10)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


__all__ = ["closure_text", "grid", "heat_map"]
