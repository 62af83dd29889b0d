"""Generate the Verilog top and the bench harness of a machine from its description.

models/machine/layouts.py says which unit sits where; this turns it into
`<machine>.v` (the machine: a noc_mesh and one instance per unit, clk and resetn
as inputs, `ext_*` ports for a bench-played endpoint, the orchestrator's AXI4-Lite
host port, DRAM instance `dram` with its one-dimensional array `mem`) and
`<machine>_harness.v` (clock and reset, a bench endpoint bank on every `ext`
port, the AXI host pins driven by the host engine, rtl/bench/host_engine.v,
and logged by rtl/bench/axil_trace.v on request). Nothing about a machine is
written twice by hand: the instruction-FIFO depth of the compute units, the
staging slots, the memory agent's BASE, the DRAM's size and every unit's
timing facts (models/machine/unit_timing.py, with the machine's overrides) come from
the machine description.

Besides the units, the top counts what a host needs to know that every posted
write has landed (completion is not landing, units.md §H.5):

* ``wr_data_sent`` (32 bits): MEM_WR_DATA flits the endpoints handed to the
  mesh (``valid && !busy && type == 4`` on every endpoint's output, summed);
  every write has landed when the DRAM's own write counter ``dram.wr_words``
  equals it (tb/system/landing.py);
* ``faults_sent`` (32 bits): CU_SIGNAL FAULT flits (code 0x04) handed to the
  mesh, so a bench sees a fault that is not a node's last signal.
Both are registers read by Python only; they clear on reset, as wr_words does.
"""

from __future__ import annotations

from pathlib import Path

from models.machine.layouts import Machine, UnitKind
from models.machine.unit_timing import unit_params

# RTL each unit kind needs (the mesh's own files come from tb.run.benches.NOC_RTL).
UNIT_RTL: dict[UnitKind, tuple[str, ...]] = {
    UnitKind.CLUSTER: ("rtl/cu/cu_base.v",),  # + the cluster's own files, see unit_sources()
    UnitKind.VECTOR: ("rtl/cu/cu_base.v",),
    UnitKind.MAG: ("rtl/mag/mag.v", "rtl/mag/mag_entry.v", "rtl/mag/mag_write.v", "rtl/mag/mag_port.v",
                   "rtl/mag/mag_quant.v", "rtl/mag/mag_dram.v", "rtl/arith/clock_gate.v"),
    UnitKind.ORCH: ("rtl/orch/orch_axil_mon.v", "rtl/orch/orch_addr_dec.v", "rtl/orch/orchestrator.v"),
    UnitKind.EXT: (),
}
UNIT_GLOBS: dict[UnitKind, tuple[str, ...]] = {
    UnitKind.CLUSTER: ("rtl/cluster/*.v", "rtl/arith/*.v"),
    UnitKind.VECTOR: ("rtl/vector/*.v", "rtl/arith/*.v"),
}
AXI_ADDR_W = 16
AXI_PINS: tuple[tuple[str, str, int], ...] = (  # (name, direction seen by the orchestrator, width)
    ("awaddr", "in", AXI_ADDR_W), ("awvalid", "in", 1), ("awready", "out", 1),
    ("wdata", "in", 64), ("wstrb", "in", 8), ("wvalid", "in", 1), ("wready", "out", 1),
    ("bresp", "out", 2), ("bvalid", "out", 1), ("bready", "in", 1),
    ("araddr", "in", AXI_ADDR_W), ("arvalid", "in", 1), ("arready", "out", 1),
    ("rdata", "out", 64), ("rresp", "out", 2), ("rvalid", "out", 1), ("rready", "in", 1),
)


def unit_sources(machine: Machine, root: Path) -> list[str]:
    """Every RTL file the machine's units need, relative to `root`, without duplicates."""
    files: list[str] = []
    for kind in dict.fromkeys(machine.units.values()):
        files.extend(UNIT_RTL[kind])
        for pattern in UNIT_GLOBS.get(kind, ()):
            files.extend(sorted(str(p.relative_to(root)) for p in root.glob(pattern)))
    return list(dict.fromkeys(files))


def _w(width: int) -> str:
    return f"[{width - 1}:0] " if width > 1 else ""


T_MEM_WR_DATA = 4
T_CU_SIGNAL = 6
SIG_FAULT = 0x04


def _counters(ports: list[int]) -> list[str]:
    """The landing and fault counters over the endpoint outputs `ports` (see the module doc)."""
    n = len(ports)
    w = max(1, n.bit_length())
    lines = ["    // Flits the endpoints hand to the mesh: MEM_WR_DATA (type 4) for the landing check, and",
             "    // CU_SIGNAL FAULTs (type 6, code 0x04). type is header [271:268], a signal's code payload [255:248].",
             "    /* verilator lint_off UNUSEDSIGNAL */  // read by Python only",
             "    reg [31:0] wr_data_sent;", "    reg [31:0] faults_sent;",
             "    /* verilator lint_on UNUSEDSIGNAL */"]
    for i in ports:
        lines.append(f"    wire hs_{i} = ep_in_valid[{i}] && !ep_in_busy[{i}];")
        lines.append(f"    wire wd_{i} = hs_{i} && ep_in_data[{i}][271:268] == 4'd{T_MEM_WR_DATA};")
        lines.append(f"    wire ft_{i} = hs_{i} && ep_in_data[{i}][271:268] == 4'd{T_CU_SIGNAL} && "
                     f"ep_in_data[{i}][255:248] == 8'h{SIG_FAULT:02x};")
    pad = f"{{{32 - w}'d0, " if w < 32 else "{"
    wd_sum = " + ".join(f"{{{w - 1}'d0, wd_{i}}}" if w > 1 else f"wd_{i}" for i in ports) or f"{w}'d0"
    ft_sum = " + ".join(f"{{{w - 1}'d0, ft_{i}}}" if w > 1 else f"ft_{i}" for i in ports) or f"{w}'d0"
    lines += [f"    wire [{w - 1}:0] wd_now = {wd_sum};", f"    wire [{w - 1}:0] ft_now = {ft_sum};",
              "    always @(posedge clk) begin",
              "        if (!resetn) begin",
              "            wr_data_sent <= 32'd0;",
              "            faults_sent  <= 32'd0;",
              "        end else begin",
              f"            wr_data_sent <= wr_data_sent + {pad}wd_now}};",
              f"            faults_sent  <= faults_sent + {pad}ft_now}};",
              "        end",
              "    end"]
    return lines


def _timing(unit: str, machine: Machine) -> str:
    """The unit's timing parameters as the machine sets them, ", .NAME(value)" each (models/machine/unit_timing.py)."""
    return "".join(f", .{p}({v})" for p, v in unit_params(unit, machine.timing))


def _flit_trace(ports: list[int]) -> list[str]:
    """With AGSIM_FLIT_TRACE defined: every flit an endpoint takes (IN) or the mesh takes from it (OUT), as
    "cycle IN|OUT port header" lines in flit_trace.txt (the timed models' flits are compared with these)."""
    lines = ["`ifdef AGSIM_FLIT_TRACE", "    integer ft_fd;", "    reg [63:0] ft_cyc = 64'd0;",
             "    initial ft_fd = $fopen(\"flit_trace.txt\", \"w\");", "    always @(posedge clk) begin",
             "        ft_cyc <= ft_cyc + 64'd1;"]
    for i in ports:
        # ep_out: the mesh's output, taken by the endpoint (IN); ep_in: the endpoint's flit, taken by the mesh (OUT)
        lines += [f"        if (ep_out_valid[{i}] && !ep_out_busy[{i}]) $fwrite(ft_fd, \"%0d IN {i} %h\\n\", ft_cyc, "
                  f"ep_out_data[{i}][287:256]);",
                  f"        if (ep_in_valid[{i}] && !ep_in_busy[{i}]) $fwrite(ft_fd, \"%0d OUT {i} %h\\n\", ft_cyc, "
                  f"ep_in_data[{i}][287:256]);"]
    return lines + ["    end", "`endif"]


def render_machine(machine: Machine) -> str:
    """The machine top: mesh + one instance per unit, the landing and fault counters."""
    dram_words = machine.dram_words
    g = machine.geometry
    np_ = g.num_ports
    ports = ["    input  wire clk", "    input  wire resetn"]
    body: list[str] = []
    ext = [c for c, k in machine.units.items() if k == UnitKind.EXT]
    orch = [c for c, k in machine.units.items() if k == UnitKind.ORCH]
    if len(ext) > 1 or len(orch) > 1:
        raise ValueError(f"machine {machine.name}: at most one ext port and one orchestrator are supported")
    if ext:
        ports += ["    input  wire [287:0] ext_in_data", "    input  wire ext_in_valid",
                  "    output wire ext_in_busy", "    output wire [287:0] ext_out_data",
                  "    output wire ext_out_valid", "    input  wire ext_out_busy"]
    if orch:
        for name, direction, width in AXI_PINS:
            d = "input  wire" if direction == "in" else "output wire"
            ports.append(f"    {d} {_w(width)}s_axil_{name}")
    ports.append("    output wire mon_err")

    body.append(f"    wire [287:0] ep_in_data  [0:{np_ - 1}];")
    body.append(f"    wire         ep_in_valid [0:{np_ - 1}];")
    body.append(f"    wire         ep_in_busy  [0:{np_ - 1}];")
    body.append(f"    wire [287:0] ep_out_data  [0:{np_ - 1}];")
    body.append(f"    wire         ep_out_valid [0:{np_ - 1}];")
    body.append(f"    wire         ep_out_busy  [0:{np_ - 1}];")
    errs = ["mesh_err"]
    body.append("    wire mesh_err;")
    body.append(f"    noc_mesh #(.NX({machine.nx}), .NY({machine.ny}), .FIFO_DEPTH({machine.fifo_depth}), "
                f".EDGE_MASK(64'd{g.edge_mask})) u_mesh (")
    body.append("        .clk(clk), .resetn(resetn),")
    body.append("        .ep_in_data(ep_in_data), .ep_in_valid(ep_in_valid), .ep_in_busy(ep_in_busy),")
    body.append("        .ep_out_data(ep_out_data), .ep_out_valid(ep_out_valid), .ep_out_busy(ep_out_busy),")
    body.append("        .mon_err(mesh_err));")

    used = set()
    for coord, kind in sorted(machine.units.items(), key=lambda kv: g.port_index(kv[0])):
        i = g.port_index(coord)
        used.add(i)
        x, y = coord
        name = f"u_{kind.value}_{x}_{y}"
        noc = (f".noc_in_data(ep_out_data[{i}]), .noc_in_valid(ep_out_valid[{i}]), "
               f".noc_in_busy(ep_out_busy[{i}]),\n        .noc_out_data(ep_in_data[{i}]), "
               f".noc_out_valid(ep_in_valid[{i}]), .noc_out_busy(ep_in_busy[{i}])")
        err = f"err_{x}_{y}"
        body.append(f"    // {kind.value} at ({x},{y}), mesh port {i}")
        if kind == UnitKind.EXT:
            body += [f"    assign ep_in_data[{i}] = ext_in_data;", f"    assign ep_in_valid[{i}] = ext_in_valid;",
                     f"    assign ext_in_busy = ep_in_busy[{i}];", f"    assign ext_out_data = ep_out_data[{i}];",
                     f"    assign ext_out_valid = ep_out_valid[{i}];", f"    assign ep_out_busy[{i}] = ext_out_busy;"]
            continue
        errs.append(err)
        body.append(f"    wire {err};")
        mag = machine.mag if UnitKind.MAG in machine.units.values() else (0, 1)
        if kind in (UnitKind.CLUSTER, UnitKind.VECTOR):
            module = "cluster_cu" if kind == UnitKind.CLUSTER else "vector_core"
            status = f".busy(busy_{x}_{y})"
            body.append("    /* verilator lint_off UNUSEDSIGNAL */  // unit status, for waveforms")
            body.append(f"    wire busy_{x}_{y};")
            if kind == UnitKind.VECTOR:
                body.append(f"    wire [15:0] inst_space_{x}_{y};")
                body.append(f"    wire [127:0] hazards_{x}_{y};  // HAZARD report counts {{H4, H3, H2, H1}} of the core")
                status += f", .inst_space(inst_space_{x}_{y}), .hazards(hazards_{x}_{y})"
            body.append("    /* verilator lint_on UNUSEDSIGNAL */")
            body.append(f"    {module} #(.X({x}), .Y({y}), .MAG_X({mag[0]}), .MAG_Y({mag[1]}), "
                        f".INST_DEPTH({machine.inst_depth}){_timing(kind.value, machine)}) {name} (")
            body.append(f"        .clk(clk), .resetn(resetn),\n        {noc},\n        {status}, .mon_err({err}));")
        elif kind == UnitKind.MAG:
            body += [
                "    wire mem_rd_req, mem_rd_ready, mem_rd_valid, mem_wr_req, dram_err;",
                "    wire [34:0] mem_rd_addr, mem_wr_addr;",
                "    wire [255:0] mem_rd_data, mem_wr_data;",
                f"    mag #(.X({x}), .Y({y}), .DRAM_WORDS({dram_words}), .BASE(40'h{machine.mem_base:010x})"
                f"{_timing('mag', machine)}) {name} (",
                f"        .clk(clk), .resetn(resetn),\n        {noc},",
                "        .mem_rd_req(mem_rd_req), .mem_rd_addr(mem_rd_addr), .mem_rd_ready(mem_rd_ready),",
                "        .mem_rd_valid(mem_rd_valid), .mem_rd_data(mem_rd_data),",
                "        .mem_wr_req(mem_wr_req), .mem_wr_addr(mem_wr_addr), .mem_wr_data(mem_wr_data),",
                f"        .mon_err({err}));",
                f"    mag_dram #(.WORDS({dram_words}){_timing('dram', machine)}) dram (",
                "        .clk(clk), .resetn(resetn),",
                "        .rd_req(mem_rd_req), .rd_addr(mem_rd_addr), .rd_ready(mem_rd_ready),",
                "        .rd_valid(mem_rd_valid), .rd_data(mem_rd_data),",
                "        .wr_req(mem_wr_req), .wr_addr(mem_wr_addr), .wr_data(mem_wr_data),",
                "        .mon_err(dram_err));",
            ]
            errs.append("dram_err")
        elif kind == UnitKind.ORCH:
            axi = ", ".join(f".s_axil_{n}(s_axil_{n})" for n, _, _ in AXI_PINS)
            body.append(f"    orchestrator #(.X({x}), .Y({y}), .STAGE_SLOTS({machine.stage_slots}), "
                        f".ADDR_W({AXI_ADDR_W}){_timing('orch', machine)}) {name} (")
            body.append(f"        .clk(clk), .resetn(resetn),\n        {noc},\n        {axi},\n        .mon_err({err}));")
    for i in range(np_):
        if i not in used:  # a port of the index space with no endpoint: tied off in the mesh
            body += [f"    assign ep_in_data[{i}] = 288'd0;", f"    assign ep_in_valid[{i}] = 1'b0;",
                     f"    assign ep_out_busy[{i}] = 1'b1;"]
    body += _counters(sorted(used))
    body += _flit_trace(sorted(used))
    body.append(f"    assign mon_err = {' | '.join(errs)};")
    header = [
        f"// GENERATED by tb/system/machine_top.py from models/machine/layouts.py ({machine.name}); do not edit.",
        f"// {machine.description}",
        "`default_nettype none",
        "`timescale 1ns/1ps",
        f"module {machine.name} (",
        ",\n".join(ports),
        ");",
    ]
    return "\n".join(header + body + ["endmodule", "`default_nettype wire", ""])


def render_harness(machine: Machine) -> str:
    """Bench top: clock/reset, a bench endpoint bank on the ext port, AXI pins, the machine as u_dut."""
    g = machine.geometry
    np_ = g.num_ports
    ext = [c for c, k in machine.units.items() if k == UnitKind.EXT]
    orch = any(k == UnitKind.ORCH for k in machine.units.values())
    present = sum(1 << g.port_index(c) for c in ext)
    lines = [
        f"// GENERATED by tb/system/machine_top.py ({machine.name}); do not edit.",
        "`default_nettype none", "`timescale 1ns/1ps",
        f"module {machine.name}_harness ();",
        "    wire clk;", "    wire resetn;",
        "    harness_clock u_clk (.clk(clk), .resetn(resetn));",
        "    /* verilator lint_off UNUSEDSIGNAL */  // bank ports with no ext endpoint are tied off",
        f"    wire [287:0] tx_data [0:{np_ - 1}];", f"    wire tx_valid [0:{np_ - 1}];",
        f"    wire tx_busy [0:{np_ - 1}];", f"    wire [287:0] rx_data [0:{np_ - 1}];",
        f"    wire rx_valid [0:{np_ - 1}];", f"    wire rx_busy [0:{np_ - 1}];",
        "    /* verilator lint_on UNUSEDSIGNAL */",
        f"    tb_ep_bank #(.NP({np_}), .PRESENT(64'd{present}), .INJ_DEPTH(4096), .CAP_DEPTH(4096)) u_bank (",
        "        .clk(clk), .resetn(resetn), .unit_busy(1'b0), .tx_data(tx_data), .tx_valid(tx_valid), .tx_busy(tx_busy),",
        "        .rx_data(rx_data), .rx_valid(rx_valid), .rx_busy(rx_busy));",
        "    /* verilator lint_off UNUSEDSIGNAL */  // read by Python",
        "    wire mon_err;",
        "    /* verilator lint_on UNUSEDSIGNAL */",
    ]
    conn = ["        .clk(clk), .resetn(resetn),"]
    for i in range(np_):
        if ext and i == g.port_index(ext[0]):
            continue
        lines += [f"    assign tx_busy[{i}] = 1'b1;", f"    assign rx_data[{i}] = 288'd0;",
                  f"    assign rx_valid[{i}] = 1'b0;"]
    if ext:
        i = g.port_index(ext[0])
        conn.append(f"        .ext_in_data(tx_data[{i}]), .ext_in_valid(tx_valid[{i}]), .ext_in_busy(tx_busy[{i}]),")
        conn.append(f"        .ext_out_data(rx_data[{i}]), .ext_out_valid(rx_valid[{i}]), .ext_out_busy(rx_busy[{i}]),")
    if orch:
        lines.append("    // host pins: the host engine drives them from the batches Python gives it (rtl/bench/host_engine.v)")
        for name, _, width in AXI_PINS:
            lines.append(f"    wire {_w(width)}s_axil_{name};")
        lines.append(f"    host_engine #(.ADDR_W({AXI_ADDR_W})) u_host (.clk(clk), .resetn(resetn), "
                     + ", ".join(f".{n}(s_axil_{n})" for n, _, _ in AXI_PINS) + ");")
        conn.append("        " + ", ".join(f".s_axil_{n}(s_axil_{n})" for n, _, _ in AXI_PINS) + ",")
        lines.append(f"    axil_trace #(.ADDR_W({AXI_ADDR_W})) u_axil_trace (.clk(clk), "
                     + ", ".join(f".{n}(s_axil_{n})" for n, _, _ in AXI_PINS) + ");")
    conn.append("        .mon_err(mon_err)")
    lines.append(f"    {machine.name} u_dut (")
    lines += conn
    lines += ["    );", "endmodule", "`default_nettype wire", ""]
    return "\n".join(lines)


def write_machine_sources(machine: Machine, out_dir: Path) -> list[Path]:
    """Write `<machine>.v` and `<machine>_harness.v` into out_dir (only if changed)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, text in ((f"{machine.name}.v", render_machine(machine)),
                       (f"{machine.name}_harness.v", render_harness(machine))):
        path = out_dir / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
        written.append(path)
    return written
