"""The ADR §10 cases at the Llama3-70B head geometry (d = 128, GQA group 8,
64-key tiles) on the 2x4 CUBE, and batched decode, decode across launches and chunked prefill across
launches; same kernel, driver and scoreboard as tb/ahbm/test_ahbm.py (which runs the wider sweeps at
d = 32); tb/ahbm/case.py runs each."""

from __future__ import annotations

import cocotb

from models.ahbm.batch import Request
from tb.ahbm.case import run_batch, run_case, run_ring, run_session


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


@cocotb.test()
async def llama_decode_batch(dut) -> None:
    """Batched decode: B = 8 requests of 200..459 tokens (their own caches, start_pe = id mod 8) in one
    launch over N = 8 PEs; every request's O bit exact and within tolerance."""
    reqs = [Request(200 + 37 * r, 199 + 37 * r, 1, r + 1) for r in range(8)]
    await run_batch(dut, "llama_decode_batch", reqs, n=8, tile=64)


@cocotb.test()
async def llama_decode_steps(dut) -> None:
    """Decode across launches: 8 steps from a 500-token cache, the driver appending each new token's
    K and V row to its owner's slot before the step; O checked at every step."""
    await run_session(dut, "llama_decode_steps", [Request(500 + t, 499 + t, 1, 3) for t in range(8)],
                      n=8, tile=64)


@cocotb.test()
async def llama_prefill_chunks(dut) -> None:
    """Chunked prefill across launches over N = 2: query chunks of 8 positions (64 rows), q_start 0..32,
    each over the cache holding the earlier chunks and its own; causal skip and masks from absolute
    positions."""
    chunks = [Request(s + 8, s, 8, 4) for s in range(0, 40, 8)]
    await run_session(dut, "llama_prefill_chunks", chunks, n=2, tile=64)
