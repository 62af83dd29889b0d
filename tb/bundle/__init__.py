"""Compiled bundles on the RTL machine: the run through the orchestrator (rtl_run), golden results computed beside the simulator, planted plan faults, and the clients bench's test module."""
