"""GTKWave save files (.gtkw) for a bench's FST, built from the bench table.

tb.runner calls :func:`write_save_file` before each test when waves are on, so
every sim_build/<bench>/<test>/waves.fst has a waves.gtkw beside it; `make
waves BENCH=name` (tb.waves) opens the pair.

Layout of the save file:

* the clock, reset and the bench's status (mon_err, and for the endpoint-bank
  harnesses cycle, inj_count, cap_count, done, stalled) at the top;
* mesh and router benches: one collapsible group per router, and inside it one
  group per link ("in N  from router (1,1)", "in L  from endpoint (2,1)",
  "out L  to endpoint (2,1)", ...). A link's traces are valid, busy, each flit
  header field as its own bit range of the data vector, then the full data;
* the fifo bench (no mesh shape): the FIFO's ports.

Every link is shown through the one noc_link_mon that watches it (data ports
of the RTL are unpacked arrays, which Icarus does not dump; the monitor's
`data` port is a plain vector): inter-router and endpoint->router links at the
receiving router's `g_in[p].u_mon`, router->endpoint links at the sending
router's `g_arb[o].g_omon.u_mon`. Field positions come from models.flit.FIELDS
and the geometry from models.mesh.MeshGeometry, so nothing here repeats the
flit layout or the port numbering.

GTKWave save-file syntax used (checked by loading in GTKWave 3.3.118 with
Icarus FST dumps):

* `top.path.sig[287:0]` a dumped vector (the name carries its declared range);
* `(i)top.path.sig[287:0]` bit 287-i of it (i counts from the declared MSB);
* `#{name} b0 b1 ...` a vector made of bits b0 (MSB) .. bn, so a field is
  `#{...data[287:284]} (0)...data[287:0] (1)... (2)... (3)...`. The plain
  `top.path.sig[287:284]` is NOT resolved on an FST (GTKWave then looks for
  bit-blasted `sig[287]` facilities, which an FST does not have) and is
  silently dropped;
* `+{alias} spec` shows a trace under the name alias;
* `@hex` display flags of the traces that follow (TR_* below);
* `-name` with group-begin / group-end flags opens / closes a group;
* `^1 file` a translate filter file for traces whose flags have TR_FTRANSLATED.
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Iterator

from models.flit import FIELDS, FLIT_WIDTH, FlitType
from models.mesh import Coord, MeshGeometry, Port

# ------------------------------------------------------------ trace flags
# GTKWave's TR_* display flags (the hex number after '@' in a save file).
TR_HEX = 0x2
TR_DEC = 0x4
TR_BIN = 0x8
TR_RJUSTIFY = 0x20
TR_BLANK = 0x200
TR_COLLAPSED = 0x1000
TR_FTRANSLATED = 0x2000
TR_CLOSED = 0x400000
TR_GRP_BEGIN = 0x800000
TR_GRP_END = 0x1000000

FMT_BIT = TR_RJUSTIFY | TR_BIN
FMT_HEX = TR_RJUSTIFY | TR_HEX
FMT_DEC = TR_RJUSTIFY | TR_DEC

# Header fields shown as their own traces, MSB first, with their radix.
# "rsvd" is left out (always zero in a legal flit); "payload" is in the full data.
HEADER_TRACES: tuple[tuple[str, int], ...] = (
    ("dst_x", FMT_DEC),
    ("dst_y", FMT_DEC),
    ("src_x", FMT_DEC),
    ("src_y", FMT_DEC),
    ("type", FMT_HEX),
    ("txn", FMT_HEX),
    ("last", FMT_BIT),
)

PORT_NAMES = {p: p.name for p in Port}  # N E S W L, index = RTL port number

# Status signals of the endpoint-bank harnesses, below <top>.u_bank: (name, width, format).
BANK_STATUS: tuple[tuple[str, int, int], ...] = (
    ("cycle", 32, FMT_DEC),
    ("inj_count", 32, FMT_DEC),
    ("cap_count", 32, FMT_DEC),
    ("done", 1, FMT_BIT),
    ("stalled", 1, FMT_BIT),
)

# Harness tops whose hierarchy this module knows (see _router_path).
MESH_TOPS = ("mesh_harness",)
MACHINE_TOP_SUFFIX = "_harness"  # tb/machine_top.py names a machine's bench top <machine>_harness
ROUTER_TOPS = ("router_harness",)
FIFO_TOPS = ("fifo_harness",)
CUBE_TOPS = ("ahbm_cube",)

# Per-PE traces of the AHBM CUBE, below <top>.g_pe[p].u_pe.u_core: (name, width, format).
PE_TRACES: tuple[tuple[str, int, int], ...] = (
    ("e_st", 4, FMT_DEC),            # engine state (pe_core.v E_*)
    ("pf_st", 3, FMT_DEC),           # DMA front-end state (PF_*)
    ("cmd_done", 32, FMT_DEC),
    ("cmdq_free", 8, FMT_DEC),
    ("fault_code", 8, FMT_HEX),
    ("dma_req_valid", 1, FMT_BIT),
    ("dma_req_buf", 4, FMT_DEC),
    ("dma_out_valid", 1, FMT_BIT),
    ("dma_out_buf", 4, FMT_DEC),
    ("push_valid", 4, FMT_BIT),
    ("push_ready", 4, FMT_BIT),
    ("pop_valid", 4, FMT_BIT),
    ("pop_ready", 4, FMT_BIT),
    ("pop_avail", 4, FMT_BIT),
    ("tx_act", 1, FMT_BIT),
    ("rx_act", 1, FMT_BIT),
    ("cnt_comp", 32, FMT_DEC),
    ("cnt_push", 32, FMT_DEC),
    ("cnt_pop", 32, FMT_DEC),
)


def _vec(path: str, width: int) -> str:
    """GTKWave's name of a dumped `[width-1:0]` vector (the loader appends the range)."""
    return f"{path}[{width - 1}:0]" if width > 1 else path


def bit_trace(path: str, width: int, bit: int) -> str:
    """Save-file spec of bit `bit` of the dumped `[width-1:0]` vector `path`.

    GTKWave 3.3 does not resolve `sig[3]` or `sig[7:4]` on an FST vector (it
    looks for bit-blasted facilities, which an FST from Icarus does not have);
    it resolves `(i)sig[7:0]`, bit i counted from the declared MSB.
    """
    if width == 1:
        return path
    return f"({width - 1 - bit}){_vec(path, width)}"


def field_trace(data_base: str, name: str, width: int = FLIT_WIDTH) -> str:
    """Save-file spec showing flit field `name` of the `[width-1:0]` vector `data_base`.

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
    valid: str           # trace specs of valid and busy (monitor ports, or router ports)
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


def bench_links(bench) -> list[Link]:
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
class _Lines:
    """Save-file body: emits a flag line only when the flags change."""

    def __init__(self, type_filter: Path | None) -> None:
        self.lines: list[str] = []
        self._flags: int | None = None
        self._type_filter = type_filter

    def flags(self, value: int) -> None:
        if value != self._flags:
            self.lines.append(f"@{value:x}")
            self._flags = value

    def trace(self, name: str, fmt: int, alias: str | None = None) -> None:
        self.flags(fmt)
        self.lines.append(f"+{{{alias}}} {name}" if alias else name)

    def type_trace(self, name: str, fmt: int, alias: str) -> None:
        """A trace shown through the FlitType translate filter, when there is one."""
        if self._type_filter is None:
            self.trace(name, fmt, alias)
            return
        self.lines.append(f"^1 {self._type_filter}")
        self.trace(name, fmt | TR_FTRANSLATED, alias)

    @contextmanager
    def group(self, name: str, is_open: bool) -> Iterator[None]:
        """Traces added inside the `with` block form the group `name`."""
        self.flags(TR_GRP_BEGIN | TR_BLANK | (0 if is_open else TR_CLOSED))
        self.lines.append(f"-{name}")
        yield
        self.flags(TR_GRP_END | TR_BLANK | (0 if is_open else TR_CLOSED | TR_COLLAPSED))
        self.lines.append(f"-{name}")


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
    """GTKWave translate-filter file: type code (as GTKWave shows it) -> FlitType name."""
    return "".join(f"{int(t):X} {t.name}\n" for t in FlitType)


def _fifo_count_width(bench) -> int:
    depth = int(bench.parameters.get("DEPTH", 4))
    aw = 1 if depth <= 2 else (depth - 1).bit_length()
    return aw + 1


def save_file_text(
    bench,
    fst_path: Path,
    gtkw_path: Path | None = None,
    *,
    open_routers: bool | Collection[Coord] | None = None,
    open_links: bool = True,
    view: View | None = None,
    type_filter: Path | None = None,
) -> str:
    """The text of a save file for `bench` (see write_save_file for the arguments)."""
    top = bench.toplevel
    out = _Lines(Path(type_filter).resolve() if type_filter is not None else None)
    out.lines += [
        "[*]",
        f"[*] GTKWave save file for bench '{bench.name}' (top {top}), written by tb/gtkw.py",
        "[*] open with: gtkwave <dumpfile> <this file>   (or: make waves BENCH=<bench>)",
        "[*]",
        f'[dumpfile] "{Path(fst_path).resolve()}"',
    ]
    if gtkw_path is not None:
        out.lines.append(f'[savefile] "{Path(gtkw_path).resolve()}"')
    view = view or DEFAULT_VIEW
    out.lines.append(f"[timestart] {view.start}")
    if view.size is not None:
        out.lines += [f"[size] {view.size[0]} {view.size[1]}", "[pos] -1 -1"]
    if view.zoom is not None:
        # zoom, primary marker, then GTKWave's 26 named markers (unset)
        out.lines.append(f"*{view.zoom:.6f} {view.marker}" + " -1" * 26)
    out.lines += [
        f"[treeopen] {top}.",
        f"[sst_width] {220 if view.tree else 1}",
        "[signals_width] 300",
        f"[sst_expanded] {int(view.tree)}",
        "[sst_vpaned_height] 300",
    ]

    # Clock, reset, status.
    out.trace(f"{top}.u_clk.clk", FMT_BIT, "clk")
    out.trace(f"{top}.u_clk.resetn", FMT_BIT, "resetn")
    out.trace(f"{top}.mon_err", FMT_BIT, "mon_err")
    if top in MESH_TOPS + ROUTER_TOPS:
        for name, width, fmt in BANK_STATUS:
            out.trace(_vec(f"{top}.u_bank.{name}", width), fmt, name)

    links = bench_links(bench)
    routers = list(dict.fromkeys(lk.router for lk in links))
    if open_routers is None:
        open_routers = len(routers) == 1
    for xy in routers:
        r_open = open_routers if isinstance(open_routers, bool) else xy in open_routers
        with out.group(f"router ({xy[0]},{xy[1]})", r_open):
            for lk in (lk for lk in links if lk.router == xy):
                with out.group(lk.label, open_links):
                    out.trace(lk.valid, FMT_BIT, "valid")
                    out.trace(lk.busy, FMT_BIT, "busy")
                    if lk.monitor is None:
                        continue  # no monitor: the data is an undumped array element
                    for fname, fmt in HEADER_TRACES:
                        trace = field_trace(lk.data_base, fname)
                        if fname == "type":
                            out.type_trace(trace, fmt, fname)
                        else:
                            out.trace(trace, fmt, fname)
                    out.trace(lk.data, FMT_HEX, "data")

    if top in CUBE_TOPS:
        n_pe = int(bench.parameters.get("R", 2)) * int(bench.parameters.get("C", 4))
        for pe in range(n_pe):
            with out.group(f"PE {pe}", pe == 0):
                for name, width, fmt in PE_TRACES:
                    out.trace(_vec(f"{top}.g_pe[{pe}].u_pe.u_core.{name}", width), fmt, name)

    if not links and top in FIFO_TOPS:
        for name, width, fmt in (
            ("push", 1, FMT_BIT), ("full", 1, FMT_BIT), ("din", FLIT_WIDTH, FMT_HEX),
            ("pop", 1, FMT_BIT), ("empty", 1, FMT_BIT), ("dout", FLIT_WIDTH, FMT_HEX),
        ):
            out.trace(_vec(f"{top}.{name}", width), fmt, name)
        out.trace(_vec(f"{top}.u_dut.count", _fifo_count_width(bench)), FMT_DEC, "count")
    return "\n".join(out.lines) + "\n"


def write_save_file(
    bench,
    fst_path: Path,
    gtkw_path: Path,
    *,
    open_routers: bool | Collection[Coord] | None = None,
    open_links: bool = True,
    view: View | None = None,
) -> None:
    """Write a GTKWave save file for `bench`'s dump `fst_path` to `gtkw_path`.

    Router groups start closed (open when the bench has a single router, or
    as `open_routers` says: True, False, or a set of (x, y)); link groups
    inside them start open unless `open_links` is False. `view` sets the
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
