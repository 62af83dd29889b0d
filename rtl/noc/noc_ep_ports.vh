// The NoC endpoint port (spec section 3): the six ports of a module on a router's Local port, named
// from the endpoint's side: noc_in_* carries flits from the router (data, valid, and this endpoint's
// busy), noc_out_* flits to it (data, valid, and the router's busy).
//
// Included in a module's ANSI port list in place of the six declarations, once per module:
//     input  wire         clk,
//     input  wire         resetn,
//     <the include of noc_ep_ports.vh>
//     output wire         mon_err
// Every line ends with a comma, so a port of the module's own must follow. No include guard: every
// endpoint module includes it. noc_ep_pass.vh connects these ports of an instance by name.
    input  wire [287:0] noc_in_data,
    input  wire         noc_in_valid,
    output wire         noc_in_busy,
    output wire [287:0] noc_out_data,
    output wire         noc_out_valid,
    input  wire         noc_out_busy,
