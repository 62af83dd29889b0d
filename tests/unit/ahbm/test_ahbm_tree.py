"""AHBM reduction tree on a PE mesh: neighbour-only edges, depth, pushes."""

import pytest

from models.ahbm import tree

STEP = {"N": (-1, 0), "S": (1, 0), "E": (0, 1), "W": (0, -1)}


@pytest.mark.parametrize("n", [1, 2, 4, 8])
@pytest.mark.parametrize("rows,cols", [(2, 4), (4, 2), (1, 8), (3, 3)])
def test_tree_mapping_one_hop(n, rows, cols):
    if (rows, cols) == (1, 8) and n == 8:
        # root 7 has three children: impossible on a line, must be refused
        with pytest.raises(ValueError):
            tree.build_tree(n, rows, cols)
        return
    t = tree.build_tree(n, rows, cols)
    assert t.root == n - 1 and t.nodes[t.root].parent is None
    assert t.depth == {1: 0, 2: 1, 4: 2, 8: 3}[n]
    assert t.pushes == n - 1 and len(t.edges()) == n - 1
    assert len({nd.pe for nd in t.nodes}) == n
    for nd in t.nodes:
        assert nd.pe == nd.coord[0] * cols + nd.coord[1]
        if nd.parent is not None:
            par = t.nodes[nd.parent]
            dy, dx = STEP[nd.dir_to_parent]
            assert (nd.coord[0] + dy, nd.coord[1] + dx) == par.coord
            assert nd.rank in par.children
        for c, dname in zip(nd.children, nd.dir_to_children):
            dy, dx = STEP[dname]
            assert (nd.coord[0] + dy, nd.coord[1] + dx) == t.nodes[c].coord
        lv = [t.nodes[c].level for c in nd.children]
        assert lv == sorted(lv)
    # longest root path = depth
    def height(r):
        return 0 if not t.nodes[r].children else 1 + max(height(c) for c in t.nodes[r].children)
    assert height(t.root) == t.depth


def test_adr_pairs_for_8():
    assert tree.tree_edges(8) == [(0, 1, 0), (2, 3, 0), (4, 5, 0), (6, 7, 0),
                                  (1, 3, 1), (5, 7, 1), (3, 7, 2)]
    t = tree.build_tree(8, 2, 4)
    assert t.nodes[7].children == [6, 5, 3]


def test_non_neighbour_mapping_refused():
    row_major = [(r // 4, r % 4) for r in range(8)]      # 3->7 ok, 1->3 is 2 hops
    fails = tree.check_mapping(8, row_major, 2, 4)
    assert any("1->3" in f for f in fails)
    with pytest.raises(ValueError):
        tree.build_tree(8, 2, 4, coords=row_major)
    assert tree.check_mapping(2, [(0, 0), (1, 1)], 2, 2)   # diagonal is not a hop
    assert tree.check_mapping(2, [(0, 0), (0, 0)], 2, 2)   # shared PE
    assert tree.check_mapping(2, [(0, 0), (0, 5)], 2, 2)   # off mesh
    with pytest.raises(ValueError):
        tree.build_tree(8, 2, 2)                           # too small
    with pytest.raises(ValueError):
        tree.tree_edges(6)


def test_reduce_order_and_push_count():
    t = tree.build_tree(8, 2, 4)
    log = []
    out, pushes = tree.reduce(t, [str(r) for r in range(8)],
                              lambda a, b: log.append((a, b)) or f"({a}+{b})")
    assert pushes == 7
    assert out == "(((7+6)+(5+4))+((3+2)+(1+0)))"
