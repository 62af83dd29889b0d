"""GTKWave save files (.gtkw) for a bench's FST, built from the bench table.

tb.run.runner calls :func:`write_save_file` before each test when waves are on, so
every sim_build/<bench>/<test>/waves.fst has a waves.gtkw beside it; `make
waves BENCH=name` (tb.run.waves) opens the pair.

pyvcd's :class:`vcd.gtkw.GTKWSave` writes the file (directives, display flags,
groups, aliases, the translate filter); this module only decides what to show.
Layout of the save file:

* the clock, reset and the bench's status (mon_err, and for the endpoint-bank
  harnesses cycle, inj_count, cap_count, done, stalled) at the top;
* mesh and router benches: one collapsible group per router, and inside it one
  group per link ("in N  from router (1,1)", "in L  from endpoint (2,1)",
  "out L  to endpoint (2,1)", ...). A link's traces are valid, busy, each flit
  header field as its own bit range of the data vector (the type field named
  through a translate filter file of FlitType names), then the full data;
* the AHBM CUBE: one group per PE with its engine, DMA and IPCQ state;
* the fifo bench (no mesh shape): the FIFO's ports and fill count.

Every link is shown through the one noc_link_mon that watches it (data ports
of the RTL are unpacked arrays, which Icarus does not dump; the monitor's
`data` port is a plain vector): inter-router and endpoint->router links at the
receiving router's `g_in[p].u_mon`, router->endpoint links at the sending
router's `g_arb[o].g_omon.u_mon`. Field positions come from models.noc.flit.FIELDS
and the geometry from models.noc.mesh.MeshGeometry, so nothing here repeats the
flit layout or the port numbering.

Trace names GTKWave resolves on an Icarus FST (checked with GTKWave 3.3.118):
`top.path.sig[287:0]` for a dumped vector (the name carries its declared
range), `(i)top.path.sig[287:0]` for its bit 287-i, and `#{name} b0 b1 ...`
for a vector made of bits b0 (MSB) .. bn. A field is therefore passed to
GTKWSave.trace as `#{...data[287:284]} (0)...data[287:0] (1)... (2)... (3)...`;
the plain `sig[287:284]` is NOT resolved on an FST (GTKWave looks for
bit-blasted `sig[287]` facilities, which an FST does not have) and is silently
dropped. GTKWSave.trace_combined is not used: it wraps the same line in a
group_begin / group_end pair, a form not checked against these dumps.
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Collection, Iterable

from vcd.gtkw import GTKWSave

from models.noc.flit import FIELDS, FLIT_WIDTH, FlitType
from models.noc.mesh import Coord, MeshGeometry, Port

if TYPE_CHECKING:
    from tb.run.benches import Bench

# Radix of a trace, as GTKWSave's `datafmt` (every trace is right-justified, GTKWSave's default).
BIT, HEX, DEC = "bin", "hex", "dec"

# (name, width, radix) of a group of plain traces below one hierarchy prefix.
Rows = Iterable[tuple[str, int, str]]

# Header fields shown as their own traces, MSB first, with their radix.
# "rsvd" is left out (always zero in a legal flit); "payload" is in the full data.
HEADER_TRACES: tuple[tuple[str, str], ...] = (
    ("dst_x", DEC), ("dst_y", DEC), ("src_x", DEC), ("src_y", DEC),
    ("type", HEX), ("txn", HEX), ("last", BIT),
)
TYPE_FIELD = "type"  # the header field shown through the FlitType translate filter

PORT_NAMES = {p: p.name for p in Port}  # N E S W L, index = RTL port number

# Status signals of the endpoint-bank harnesses, below <top>.u_bank.
BANK_STATUS: tuple[tuple[str, int, str], ...] = (
    ("cycle", 32, DEC), ("inj_count", 32, DEC), ("cap_count", 32, DEC),
    ("done", 1, BIT), ("stalled", 1, BIT),
)

# Ports of the fifo bench, below <top>.
FIFO_PORTS: tuple[tuple[str, int, str], ...] = (
    ("push", 1, BIT), ("full", 1, BIT), ("din", FLIT_WIDTH, HEX),
    ("pop", 1, BIT), ("empty", 1, BIT), ("dout", FLIT_WIDTH, HEX),
)

# Harness tops whose hierarchy this module knows (see _router_path).
MESH_TOPS = ("mesh_harness",)
MACHINE_TOP_SUFFIX = "_harness"  # tb/system/machine_top.py names a machine's bench top <machine>_harness
ROUTER_TOPS = ("router_harness",)
FIFO_TOPS = ("fifo_harness",)
CUBE_TOPS = ("ahbm_cube",)

# Per-PE traces of the AHBM CUBE, below <top>.g_pe[p].u_pe.u_core.
PE_TRACES: tuple[tuple[str, int, str], ...] = (
    ("e_st", 4, DEC),            # engine state (pe_engine.v E_*)
    ("pf_st", 3, DEC),           # DMA front-end state (PF_*)
    ("cmd_done", 32, DEC), ("cmdq_free", 8, DEC), ("fault_code", 8, HEX),
    ("dma_req_valid", 1, BIT), ("dma_req_buf", 4, DEC),
    ("dma_out_valid", 1, BIT), ("dma_out_buf", 4, DEC),
    ("push_valid", 4, BIT), ("push_ready", 4, BIT),
    ("pop_valid", 4, BIT), ("pop_ready", 4, BIT), ("pop_avail", 4, BIT),
    ("tx_act", 1, BIT), ("rx_act", 1, BIT),
    ("cnt_comp", 32, DEC), ("cnt_push", 32, DEC), ("cnt_pop", 32, DEC),
)


def _vec(path: str, width: int) -> str:
    """GTKWave's name of a dumped `[width-1:0]` vector (the loader appends the range)."""
    return f"{path}[{width - 1}:0]" if width > 1 else path


def bit_trace(path: str, width: int, bit: int) -> str:
    """Trace name of bit `bit` of the dumped `[width-1:0]` vector `path`.

    GTKWave 3.3 does not resolve `sig[3]` or `sig[7:4]` on an FST vector (it
    looks for bit-blasted facilities, which an FST from Icarus does not have);
    it resolves `(i)sig[7:0]`, bit i counted from the declared MSB.
    """
    if width == 1:
        return path
    return f"({width - 1 - bit}){_vec(path, width)}"


def field_trace(data_base: str, name: str, width: int = FLIT_WIDTH) -> str:
    """Trace name showing flit field `name` of the `[width-1:0]` vector `data_base`.

    A one-bit field is a single `(i)vec` bit; a wider one is GTKWave's bit
    vector `#{name} bit bit ...` (MSB first), named `data_base[msb:lsb]` so
    the real range shows when the alias is removed.
    """
    spec = FIELDS[name]
    bits = [bit_trace(data_base, width, b) for b in range(spec.msb, spec.lsb - 1, -1)]
    if len(bits) == 1:
        return bits[0]
    return f"#{{{data_base}[{spec.msb}:{spec.lsb}]}} " + " ".join(bits)


# ------------------------------------------------------------ links
@dataclass(frozen=True)
class Link:
    """One link seen by one noc_link_mon instance of a router."""

    router: Coord        # the router this monitor sits in
    direction: str       # "in" (into the router) or "out" (router -> endpoint)
    port: Port           # the router's port the link uses
    peer: str            # "router (x,y)" or "endpoint (x,y)"
    monitor: str | None  # hierarchical path of the noc_link_mon, None if unmonitored
    valid: str           # trace names of valid and busy (monitor ports, or router ports)
    busy: str

    @property
    def label(self) -> str:
        arrow = "from" if self.direction == "in" else "to"
        return f"{self.direction} {PORT_NAMES[self.port]}  {arrow} {self.peer}"

    @property
    def data_base(self) -> str | None:
        """Hierarchical name of the monitor's data port, or None when unmonitored."""
        return f"{self.monitor}.data" if self.monitor else None

    @property
    def data(self) -> str | None:
        """Trace name of the full data vector, or None when unmonitored."""
        return _vec(self.data_base, FLIT_WIDTH) if self.data_base else None


def _router_path(top: str, xy: Coord) -> str:
    if top in MESH_TOPS:
        return f"{top}.u_dut.g_y[{xy[1]}].g_x[{xy[0]}].u_router"
    if top in ROUTER_TOPS:
        return f"{top}.u_dut"
    if top.endswith(MACHINE_TOP_SUFFIX):  # a generated machine harness: the mesh is u_dut.u_mesh
        return f"{top}.u_dut.u_mesh.g_y[{xy[1]}].g_x[{xy[0]}].u_router"
    raise ValueError(f"no router layout known for top '{top}'")


def router_links(geom: MeshGeometry, top: str, xy: Coord, port_edge: int = 0b11111) -> list[Link]:
    """The links of router `xy`, each named by the monitor that watches it.

    Links into the router: every port with something attached (a neighbouring
    router, or a present endpoint). Links out of the router: only those into
    an endpoint (Local, and present edge endpoints); a link into a neighbouring
    router is shown once, as that neighbour's input. `port_edge` is the
    router_harness PORT_EDGE override: a port with its bit clear is treated by
    the router as facing a router and has no output monitor, so its output is
    shown as valid/busy only.
    """
    rpath = _router_path(top, xy)
    ins: list[Link] = []
    outs: list[Link] = []
    for port in Port:
        if port == Port.L:
            peer_xy = xy
            peer_is_router = False
        else:
            peer_xy = geom.neighbour(xy, port)
            peer_is_router = geom.is_router(peer_xy)
            if not peer_is_router and not geom.present(geom.port_index(peer_xy)):
                continue  # tied off: nothing attached, the link never moves
        peer = f"{'router' if peer_is_router else 'endpoint'} ({peer_xy[0]},{peer_xy[1]})"
        mon = f"{rpath}.g_in[{int(port)}].u_mon"
        ins.append(Link(xy, "in", port, peer, mon, f"{mon}.valid", f"{mon}.busy"))
        if peer_is_router:
            continue
        if port == Port.L or (port_edge >> int(port)) & 1:
            mon = f"{rpath}.g_arb[{int(port)}].g_omon.u_mon"
            outs.append(Link(xy, "out", port, peer, mon, f"{mon}.valid", f"{mon}.busy"))
        else:
            outs.append(Link(xy, "out", port, peer, None,
                             bit_trace(f"{rpath}.out_valid", 5, int(port)),
                             bit_trace(f"{rpath}.out_busy", 5, int(port))))
    return ins + outs


def bench_links(bench: Bench) -> list[Link]:
    """Every link of a mesh or router bench, router by router (empty for others)."""
    if bench.shape is None or (bench.toplevel not in MESH_TOPS + ROUTER_TOPS and not bench.machine):
        return []
    shape = bench.shape
    geom = MeshGeometry(shape.nx, shape.ny, shape.edge_mask)
    port_edge = int(bench.parameters.get("PORT_EDGE", 0b11111)) if bench.toplevel in ROUTER_TOPS else 0b11111
    links: list[Link] = []
    for xy in geom.routers():
        links.extend(router_links(geom, bench.toplevel, xy, port_edge))
    return links


# ------------------------------------------------------------ writer
@dataclass(frozen=True)
class View:
    """Initial state of the GTKWave window (times in the dump's unit, ps here).

    `zoom` is GTKWave's zoom exponent: each step of -1 doubles the time on
    screen (with a 1 ps dump unit, -16 shows about 350 ns in a 1600-pixel
    window); None keeps GTKWave's default. `size` is the window size in pixels
    (None: GTKWave's default); `tree` shows the signal search tree (SST).
    """

    start: int = 0
    zoom: float | None = None
    marker: int = -1
    size: tuple[int, int] | None = None
    tree: bool = True


# What a save file opens on unless told otherwise: a window that fits most
# screens, showing reset and the first ~50 clock cycles (1 ps dump unit).
DEFAULT_VIEW = View(start=0, zoom=-17.0, size=(1400, 900))


def type_filter_text() -> str:
    """GTKWave translate-filter file: type code (as GTKWave shows it, upper-case hex) -> FlitType name.

    Written here rather than with vcd.gtkw.make_translation_filter, which
    prints hex digits in lower case (ERROR would be `f`, not GTKWave's `F`).
    """
    return "".join(f"{int(t):X} {t.name}\n" for t in FlitType)


def _fifo_count_width(bench: Bench) -> int:
    depth = int(bench.parameters.get("DEPTH", 4))
    aw = 1 if depth <= 2 else (depth - 1).bit_length()
    return aw + 1


def _header(save: GTKWSave, bench: Bench, fst_path: Path, gtkw_path: Path | None, view: View) -> None:
    """Dump file, window and SST settings, before any trace."""
    save.comment(f"GTKWave save file for bench '{bench.name}' (top {bench.toplevel}), "
                 "written by tb/run/gtkw.py with pyvcd's vcd.gtkw.GTKWSave",
                 "open with: gtkwave <dumpfile> <this file>   (or: make waves BENCH=<bench>)")
    # Path.resolve (not GTKWSave's os.path.abspath): the same real path tb.run.waves and the runner use.
    save.dumpfile(str(Path(fst_path).resolve()), abspath=False)
    if gtkw_path is not None:
        save.savefile(str(Path(gtkw_path).resolve()), abspath=False)
    save.timestart(view.start)
    if view.size is not None:
        save.size(*view.size)
        save.pos(-1, -1)
    if view.zoom is not None:
        save.zoom_markers(view.zoom, view.marker)
    save.treeopen(f"{bench.toplevel}.")
    # GTKWSave has no method for these two directives; they go to the same stream, in order.
    print(f"[sst_width] {220 if view.tree else 1}", file=save.file)
    save.signals_width(300)
    save.sst_expanded(view.tree)
    print("[sst_vpaned_height] 300", file=save.file)


def _traces(save: GTKWSave, prefix: str, rows: Rows) -> None:
    """One trace per (name, width, radix) row, the signal `prefix.name`, shown as `name`."""
    for name, width, fmt in rows:
        save.trace(_vec(f"{prefix}.{name}", width), alias=name, datafmt=fmt)


def _link(save: GTKWSave, link: Link, type_filter: str | None) -> None:
    """valid, busy, the header fields (type through `type_filter`), then the full data."""
    save.trace(link.valid, alias="valid", datafmt=BIT)
    save.trace(link.busy, alias="busy", datafmt=BIT)
    if link.data_base is None or link.data is None:
        return  # no monitor: the data is an undumped array element
    for name, fmt in HEADER_TRACES:
        save.trace(field_trace(link.data_base, name), alias=name, datafmt=fmt,
                   translate_filter_file=type_filter if name == TYPE_FIELD else None)
    save.trace(link.data, alias="data", datafmt=HEX)


def save_file_text(
    bench: Bench,
    fst_path: Path,
    gtkw_path: Path | None = None,
    *,
    open_routers: bool | Collection[Coord] = True,
    open_links: bool = True,
    view: View | None = None,
    type_filter: Path | None = None,
) -> str:
    """The text of a save file for `bench` (see write_save_file for the arguments)."""
    top = bench.toplevel
    buf = io.StringIO()
    save = GTKWSave(buf)
    _header(save, bench, fst_path, gtkw_path, view or DEFAULT_VIEW)
    filter_name = str(Path(type_filter).resolve()) if type_filter is not None else None

    save.trace(f"{top}.u_clk.clk", alias="clk", datafmt=BIT)
    save.trace(f"{top}.u_clk.resetn", alias="resetn", datafmt=BIT)
    save.trace(f"{top}.mon_err", alias="mon_err", datafmt=BIT)
    if top in MESH_TOPS + ROUTER_TOPS:
        _traces(save, f"{top}.u_bank", BANK_STATUS)

    links = bench_links(bench)
    routers = list(dict.fromkeys(lk.router for lk in links))
    for xy in routers:
        r_open = open_routers if isinstance(open_routers, bool) else xy in open_routers
        with save.group(f"router ({xy[0]},{xy[1]})", closed=not r_open):
            for lk in (lk for lk in links if lk.router == xy):
                with save.group(lk.label, closed=not open_links):
                    _link(save, lk, filter_name)

    if top in CUBE_TOPS:
        n_pe = int(bench.parameters.get("R", 2)) * int(bench.parameters.get("C", 4))
        for pe in range(n_pe):
            with save.group(f"PE {pe}"):
                _traces(save, f"{top}.g_pe[{pe}].u_pe.u_core", PE_TRACES)

    if not links and top in FIFO_TOPS:
        _traces(save, top, FIFO_PORTS)
        _traces(save, f"{top}.u_dut", (("count", _fifo_count_width(bench), DEC),))
    return buf.getvalue()


def write_save_file(
    bench: Bench,
    fst_path: Path,
    gtkw_path: Path,
    *,
    open_routers: bool | Collection[Coord] = True,
    open_links: bool = True,
    view: View | None = None,
) -> None:
    """Write a GTKWave save file for `bench`'s dump `fst_path` to `gtkw_path`.

    Every group starts expanded, as in docs/benches.md's picture (GTKWave flags
    @800200 / @1000200 around it; a collapsed one is @c00200 / @1401200),
    unless `open_routers` says otherwise (False, or the set of (x, y) to
    expand) or `open_links` is False for the link groups. `view` sets the
    window size, first time and zoom (default DEFAULT_VIEW). A translate
    filter that names flit types is written beside the save file
    (<gtkw stem>.types.txt) and used by every `type` trace.
    """
    gtkw_path = Path(gtkw_path)
    gtkw_path.parent.mkdir(parents=True, exist_ok=True)
    type_filter = gtkw_path.with_name(gtkw_path.stem + ".types.txt")
    type_filter.write_text(type_filter_text())
    gtkw_path.write_text(save_file_text(
        bench, Path(fst_path), gtkw_path, open_routers=open_routers, open_links=open_links,
        view=view, type_filter=type_filter))
