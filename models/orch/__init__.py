"""The orchestrator (rtl/orch/): its host port, registers and behaviour (host_port) and its untimed event model (event_model)."""
