"""Pure-Python reference models of the NoC (flit layout, mesh geometry, traffic)."""
