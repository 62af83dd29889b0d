"""Simulator-independent testbench helpers (importable and testable without cocotb)."""
