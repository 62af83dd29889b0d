// A compute unit's endpoint base: the one cu_base instance, u_base, on the including module's NoC port.
//
// Included once in the body of the unit's module (or of a bench top standing in for a unit). The
// including module must declare, before the include:
//   * clk, resetn, and the six NoC endpoint signals noc_in_data / valid / busy, noc_out_data / valid /
//     busy: a unit's own ports (noc_ep_ports.vh), or a bench bay's wires (rtl/bench/unit_bay.vh);
//   * parameters or localparams X, Y (its coordinate), INST_DEPTH, RECV_DEPTH (the base's FIFOs), and
//     localparams CU_TYPE [15:0], CU_VERSION [7:0], N_BUFFERS [3:0] (what CU_CAPS answers);
//   * what the unit drives into the base, each as a reg or a wire (the unit's choice): inst_ready,
//     exec_done, exec_fault, exec_result [31:0], dbg_ctr [63:0], send_flit [287:0], send_valid,
//     recv_ready.
// This file declares, as wires, what the base drives back: inst_flit [287:0], inst_valid,
// recv_flit [287:0], recv_valid, send_ready, and the base's status base_busy, base_inst_space [15:0],
// base_err, which the unit folds into its own busy, inst_space and mon_err. The header of cu_base.v
// says what each port means. No include guard.
    wire [287:0] inst_flit, recv_flit;
    wire         inst_valid, recv_valid, send_ready;
    wire         base_busy, base_err;
    wire [15:0]  base_inst_space;

    cu_base #(.X(X), .Y(Y), .CU_TYPE(CU_TYPE), .CU_VERSION(CU_VERSION), .N_BUFFERS(N_BUFFERS),
              .INST_DEPTH(INST_DEPTH), .RECV_DEPTH(RECV_DEPTH)) u_base (
        .clk(clk), .resetn(resetn),
`include "noc_ep_pass.vh"
        .inst_flit(inst_flit), .inst_valid(inst_valid), .inst_ready(inst_ready),
        .exec_done(exec_done), .exec_result(exec_result), .exec_fault(exec_fault), .dbg_ctr(dbg_ctr),
        .send_flit(send_flit), .send_valid(send_valid), .send_ready(send_ready),
        .recv_flit(recv_flit), .recv_valid(recv_valid), .recv_ready(recv_ready),
        .inst_space(base_inst_space), .busy(base_busy), .mon_err(base_err));
