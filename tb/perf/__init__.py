"""Speed benchmark: the same mesh traffic under cocotb and under a pure-Verilog bench.

`python -m tb.perf` (make bench) runs both and prints their wall times; the
cocotb side is test_perf.py, the comparison and the pure run are compare.py.
"""
