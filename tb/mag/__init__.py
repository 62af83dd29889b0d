"""The memory agent's bench: bench class (bench), its service-time judge (timing), MXFP7 stimulus, the DRAM backdoor (dram) and the test module."""
