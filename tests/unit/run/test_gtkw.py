"""Unit tests for tb.run.gtkw: the GTKWave save file names every link once, with the
flit header fields as bit ranges taken from models.noc.flit.FIELDS.

Expected monitors are derived here from the RTL's rules (noc_mesh.v edge ring
numbering, noc_router.v monitor placement), not from tb.run.gtkw's own helpers.
Pure Python: nothing is simulated and GTKWave is not needed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from models.noc.flit import FIELDS, FLIT_WIDTH, FlitType
from tb.run.benches import BENCHES, Bench, MeshShape
from tb.run.gtkw import save_file_text, type_filter_text, write_save_file

TR_GRP_BEGIN = 0x800000
TR_GRP_END = 0x1000000
TR_CLOSED = 0x400000
N, E, S, W, L = range(5)
SHOWN_FIELDS = ("dst_x", "dst_y", "src_x", "src_y", "type", "txn", "last")


def _mesh_bench(name: str, nx: int, ny: int, edge_mask: int) -> Bench:
    return Bench(
        name=name, level="mesh", toplevel="mesh_harness", sources=(), test_module="tb.noc.test_mesh",
        parameters={"NX": nx, "NY": ny, "EDGE_MASK": edge_mask}, shape=MeshShape(nx, ny, edge_mask),
    )


MESH_2X2 = _mesh_bench("m2x2", 2, 2, 0)
MESH_3X2_EDGE = _mesh_bench("m3x2e", 3, 2, (1 << (2 * 3 + 2 * 2)) - 1)


def expected_monitors(nx: int, ny: int, edge_mask: int) -> set[str]:
    """Hierarchical names of the noc_link_mon of every link of the mesh."""
    def edge_present(x: int, y: int, port: int) -> bool:
        # ring position (noc_mesh.v): north x-1, south NX+x-1, west 2NX+y-1, east 2NX+NY+y-1
        pos = {N: x - 1, S: nx + x - 1, W: 2 * nx + y - 1, E: 2 * nx + ny + y - 1}[port]
        return bool((edge_mask >> pos) & 1)

    mons = set()
    for y in range(1, ny + 1):
        for x in range(1, nx + 1):
            r = f"mesh_harness.u_dut.g_y[{y}].g_x[{x}].u_router"
            mons.add(f"{r}.g_in[{L}].u_mon")
            mons.add(f"{r}.g_arb[{L}].g_omon.u_mon")
            for port, on_edge in ((N, y == 1), (S, y == ny), (W, x == 1), (E, x == nx)):
                if not on_edge:
                    mons.add(f"{r}.g_in[{port}].u_mon")  # from the neighbouring router
                elif edge_present(x, y, port):
                    mons.add(f"{r}.g_in[{port}].u_mon")
                    mons.add(f"{r}.g_arb[{port}].g_omon.u_mon")
    return mons


def _flags_and_traces(text: str) -> list[tuple[int, str]]:
    """(flags in force, line) for every trace and group line of a save file."""
    flags, out = 0x20, []
    for line in text.splitlines():
        if line.startswith("@"):
            flags = int(line[1:], 16)
        elif line and line[0] not in "[*^":
            out.append((flags, line))
    return out


@pytest.mark.parametrize(
    "bench,links",
    [(MESH_2X2, 2 * 1 * 2 + 2 * 2 * 1 + 4 + 4), (MESH_3X2_EDGE, 2 * 2 * 2 + 2 * 3 * 1 + 6 + 6 + 10 + 10)],
    ids=["2x2", "3x2_edges"],
)
def test_every_link_monitor_named_exactly_once(bench: Bench, links: int) -> None:
    shape = bench.shape
    text = save_file_text(bench, Path("/tmp/some/run/waves.fst"))
    expected = expected_monitors(shape.nx, shape.ny, shape.edge_mask)
    assert len(expected) == links
    valid_lines = re.findall(r"^\+\{valid\} (\S+)\.valid$", text, re.M)
    busy_lines = re.findall(r"^\+\{busy\} (\S+)\.busy$", text, re.M)
    data_lines = re.findall(rf"^\+{{data}} (\S+)\.data\[{FLIT_WIDTH - 1}:0\]$", text, re.M)
    for found in (valid_lines, busy_lines, data_lines):
        assert sorted(found) == sorted(expected)  # each monitor once, and nothing else


@pytest.mark.parametrize("bench", [MESH_2X2, MESH_3X2_EDGE], ids=["2x2", "3x2_edges"])
def test_header_fields_are_bit_ranges_from_fields_table(bench: Bench) -> None:
    text = save_file_text(bench, Path("/tmp/w.fst"))
    monitors = expected_monitors(bench.shape.nx, bench.shape.ny, bench.shape.edge_mask)
    top = FLIT_WIDTH - 1
    for mon in monitors:
        vec = f"{mon}.data[{top}:0]"
        for name in SHOWN_FIELDS:
            spec = FIELDS[name]
            # GTKWave's (i)vec selects bit top-i of vec; MSB first.
            bits = " ".join(f"({top - b}){vec}" for b in range(spec.msb, spec.lsb - 1, -1))
            if spec.msb == spec.lsb:
                line = f"+{{{name}}} {bits}"
            else:
                line = f"+{{{name}}} #{{{mon}.data[{spec.msb}:{spec.lsb}]}} {bits}"
            assert text.count(line + "\n") == 1, f"missing or repeated {name} trace of {mon}"


def test_fields_follow_the_flit_table_not_a_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Moving a field in models.noc.flit.FIELDS moves its trace: nothing is hard-coded."""
    import models.noc.flit
    import tb.run.gtkw

    moved = dict(models.noc.flit.FIELDS)
    moved["txn"] = models.noc.flit.FieldSpec(100, 93)
    monkeypatch.setattr(tb.run.gtkw, "FIELDS", moved)
    text = save_file_text(MESH_2X2, Path("/tmp/w.fst"))
    assert re.search(r"\+\{txn\} #\{\S+\.data\[100:93\]\} \(187\)\S+ ", text)
    assert "[267:260]" not in text


def test_groups_nest_router_then_link() -> None:
    text = save_file_text(MESH_3X2_EDGE, Path("/tmp/w.fst"), open_routers={(2, 1)})
    stack: list[str] = []
    routers, link_groups = [], 0
    for flags, line in _flags_and_traces(text):
        if flags & TR_GRP_BEGIN:
            stack.append(line)
            if len(stack) == 1:
                routers.append((line, not flags & TR_CLOSED))
            else:
                link_groups += 1
                assert re.fullmatch(r"-(in|out) [NESWL]  (from|to) (router|endpoint) \(\d+,\d+\)", line)
        elif flags & TR_GRP_END:
            assert stack.pop() == line
        elif stack:
            assert len(stack) == 2, f"trace outside a link group: {line}"
    assert not stack
    assert [r for r, _ in routers] == [f"-router ({x},{y})" for y in (1, 2) for x in (1, 2, 3)]
    assert [r for r, is_open in routers if is_open] == ["-router (2,1)"]
    assert link_groups == len(expected_monitors(3, 2, MESH_3X2_EDGE.shape.edge_mask))


def test_points_at_the_given_fst_and_writes_filter(tmp_path: Path) -> None:
    fst = tmp_path / "run" / "waves.fst"
    gtkw = tmp_path / "run" / "waves.gtkw"
    write_save_file(MESH_2X2, fst, gtkw)
    text = gtkw.read_text()
    assert f'[dumpfile] "{fst.resolve()}"' in text.splitlines()
    assert text.count("[dumpfile]") == 1
    flt = gtkw.with_name("waves.types.txt")
    assert flt.read_text() == type_filter_text()
    assert f"^1 {flt.resolve()}" in text.splitlines()
    assert dict(line.split() for line in flt.read_text().splitlines()) == {
        f"{int(t):X}": t.name for t in FlitType
    }
    # top of the file: clock, reset and status before the first group
    first = [line for _, line in _flags_and_traces(text)][:4]
    assert first == ["+{clk} mesh_harness.u_clk.clk", "+{resetn} mesh_harness.u_clk.resetn",
                     "+{mon_err} mesh_harness.mon_err", "+{cycle} mesh_harness.u_bank.cycle[31:0]"]


def test_router_bench_without_output_monitor_shows_valid_busy_bits() -> None:
    bench = Bench(name="rt", level="module", toplevel="router_harness", sources=(), test_module="x",
                  parameters={"PORT_EDGE": 0b11110}, shape=MeshShape(1, 1, 0xF))
    text = save_file_text(bench, Path("/tmp/w.fst"))
    assert "router_harness.u_dut.g_arb[0]" not in text  # N has no output monitor then
    assert "+{valid} (4)router_harness.u_dut.out_valid[4:0]" in text  # bit 0 = port N
    assert "+{busy} (4)router_harness.u_dut.out_busy[4:0]" in text
    for port in (E, S, W, L):
        assert f"router_harness.u_dut.g_arb[{port}].g_omon.u_mon.valid" in text
    for port in (N, E, S, W, L):
        assert f"router_harness.u_dut.g_in[{port}].u_mon.valid" in text


def test_fifo_bench_shows_its_ports() -> None:
    bench = next(b for b in BENCHES if b.toplevel == "fifo_harness")
    text = save_file_text(bench, Path("/tmp/w.fst"))
    for port in ("push", "pop", "full", "empty", "din[287:0]", "dout[287:0]"):
        assert f"fifo_harness.{port}\n" in text
    assert "-router" not in text


@pytest.mark.parametrize("bench", BENCHES, ids=lambda b: b.name)
def test_every_bench_of_the_table_gets_a_save_file(bench: Bench) -> None:
    text = save_file_text(bench, Path("/tmp/w.fst"))
    assert f"+{{clk}} {bench.toplevel}.u_clk.clk" in text
    assert text.count("\n-") % 2 == 0  # every group is closed


def test_machine_bench_save_file_shows_the_machine_mesh(tmp_path) -> None:
    """A generated machine harness: links come from u_dut.u_mesh, router by router."""
    from tb.run.benches import get_bench
    from tb.run.gtkw import bench_links

    links = bench_links(get_bench("mm_mesh_ref"))
    assert links and all(".u_dut.u_mesh.g_y[1]." in link.monitor for link in links if link.monitor)


def test_cube_bench_shows_every_pe() -> None:
    """The AHBM CUBE: one group per PE (R*C of the bench), all expanded, the engine, DMA and IPCQ
    traces under g_pe[p].u_pe.u_core."""
    from tb.run.benches import get_bench

    for name, n_pe in (("pe", 2), ("ahbm", 8)):
        text = save_file_text(get_bench(name), Path("/tmp/w.fst"))
        assert text.count("-PE ") == 2 * n_pe                     # begin and end marker of each group
        for p in range(n_pe):
            assert f"ahbm_cube.g_pe[{p}].u_pe.u_core.e_st[3:0]\n" in text
            assert f"ahbm_cube.g_pe[{p}].u_pe.u_core.pop_avail[3:0]\n" in text
        assert f"ahbm_cube.g_pe[{n_pe}]." not in text


def test_written_by_gtkwsave_with_a_group_per_router_of_a_4x4_mesh(monkeypatch: pytest.MonkeyPatch) -> None:
    """pyvcd's GTKWSave writes every trace and group (nothing is formatted beside it), and the
    4x4 mesh bench gets one expanded group per router, each holding that router's link groups."""
    import vcd.gtkw

    import tb.run.gtkw
    from tb.run.benches import get_bench

    made: list[Recording] = []

    class Recording(vcd.gtkw.GTKWSave):
        def __init__(self, savefile) -> None:
            super().__init__(savefile)
            self.traced: list[str] = []
            self.groups: list[str] = []
            made.append(self)

        def trace(self, name: str, *args, **kwargs) -> None:
            self.traced.append(name)
            super().trace(name, *args, **kwargs)

        def begin_group(self, name: str, *args, **kwargs) -> None:
            self.groups.append(name)
            super().begin_group(name, *args, **kwargs)

    monkeypatch.setattr(tb.run.gtkw, "GTKWSave", Recording)
    bench = get_bench("mesh_4x4")
    text = save_file_text(bench, Path("/tmp/w.fst"))
    (save,) = made
    head = text.splitlines()[:3]
    assert head[0] == ("[*] GTKWave save file for bench 'mesh_4x4' (top mesh_harness), "
                       "written by tb/run/gtkw.py with pyvcd's vcd.gtkw.GTKWSave")
    assert head[1].startswith("[*] open with: gtkwave")
    assert head[2] == f'[dumpfile] "{Path("/tmp/w.fst").resolve()}"'

    items = _flags_and_traces(text)
    traces = [line.split("} ", 1)[1] if line.startswith("+{") else line
              for flags, line in items if not flags & (TR_GRP_BEGIN | TR_GRP_END)]
    assert traces == save.traced  # every trace line came from GTKWSave.trace
    assert [line[1:] for flags, line in items if flags & TR_GRP_BEGIN] == save.groups

    routers = [(x, y) for y in range(1, 5) for x in range(1, 5)]
    assert [g for g in save.groups if g.startswith("router ")] == [f"router ({x},{y})" for x, y in routers]
    depth, per_router = 0, {}
    for flags, line in items:
        if flags & TR_GRP_BEGIN:
            depth += 1
            if depth == 1:
                assert not flags & TR_CLOSED  # 16 routers: all start expanded
                current = line
                per_router[current] = 0
            else:
                per_router[current] += 1
        elif flags & TR_GRP_END:
            depth -= 1
    shape = bench.shape
    assert all(n >= 3 for n in per_router.values())  # in L, out L and at least one neighbour
    assert sum(per_router.values()) == len(expected_monitors(shape.nx, shape.ny, shape.edge_mask))


# GTKWave's trace flags (its savefile.h: TR_BLANK is bit 9, TR_COLLAPSED 12, TR_CLOSED 22, TR_GRP_BEGIN 23,
# TR_GRP_END 24): an expanded group is @800200 ... @1000200, a collapsed one @c00200 ... @1401200. A flags
# line stays in force until the next one, so each group line is read with the flags in force there.
EXPANDED_BEGIN, EXPANDED_END = 0x800200, 0x1000200
COLLAPSED_BEGIN, COLLAPSED_END = 0xC00200, 0x1401200


def _group_flags(text: str) -> dict[str, list[int]]:
    """Per group name, the flags in force at its begin and at its end line."""
    out: dict[str, list[int]] = {}
    for flags, line in _flags_and_traces(text):
        if line.startswith("-"):
            out.setdefault(line[1:], []).append(flags)
    return out


@pytest.mark.parametrize("name", ["mesh_2x2", "mesh_4x4", "mesh_3x2_edge", "router", "ahbm"])
def test_every_group_of_a_written_file_opens_expanded(tmp_path: Path, name: str) -> None:
    """The file tb.run.runner writes beside each FST opens every group, as in docs/img/gtkwave_mesh_2x2.png."""
    from tb.run.benches import get_bench

    write_save_file(get_bench(name), tmp_path / "waves.fst", tmp_path / "waves.gtkw")
    groups = _group_flags((tmp_path / "waves.gtkw").read_text())
    assert groups
    for group, flags in groups.items():
        assert flags == [EXPANDED_BEGIN, EXPANDED_END] * (len(flags) // 2), group


def test_a_collapsed_group_is_written_with_the_collapsed_flags() -> None:
    """The other side of the flag check above: a router asked closed gets GTKWave's collapsed pair."""
    groups = _group_flags(save_file_text(MESH_2X2, Path("/tmp/w.fst"), open_routers={(1, 1)}))
    assert groups["router (2,1)"] == [COLLAPSED_BEGIN, COLLAPSED_END]
    assert groups["router (1,1)"] == [EXPANDED_BEGIN, EXPANDED_END]
