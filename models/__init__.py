"""Bit-exact golden models of every block, pure Python and numpy (nothing here imports cocotb or tb):
the NoC (flit layout, mesh geometry, traffic), the compute units (cluster/, vc/ and the vector core,
numerics/), the memory agent and orchestrator, the AHBM memory cube (ahbm/ and its IPCQ, DMA and
reduction models), the machines and compiled bundles (reader, loader, executor, judge, bound, timing)."""
