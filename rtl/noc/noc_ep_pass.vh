// Connects an instance's NoC endpoint port (noc_ep_ports.vh) to the six signals of the same names in
// the including scope: a unit's own ports (cu_base_inst.vh), or a bench bay's wires (rtl/bench/
// unit_bay.vh). Included in the instance's port list; every line ends with a comma, so a connection of
// the instance's own must follow. No include guard.
        .noc_in_data(noc_in_data), .noc_in_valid(noc_in_valid), .noc_in_busy(noc_in_busy),
        .noc_out_data(noc_out_data), .noc_out_valid(noc_out_valid), .noc_out_busy(noc_out_busy),
