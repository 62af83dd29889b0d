"""The orchestrator's benches: bench class (bench), the host's AXI4-Lite driver (host) and the test modules."""
