"""Functional coverage of the random stimulus, on cocotb-coverage.

Each block has one coverage model built from cocotb-coverage's CoverPoint and
CoverCross (vector.py: the vector core's random programs; noc.py: the NoC
benches' traffic; ahbm.py: the AHBM launches). A bench samples its model
while it runs; db.save_requested() writes the process's coverage database as
cocotb-coverage XML where the regression asked for it (AGSIM_COVER_OUT);
tb.farm merges the tasks' databases with cocotb-coverage's own merge and
judges closure on the union (db.read, report.py).
"""
