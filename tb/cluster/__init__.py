"""The matmul cluster's module bench: bench class (bench), its timing judge (timing) and test module."""
