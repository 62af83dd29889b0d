// Shared constants of the NoC flit (spec section 1). Included, not compiled alone.
`ifndef NOC_PKG_VH
`define NOC_PKG_VH
`define NOC_FLIT_W   288
`define NOC_POS_W    4
`define NOC_DST_X    287:284
`define NOC_DST_Y    283:280
`define NOC_SRC_X    279:276
`define NOC_SRC_Y    275:272
`define NOC_TYPE     271:268
`define NOC_TXN      267:260
`define NOC_LAST     259
// Port numbering of a router (spec section 2): North = smaller y, West = smaller x.
`define NOC_PORT_N   0
`define NOC_PORT_E   1
`define NOC_PORT_S   2
`define NOC_PORT_W   3
`define NOC_PORT_L   4
`endif

