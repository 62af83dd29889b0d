"""The ADR §10 cases at the Llama3-70B head geometry (d = 128, GQA group 8,
64-key tiles) on the 2x4 CUBE; same kernel, driver and scoreboard as
tb/system/test_ahbm.py (which runs the wider sweeps at d = 32); tb/lib/ahbm_case.py runs each."""

from __future__ import annotations

import cocotb

from tb.lib.ahbm_case import run_case, run_ring


@cocotb.test()
async def llama_decode_no_sp(dut) -> None:
    """Case 1: decode, 300-token context on one PE (ragged last tile)."""
    await run_case(dut, "llama_decode_no_sp", counter=300, q_start=299, tq=1, n=1, request_id=0, tile=64)


@cocotb.test()
async def llama_decode_sp(dut) -> None:
    """Case 2: decode with SP over N=8 PEs (depth-3 tree), 1000 tokens, start_pe 2."""
    await run_case(dut, "llama_decode_sp", counter=1000, q_start=999, tq=1, n=8, request_id=2, tile=64)


@cocotb.test()
async def llama_prefill_no_sp(dut) -> None:
    """Case 3: prefill of 72 tokens on one PE, query blocks of 8 positions (64 rows)."""
    await run_case(dut, "llama_prefill_no_sp", counter=72, q_start=0, tq=72, n=1, request_id=0, tile=64,
                   q_block=8)


@cocotb.test()
async def llama_prefill_ring(dut) -> None:
    """Case 4: ring prefill over 8 PEs, 60 tokens (blocks of 7 or 8 positions = 56..64 rows)."""
    await run_ring(dut, "llama_prefill_ring", seq=60, n=8)
