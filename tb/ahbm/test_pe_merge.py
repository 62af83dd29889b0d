"""Module bench of the AHBM reduction on a 1x3 CUBE: the streamed MERGE at the build's IPCQ link width.

PE 0 pushes its (m, l, O) state East (IPCQ_PUSH); PE 1 merges it into its own state as the words arrive
and pushes the result East behind the merge (MERGE SRC_Q PUSH_EN); PE 2 merges that into its own state
(MERGE SRC_Q) and stores O. A monitor records, at every edge, the words each PE's queue gave up, the
words each push port handed over and each engine's state; the bench then requires:
* PE 1's merged state bit for bit = attention.merge of the two sweeps, PE 2's stored O = the model's;
* every take, every push and the completion of both streamed MERGEs at the edges
  models/ahbm/reduce.stream_merge gives for the arrivals recorded (the timing model, docs/ahbm.md §3);
* the counters (one pop, one merge per streamed MERGE, one push with PUSH_EN) and both headers.
Modes: the child's packet queued before the MERGE is issued, the MERGE issued on its header (cut
through), and the unstreamed reference (IPCQ_POP, MERGE, IPCQ_PUSH) whose cycles the REPORT line sets
beside the streamed ones. The faults of the streamed form run on PE 0; a KV block crosses the link at
the build's width too.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge

from models.ahbm.attention import State, merge
from models.ahbm.batch import Request
from models.ahbm.numerics import f32_to_bits
from models.ahbm.ipcq import encode_cmd, mlo_words
from models.ahbm.reduce import MergeTiming, compare_timing, stream_merge
from tb.ahbm.case import run_batch
from tb.ahbm.cube import CubeTB
from tb.ahbm.kernel import read_state
from tb.ahbm.pe_bench import (MAX_CYCLES, PeTB, check_header, expect_fault, model_sweep, reserved_bit,
                               start_session, wait_pop_avail)

E, W = 1, 3
E_SMERGE = 13                  # pe_engine's state of a streamed MERGE (pe_core's e_st)
NPE = 3


@dataclass
class LinkTrace:
    """Per edge of the PE clock: East push handshakes, West queue takes, East push readiness and the
    engine state of every PE. An edge is named by the cyc_now it gives: a handshake seen at a falling
    edge happens at the next rising edge (cyc_now + 1); a state seen there was set by edge cyc_now."""

    cube: CubeTB
    pushes: list[list[int]] = field(default_factory=lambda: [[] for _ in range(NPE)])
    takes: list[list[int]] = field(default_factory=lambda: [[] for _ in range(NPE)])
    blocked: list[set[int]] = field(default_factory=lambda: [set() for _ in range(NPE)])
    states: list[list[tuple[int, int]]] = field(default_factory=lambda: [[] for _ in range(NPE)])
    running: bool = True

    async def run(self) -> None:
        cores = [self.cube.core(p) for p in range(NPE)]
        while self.running:
            await FallingEdge(self.cube.clk)
            now = int(cores[0].cyc_now.value)
            for p, c in enumerate(cores):
                pv, pr = int(c.push_valid.value), int(c.push_ready.value)
                if not pr >> E & 1:
                    self.blocked[p].add(now + 1)
                elif pv >> E & 1:
                    self.pushes[p].append(now + 1)
                if int(c.pop_ready.value) >> W & 1:
                    self.takes[p].append(now + 1)
                self.states[p].append((now, int(c.e_st.value)))

    def smerge(self, p: int) -> tuple[int, int]:
        """(dispatch edge, completion edge) of PE p's streamed MERGE."""
        start = next(e for e, st in self.states[p] if st == E_SMERGE)
        done = next(e for e, st in self.states[p] if e > start and st != E_SMERGE)
        return start, done

    def measured(self, p: int, push: bool) -> MergeTiming:
        return MergeTiming(self.takes[p], self.pushes[p] if push else [], self.smerge(p)[1])


async def sweep_states(cube: CubeTB, sessions: list[PeTB], rows: int) -> list[State]:
    """Each PE's own sweep (two tiles, one ragged) into its S0; the model's states."""
    states = []
    for s in sessions:
        q_addr, q = s.q(rows)
        tiles = [s.tile(32), s.tile(17)]
        await s.load()
        await cube.cmd(s.pe, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
        for j, t in enumerate(tiles):
            await s.attn(t, rows, sreg=0, init=(j == 0))
        states.append(model_sweep(q, tiles))
    for s in sessions:
        await cube.wait_idle(s.pe, MAX_CYCLES)
    return states


async def wait_child(cube: CubeTB, p: int, whole: bool, what: str) -> None:
    """The packet from West: whole (pkt_avail) or its header (a word queued)."""
    if whole:
        await wait_pop_avail(cube, p, W, what)
    else:
        await cube.wait_for(p, lambda: bool(cube.pop_head(p) >> W & 1), what, MAX_CYCLES,
                            also=cube.core(p).pop_valid)


def state_bits_equal(got: tuple[np.ndarray, np.ndarray, np.ndarray], want: State) -> int:
    """Number of fp32 words of (m, l, O) that differ bit for bit."""
    return sum(int(np.count_nonzero(f32_to_bits(g) != f32_to_bits(x))) for g, x in zip(got, (want.m, want.l, want.O)))


@cocotb.test()
@cocotb.parametrize(mode=["queued", "cut_through", "unstreamed"], rows=[8, 3])
async def merge_chain(dut, mode: str, rows: int) -> None:
    """PE 0 -> PE 1 (merge, push) -> PE 2 (merge, store): bits, counts, headers and, streamed, every edge."""
    cube, s0, v = await start_session(dut, "pe_merge")
    sessions = [s0] + [PeTB(cube, v, v.seed + p, pe=p) for p in (1, 2)]
    width, d, lanes = cube.p["IPCQ_W"], s0.d, cube.p["VEC_LANES"]
    a, b, c = await sweep_states(cube, sessions, rows)
    trace = LinkTrace(cube)
    mon = cocotb.start_soon(trace.run())
    t0 = cube.now()
    await cube.cmd(0, "IPCQ_PUSH", rows=rows, sreg=0, dir=E, push_tag=0x51, tag=1)
    streamed = mode != "unstreamed"
    await wait_child(cube, 1, mode != "cut_through", "PE 1: the packet of PE 0")
    if streamed:
        await cube.cmd(1, "MERGE", rows=rows, sreg=0, src_q=1, dir=W, push_en=1, pdir=E, push_tag=0x52, tag=2)
    else:
        await cube.cmd(1, "IPCQ_POP", rows=rows, sreg=2, dir=W, tag=2)
        await cube.cmd(1, "MERGE", rows=rows, sreg=0, sreg2=2, tag=3)
        await cube.cmd(1, "IPCQ_PUSH", rows=rows, sreg=0, dir=E, push_tag=0x52, tag=4)
    await wait_child(cube, 2, mode != "cut_through", "PE 2: the packet of PE 1")
    if streamed:
        await cube.cmd(2, "MERGE", rows=rows, sreg=0, src_q=1, dir=W, tag=5)
    else:
        await cube.cmd(2, "IPCQ_POP", rows=rows, sreg=2, dir=W, tag=5)
        await cube.cmd(2, "MERGE", rows=rows, sreg=0, sreg2=2, tag=6)
    o = await sessions[2].store(0, rows)
    for p in range(NPE):
        await cube.wait_idle(p, MAX_CYCLES)
    chain = cube.now() - t0
    trace.running = False
    await mon
    await s0.finish(0, 1, 2)

    ba = merge(b, a)
    bad = state_bits_equal(read_state(cube, 1, 0, rows), ba)
    v.check(bad == 0, f"{mode}: PE 1's merged (m, l, O): {bad} fp32 words differ from attention.merge")
    sessions[2].check_o(await sessions[2].read_o(*o), merge(c, ba), f"{mode}: PE 2's stored O")
    check_header(v, int(cube.core(1).pop_info.value), d, rows, 0, 0x51, f"{mode}: PE 1 POP_INFO", width)
    check_header(v, int(cube.core(2).pop_info.value), d, rows, 1, 0x52, f"{mode}: PE 2 POP_INFO", width)
    s0.check_counts(0, cnt_push=1)
    s0.check_counts(1, cnt_pop=1, cnt_merge=1, cnt_push=1)
    s0.check_counts(2, cnt_pop=1, cnt_merge=1, cnt_push=0, cnt_store=1)
    words = 1 + mlo_words(d, rows, 1, width)
    for p, n in ((0, words), (1, words)):
        v.check(len(trace.pushes[p]) == n, f"{mode}: PE {p} pushed {len(trace.pushes[p])} words East, "
                f"expected the packet's {n}")
    line = f"IPCQ_W {width}, rows {rows}, {mode}: PE 0 push -> PE 2 merged and stored in {chain} cycles"
    if streamed:
        for p, push, arrivals in ((1, True, trace.pushes[0]), (2, False, trace.pushes[1])):
            start, _ = trace.smerge(p)
            blocked = trace.blocked[p]
            model = stream_merge(rows, d, width, start, arrivals, push, lanes, lambda e: e not in blocked)
            for err in compare_timing(trace.measured(p, push), model, f"{mode}: PE {p}'s streamed MERGE"):
                v.check(False, err)
            line += f"; PE {p} merge {model.done - start} cycles"
    cube.dut._log.info("REPORT pe_merge %s", line)
    v.finish()


@cocotb.test()
async def stream_merge_faults(dut) -> None:
    """The streamed form's faults on PE 0: an empty queue, reserved combinations, edges, framing."""
    cube, s0, v = await start_session(dut, "pe_merge")
    rows = 8
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=E, tag=0x31), "F_EMPTY", 0x31,
                       "streamed MERGE on an empty queue")
    for tag, f, what in ((0x32, dict(src_q=1, dir=E, sreg2=1), "SRC_Q with SREG2 != 0"),
                         (0x33, dict(push_en=1, pdir=E), "PUSH_EN without SRC_Q"),
                         (0x34, dict(pdir=E), "PDIR without SRC_Q")):
        await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, tag=tag, **f), "F_RSVD", tag, f"MERGE {what}")
    rb = reserved_bit("MERGE")
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=E, tag=0x35) | 1 << rb, "F_RSVD",
                       0x35, f"MERGE with reserved bit {rb} set")
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=W, tag=0x36), "F_EDGE", 0x36,
                       "streamed MERGE from the West edge")
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=E, push_en=1, pdir=W, tag=0x37),
                       "F_EDGE", 0x37, "streamed MERGE pushing to the West edge")
    # a KV block, then a partial of other ROWS, from PE 1: each consumed whole, F_FRAME
    await cube.cmd(1, "KV_SEND", dir=W, kv_addr=0, kv_bytes=128, tag=0x40)
    await wait_pop_avail(cube, 0, E, "PE 0: PE 1's KV block")
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=E, tag=0x38), "F_FRAME", 0x38,
                       "streamed MERGE of a KV block", pop_info_kept=False)
    v.check(int(cube.core(0).pop_info.value) >> 16 & 0xFF == 0x02, "F_FRAME on a KV block: POP_INFO is not its "
            f"header (KIND {int(cube.core(0).pop_info.value) >> 16 & 0xFF:#x}, expected 0x02)")
    await cube.cmd(1, "NOP", sreg=1, init=1)
    await cube.cmd(1, "IPCQ_PUSH", rows=4, sreg=1, dir=W, push_tag=0x41)
    await wait_pop_avail(cube, 0, E, "PE 0: PE 1's 4-row partial")
    await expect_fault(cube, v, encode_cmd("MERGE", rows=rows, src_q=1, dir=E, tag=0x39), "F_FRAME", 0x39,
                       "streamed MERGE (8 rows) of a 4-row partial", pop_info_kept=False)
    check_header(v, int(cube.core(0).pop_info.value), s0.d, 4, 1, 0x41, "F_FRAME: PE 0 POP_INFO",
                 cube.p["IPCQ_W"])
    v.check(cube.pop_avail(0) == 0 and not cube.pop_head(0), f"F_FRAME: words left in PE 0's queues "
            f"(pop_valid {cube.pop_head(0):04b}): the faulting packet was not consumed whole")
    await s0.finish(0, 1)
    v.finish()


@cocotb.test()
async def kv_block_at_link_width(dut) -> None:
    """KV_SEND / KV_RECV at the build's link width: 320 bytes of PE 0's slice (5 slice words, not a
    multiple of every width's words per slice word) arrive intact in PE 1's slice, no fault (KV_RECV
    checks the header's LEN = bytes / (IPCQ_W / 8) and faults F_FRAME on a mismatch)."""
    cube, s0, v = await start_session(dut, "pe_merge")
    width, nbytes = cube.p["IPCQ_W"], 320
    data = np.random.default_rng(v.seed).integers(0, 256, nbytes, dtype=np.uint8)
    await cube.load(0, 0x400, data)
    await cube.cmd(1, "KV_RECV", dir=W, kv_addr=0x800, kv_bytes=nbytes, tag=0x61)
    await cube.cmd(0, "KV_SEND", dir=E, kv_addr=0x400, kv_bytes=nbytes, tag=0x62)
    await s0.finish(0, 1)
    got = (await cube.read_bf16(1, 0x800, nbytes // 2)).view(np.uint8)
    bad = int(np.count_nonzero(got != data))
    v.check(bad == 0, f"KV block at {width} bits: {bad} of {nbytes} bytes differ in PE 1's slice")
    s0.check_counts(0, cnt_tx=1)
    s0.check_counts(1, cnt_rx=1)
    v.finish()


@cocotb.test()
async def test_decode_launch(dut) -> None:
    """A whole decode launch, three requests on N = 2 PEs each, at this bench's link width (64, 256 or
    512 bits): the tree's child polls, hits and misses covered by the next request's tiles, at every width
    the reduction benches build (the AHBM coverage model's width x poll, tb/cover/ahbm.py); O and counts
    scored as in tb.ahbm.test_ahbm."""
    requests = [Request(17 + 9 * r, 16 + 9 * r, 1, 3 * r + 1) for r in range(3)]
    await run_batch(dut, "decode_launch", requests, n=2, tile=8)
