"""Log-sum-exp reduction tree (ADR-001 §4) mapped onto an R x C PE mesh.

Logical tree over group ranks 0..N-1 (N a power of two): at level k
(k = 0..log2(N)-1) rank r with (r+1) % 2^(k+1) == 0 receives from rank
r - 2^k.  N=8: level 0 0->1 2->3 4->5 6->7, level 1 1->3 5->7, level 2 3->7;
root = N-1, depth = log2 N, N-1 pushes.  A node merges its children in level
order (lowest level first): acc = local; acc = merge(acc, child) ...  That
order is fixed so the result is bit-exact whatever the IPCQ arrival order.

Mesh: row 0 is north, column 0 is west; physical PE id = row*C + col.  A tree
edge must join 4-neighbours; the direction names the step from a node to the
peer (N = row-1, S = row+1, E = col+1, W = col-1).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Node:
    rank: int
    coord: tuple[int, int]
    pe: int
    parent: int | None
    level: int | None              # level of the edge to the parent
    children: list[int] = field(default_factory=list)   # level order
    dir_to_parent: str | None = None
    dir_to_children: list[str] = field(default_factory=list)


@dataclass
class Tree:
    n: int
    rows: int
    cols: int
    nodes: list[Node]

    @property
    def root(self) -> int:
        return self.n - 1

    @property
    def depth(self) -> int:
        return self.n.bit_length() - 1

    @property
    def pushes(self) -> int:
        return sum(1 for nd in self.nodes if nd.parent is not None)

    def edges(self) -> list[tuple[int, int, int]]:
        """(child, parent, level), level ascending then child ascending."""
        return sorted(((nd.rank, nd.parent, nd.level) for nd in self.nodes
                       if nd.parent is not None), key=lambda e: (e[2], e[0]))


def tree_edges(n: int) -> list[tuple[int, int, int]]:
    if n < 1 or n & (n - 1):
        raise ValueError(f"N must be a power of two, got {n}")
    out = []
    k = 0
    while (1 << k) < n:
        step = 1 << k
        for r in range(n):
            if (r + 1) % (2 * step) == 0:
                out.append((r - step, r, k))
        k += 1
    return out


def direction(a: tuple[int, int], b: tuple[int, int]) -> str | None:
    dr, dc = b[0] - a[0], b[1] - a[1]
    return {(-1, 0): "N", (1, 0): "S", (0, 1): "E", (0, -1): "W"}.get((dr, dc))


def check_mapping(n: int, coords: list[tuple[int, int]], rows: int, cols: int) -> list[str]:
    """Failures of a rank -> (row, col) map: off-mesh, duplicate, non-neighbour edge."""
    fails = []
    if len(coords) != n:
        return [f"need {n} coordinates, got {len(coords)}"]
    for r, (y, x) in enumerate(coords):
        if not (0 <= y < rows and 0 <= x < cols):
            fails.append(f"rank {r} at {(y, x)} is off the {rows}x{cols} mesh")
    if len(set(coords)) != n:
        fails.append("two ranks share a PE")
    for c, p, lv in tree_edges(n):
        if direction(coords[c], coords[p]) is None:
            fails.append(f"edge {c}->{p} (level {lv}) joins {coords[c]} and {coords[p]}: "
                         f"not a neighbour hop")
    return fails


def find_mapping(n: int, rows: int, cols: int) -> list[tuple[int, int]]:
    """Deterministic backtracking search for a neighbour-only embedding."""
    edges = tree_edges(n)
    adj: dict[int, list[int]] = {r: [] for r in range(n)}
    for c, p, _ in edges:
        adj[c].append(p)
        adj[p].append(c)
    cells = [(y, x) for y in range(rows) for x in range(cols)]
    coords: dict[int, tuple[int, int]] = {}
    used: set[tuple[int, int]] = set()

    def go(r: int) -> bool:
        if r == n:
            return True
        for cell in cells:
            if cell in used:
                continue
            if all(direction(cell, coords[o]) for o in adj[r] if o in coords):
                coords[r] = cell
                used.add(cell)
                if go(r + 1):
                    return True
                del coords[r]
                used.discard(cell)
        return False

    if n > rows * cols or not go(0):
        raise ValueError(f"no neighbour-only mapping of N={n} onto {rows}x{cols}")
    return [coords[r] for r in range(n)]


def build_tree(n: int, rows: int = 2, cols: int = 4,
               coords: list[tuple[int, int]] | None = None) -> Tree:
    """Tree with a mapping (given or found); refuses a non-neighbour edge."""
    coords = find_mapping(n, rows, cols) if coords is None else list(coords)
    fails = check_mapping(n, coords, rows, cols)
    if fails:
        raise ValueError("; ".join(fails))
    nodes = [Node(r, coords[r], coords[r][0] * cols + coords[r][1], None, None) for r in range(n)]
    for c, p, lv in tree_edges(n):
        nodes[c].parent, nodes[c].level = p, lv
        nodes[c].dir_to_parent = direction(coords[c], coords[p])
        nodes[p].children.append(c)
        nodes[p].dir_to_children.append(direction(coords[p], coords[c]))
    return Tree(n, rows, cols, nodes)


def reduce(tree: Tree, states: list, merge_fn):
    """Run the tree: returns (root state, pushes).  Children are merged in
    level order at every node, recursively (a node pushes after its subtree)."""
    pushes = 0

    def node_value(r: int):
        nonlocal pushes
        acc = states[r]
        for c in tree.nodes[r].children:
            acc = merge_fn(acc, node_value(c))
            pushes += 1
        return acc

    return node_value(tree.root), pushes
