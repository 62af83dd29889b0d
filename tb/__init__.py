"""Testbench code: cocotb-facing drivers/monitors and the pure-Python helpers they use."""
