"""Module bench of the AHBM PE (rtl/ahbm/pe/pe_core.v) on a 1x2 CUBE.

PE 0 computes; PE 1 is its east neighbour (tail push / pop). Every test loads
random bf16 Q, K, V (and masks) into PE 0's slice in one backdoor call, writes
commands, waits on the PE's events, and checks:
* the state or stored O bit for bit against models/ahbm/attention.py run on the
  same operands in the same order;
* one ADR §8 requirement each (test names say which), from the PE's counters
  and its composite trace (cycles of K/V issue and landing, S2 and S6 start);
* command faults (every code) and the enqueue-while-full monitor.
"""

from __future__ import annotations

import cocotb
import numpy as np
from cocotb.triggers import FallingEdge, First, RisingEdge, Timer

from models.ahbm.attention import empty_state, finalize, merge
from models.ahbm.launch import BF16_NEG_INF
from models.ahbm.ipcq import COMMON_FIELDS, OP_FIELDS, OPCODES, decode_cmd, encode_cmd
from tb.ahbm.cube import PERIOD_NS, CubeTimeout
from tb.ahbm.pe_bench import (FAULT_CODES, MAX_CYCLES, PeTB, Tile, bf16_nan, check_header, expect_fault, kv_bytes,
                               mask_bytes, mm_cycles, model_sweep, report, reserved_bit, set_field, start_session,
                               wait_done, wait_pop_avail)
from tb.lib.verdict import Verdict

E, W = 1, 3                 # IPCQ directions used here


# ---------------------------------------------------------------- the composite, bit exact


@cocotb.test()
async def composite_bit_exact(dut) -> None:
    """Sweeps of ATTN_TILE (full, ragged and 1-key tiles, 1..64 rows) = attn_tile chained, bit for bit."""
    cube, s, v = await start_session(dut, "pe")
    cases = [(8, [32, 32, 17]), (1, [5, 128]), (64, [1, 31]), (3, [64])]
    plan = []
    for rows, keys in cases:
        q_addr, q = s.q(rows)
        plan.append((rows, q_addr, q, [s.tile(k) for k in keys]))
    await s.load()
    outs = []
    for i, (rows, q_addr, q, tiles) in enumerate(plan):
        await cube.cmd(0, "LOAD_Q", rows=rows, qreg=i % 4, q_addr=q_addr)
        for j, t in enumerate(tiles):
            await s.attn(t, rows, sreg=i, qreg=i % 4, init=(j == 0))
        outs.append(await s.store(i, rows))
    await s.finish()
    for (rows, _, q, tiles), (o_addr, _) in zip(plan, outs):
        s.check_o(await s.read_o(o_addr, rows), model_sweep(q, tiles), f"{rows} rows x {len(tiles)} tiles")
    n_tiles = sum(len(p[3]) for p in plan)
    s.check_counts(0, cnt_comp=n_tiles, cnt_k=n_tiles, cnt_v=n_tiles, cnt_q=len(plan), cnt_store=len(plan),
                   cnt_mask=0)
    v.finish()


# ---------------------------------------------------------------- ADR §8.1: fusion, K early / V at its own point


@cocotb.test()
async def f1_fusion_k_early_v_at_own_point(dut) -> None:
    """One ATTN_TILE runs DMA + MM + VEC + MM: K requested before V, S2 waits for K only, S6 for V only.

    A sweep of 4 tiles with look-ahead, then the same 4 tiles with FENCE on each
    (no look-ahead: the engine is idle when every K lands, so S2 visibly starts
    before V has landed on every tile)."""
    cube, s, v = await start_session(dut, "pe")
    rows, keys, n = 8, 32, 4
    q_addr, q = s.q(rows)
    tiles = [s.tile(keys) for _ in range(n)]
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    for j, t in enumerate(tiles):
        await s.attn(t, rows, sreg=0, init=(j == 0), tag=j + 1)
    o_free = await s.store(0, rows)
    for j, t in enumerate(tiles):
        await s.attn(t, rows, sreg=1, init=(j == 0), tag=0x40 + j, fence=True)
    o_fence = await s.store(1, rows)
    await s.finish()
    mm = mm_cycles(cube, rows, keys)
    tr = s.trace(2 * n)
    for j, e in enumerate(tr):
        sweep = "look-ahead" if j < n else "fenced"
        w = f"{sweep} composite {j % n}"
        v.check(e["kiss"] < e["viss"], f"{w}: K issued at {e['kiss']}, not before V ({e['viss']})")
        v.check(e["viss"] < e["s2"] + mm, f"{w}: V issued at {e['viss']}, after S2 completed ({e['s2']} + {mm})")
        v.check(e["s2"] >= e["kland"], f"{w}: S2 started at {e['s2']} before K landed ({e['kland']})")
        v.check(e["s6"] >= e["vland"], f"{w}: S6 started at {e['s6']} before V landed ({e['vland']})")
        v.check(e["s6"] >= e["s2"] + mm, f"{w}: S6 at {e['s6']} before S2's MM stage ended ({e['s2']} + {mm})")
        if j == 0 or j > n:             # the engine idle when K landed (the first fenced tile was fetched ahead)
            v.check(e["s2"] < e["vland"], f"{w}: S2 started at {e['s2']}, not before V landed ({e['vland']}): "
                    "S2 waited for V")
        if j > n:
            v.check(e["kiss"] > tr[j - 1]["s6"], f"{w}: K issued at {e['kiss']} before the previous fenced "
                    f"composite's S6 ({tr[j - 1]['s6']}): FENCE did not stop the look-ahead")
    e0 = tr[0]
    report(dut, f"f1: tile 0 K issued {e0['kiss']} landed {e0['kland']}, V issued {e0['viss']} landed "
           f"{e0['vland']}, S2 {e0['s2']} ({e0['vland'] - e0['s2']} cycles before V landed), S6 {e0['s6']}")
    model = model_sweep(q, tiles)
    s.check_o(await s.read_o(*o_free), model, "look-ahead sweep of 4 tiles")
    s.check_o(await s.read_o(*o_fence), model, "fenced sweep of 4 tiles")
    s.check_counts(0, cnt_comp=2 * n, cnt_k=2 * n, cnt_v=2 * n)
    v.finish()


# ---------------------------------------------------------------- ADR §8.2: carried (m, l, O)


@cocotb.test()
async def f2_state_carried(dut) -> None:
    """Two sweeps interleaved tile by tile on S0 and S5 (Q0 / Q2, INIT on each first tile) = two
    independent model sweeps; MERGE S0,S5 = attention.merge, and S5 is left as it was."""
    cube, s, v = await start_session(dut, "pe")
    rows, sa, sb, qa, qb = 8, 0, 5, 0, 2
    qa_addr, q_a = s.q(rows)
    qb_addr, q_b = s.q(rows)
    ta = [s.tile(32) for _ in range(3)]
    tb = [s.tile(24) for _ in range(3)]
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=qa, q_addr=qa_addr)
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=qb, q_addr=qb_addr)
    for j in range(3):
        await s.attn(ta[j], rows, sreg=sa, qreg=qa, init=(j == 0), tag=2 * j)
        await s.attn(tb[j], rows, sreg=sb, qreg=qb, init=(j == 0), tag=2 * j + 1)
    o_a = await s.store(sa, rows)
    o_b = await s.store(sb, rows)
    await cube.cmd(0, "MERGE", sreg=sa, sreg2=sb, rows=rows, tag=0x77)
    o_m = await s.store(sa, rows)
    o_b2 = await s.store(sb, rows)
    await s.finish()
    st_a, st_b = model_sweep(q_a, ta), model_sweep(q_b, tb)
    s.check_o(await s.read_o(*o_a), st_a, f"S{sa} (Q{qa}, 3 tiles of 32 keys)")
    s.check_o(await s.read_o(*o_b), st_b, f"S{sb} (Q{qb}, 3 tiles of 24 keys)")
    s.check_o(await s.read_o(*o_m), merge(st_a, st_b), f"MERGE S{sa},S{sb}")
    s.check_o(await s.read_o(*o_b2), st_b, f"S{sb} after the MERGE (operand B must be unchanged)")
    s.check_counts(0, cnt_comp=6, cnt_merge=1, cnt_store=4, cnt_q=2)
    v.finish()


# ---------------------------------------------------------------- ADR §8.3: the mask is an input operand


@cocotb.test()
async def f3_mask_is_an_operand(dut) -> None:
    """One K/V tile under two random mask tiles from memory; a fully masked row gives O = 0, no NaN,
    also after an unmasked tile follows it; cnt_mask and the DMA bytes follow the shapes."""
    cube, s, v = await start_session(dut, "pe")
    d, rows, keys = s.d, 8, 40               # 40 keys: the stored mask rows are padded to 64
    q_addr, q = s.q(rows)
    base = s.tile(keys)
    other = s.tile(32)                       # unmasked, after the fully masked row
    runs = []
    for full_row in (None, 5):
        m = np.where(s.rng.random((rows, keys)) < 0.5, BF16_NEG_INF, 0).astype(np.uint16)
        m[:, int(s.rng.integers(keys))] = 0  # every row keeps a key ...
        if full_row is not None:
            m[full_row, :] = BF16_NEG_INF  # ... but this one
        t = Tile(keys, base.k_addr, base.v_addr, base.k, base.v)
        s.set_mask(t, m)
        runs.append((t, full_row))
    await s.load()
    dma_expect = rows * d * 2
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    outs = []
    for i, (t, _) in enumerate(runs):
        await s.attn(t, rows, sreg=i, init=True, tag=i)
        outs.append(await s.store(i, rows))
        dma_expect += 2 * kv_bytes(keys, d) + mask_bytes(rows, keys)
    # the fully masked state carried into an unmasked tile (alpha = exp(-inf) = 0 path)
    await s.attn(runs[1][0], rows, sreg=2, init=True, tag=2)
    await s.attn(other, rows, sreg=2, tag=3)
    o_chain = await s.store(2, rows)
    dma_expect += 2 * kv_bytes(keys, d) + mask_bytes(rows, keys) + 2 * kv_bytes(other.keys, d)
    await s.finish()
    for i, (t, full_row) in enumerate(runs):
        got = await s.read_o(*outs[i])
        st = model_sweep(q, [t])
        s.check_o(got, st, f"mask {i}" + (f" (row {full_row} fully masked)" if full_row is not None else ""))
        v.check(not bf16_nan(got).any(), f"mask {i}: NaN in the stored O")
        if full_row is not None:
            v.check(not np.any(got[full_row]), f"mask {i}: fully masked row {full_row} stored "
                    f"{np.count_nonzero(got[full_row])} non-zero values, expected O = 0")
            v.check(np.isneginf(st.m[full_row]) and st.l[full_row] == 0, "model: the fully masked row is not "
                    "(m=-inf, l=0)")
    other_mask = Tile(keys, base.k_addr, base.v_addr, base.k, base.v)
    got_a = await s.read_o(*outs[0])
    v.check(np.any(got_a != finalize(model_sweep(q, [other_mask]))), "mask 0 changes nothing: the mask "
            "test cannot tell a masked run from an unmasked one")
    s.check_o(await s.read_o(*o_chain), model_sweep(q, [runs[1][0], other]), "fully masked row, then an "
              "unmasked tile")
    c = s.check_counts(0, cnt_mask=3, cnt_k=4, cnt_v=4, cnt_comp=4)
    v.check(c["dma_bytes"] == dma_expect, f"DMA bytes {c['dma_bytes']}, expected Q + K + V + mask = "
            f"{dma_expect} from the shapes")
    v.finish()


# ---------------------------------------------------------------- ADR §8.4: tail push to a named direction


@cocotb.test()
async def f4_tail_push_to_direction(dut) -> None:
    """PE 0's last tile pushes (m,l,O) East; PE 1 pops it from West = the model state; PE 1 pushes it back
    with IPCQ_PUSH, PE 0 pops it; a push towards the edge faults F_EDGE and pushes nothing."""
    cube, s, v = await start_session(dut, "pe")
    d, rows, ptag, ptag2 = s.d, 8, 0xA7, 0x3C
    q_addr, q = s.q(rows)
    tiles = [s.tile(32), s.tile(20)]
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    await s.attn(tiles[0], rows, sreg=0, init=True, tag=1)
    await s.attn(tiles[1], rows, sreg=0, push=E, tag=ptag)
    await wait_pop_avail(cube, 1, W, "PE 1: a packet from West")
    await cube.cmd(1, "IPCQ_POP", sreg=2, dir=W, rows=rows, tag=0x21)
    o1 = await s.store(2, rows, pe=1)
    await cube.cmd(1, "IPCQ_PUSH", sreg=2, dir=W, rows=rows, push_tag=ptag2, tag=0x22)
    await wait_pop_avail(cube, 0, E, "PE 0: the packet pushed back from East")
    await cube.cmd(0, "IPCQ_POP", sreg=4, dir=E, rows=rows, tag=0x23)
    o0 = await s.store(4, rows)
    await cube.wait_idle(1, MAX_CYCLES)
    await cube.wait_idle(0, MAX_CYCLES)
    model = model_sweep(q, tiles)
    s.check_o(await s.read_o(*o1, pe=1), model, "PE 1: popped tail push, NORM_STORE")
    s.check_o(await s.read_o(*o0), model, "PE 0: the state pushed back by PE 1 (IPCQ_PUSH), popped, NORM_STORE")
    check_header(v, int(cube.core(1).pop_info.value), d, rows, 0, ptag, "PE 1 POP_INFO")
    check_header(v, int(cube.core(0).pop_info.value), d, rows, 1, ptag2, "PE 0 POP_INFO")
    s.check_counts(0, cnt_push=1, cnt_pop=1, cnt_comp=2)
    s.check_counts(1, cnt_push=1, cnt_pop=1, cnt_store=1, cnt_comp=0, cnt_k=0)
    v.check(cube.pop_avail(0) == 0 and cube.pop_avail(1) == 0, f"packets left over: pop_avail PE 0 "
            f"{cube.pop_avail(0):04b}, PE 1 {cube.pop_avail(1):04b}")
    # towards the edge (PE 0 has no West neighbour): F_EDGE, nothing fetched, nothing pushed
    before = cube.counters(0)
    await s.attn(tiles[0], rows, sreg=6, init=True, push=W, tag=0x5E)
    await cube.wait_idle(0, MAX_CYCLES)
    f = cube.fault(0)
    v.check(f.code == FAULT_CODES["F_EDGE"] and f.tag == 0x5E, f"tail push towards the West edge: fault {f.name} tag {f.tag:#x}, "
            "expected F_EDGE tag 0x5e")
    after = cube.counters(0)
    for k in ("cnt_push", "cnt_k", "cnt_v", "cnt_comp", "dma_bytes"):
        v.check(after[k] == before[k], f"tail push towards the edge: {k} {before[k]} -> {after[k]}, expected "
                "unchanged (the faulting command does nothing)")
    v.check(int(cube.core(0).push_valid.value) == 0, "PE 0 still offers a push word after F_EDGE")
    await cube.clear_fault(0)
    await s.finish(0, 1)
    v.finish()


# ---------------------------------------------------------------- ADR §8.5: early V, prefetch >= 2


@cocotb.test()
@cocotb.parametrize(prefetch=[None, 1])
async def f5_v_overlap_and_prefetch(dut, prefetch: int | None) -> None:
    """8 tiles of 64 keys: the front-end issues K then V PREFETCH tiles ahead of compute and never holds
    more than PREFETCH+1 tiles; compute is hidden under DMA; O bit exact. Run at the build's PREFETCH
    and at PREFETCH 1 chosen at run time (cfg_prefetch) on the same build."""
    cube, s, v = await start_session(dut, "pe", prefetch)
    pf, d, rows, keys, n = cube.p["PREFETCH"], s.d, 8, 64, 8
    q_addr, q = s.q(rows)
    uniq = [s.tile(keys) for _ in range(4)]       # 8 tiles of 8 KiB do not fit the 64 KiB slice: reused
    tiles = [uniq[j % len(uniq)] for j in range(n)]
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    for j, t in enumerate(tiles):
        await s.attn(t, rows, sreg=0, init=(j == 0), tag=j)
    o = await s.store(0, rows)
    await s.finish()
    tr = s.trace(n)
    for j, e in enumerate(tr):
        dut._log.info("composite %d: %s", j, " ".join(f"{k}={x}" for k, x in e.items()))
        v.check(e["kiss"] < e["viss"] <= e["s2"], f"composite {j}: K issued {e['kiss']}, V issued {e['viss']}, "
                f"S2 {e['s2']}: expected K < V <= S2")
        v.check(e["s2"] >= e["kland"] and e["s6"] >= e["vland"], f"composite {j}: S2 {e['s2']} / K landed "
                f"{e['kland']}, S6 {e['s6']} / V landed {e['vland']}")
        if j >= pf:
            p = tr[j - pf]
            v.check(e["kiss"] <= p["s6"], f"composite {j}: K issued at {e['kiss']}, after composite {j - pf}'s "
                    f"S6 ({p['s6']}): the front-end is not {pf} tiles ahead")
        if j >= pf + 1:
            p = tr[j - pf - 1]
            v.check(e["kiss"] > p["s6"], f"composite {j}: K issued at {e['kiss']}, before composite "
                    f"{j - pf - 1} reached S6 ({p['s6']}): more than PREFETCH+1 = {pf + 1} tiles hold buffers")
    c = s.check_counts(0, cnt_k=n, cnt_v=n, cnt_comp=n, cnt_mask=0)
    v.check(c["cyc_hidden"] > 0, "cyc_hidden = 0: no compute cycle overlapped a DMA transfer")
    v.check(c["dma_bytes"] == rows * d * 2 + n * 2 * kv_bytes(keys, d), f"DMA bytes {c['dma_bytes']}, expected "
            f"{rows * d * 2 + n * 2 * kv_bytes(keys, d)}")
    comp = c["cyc_mm"] + c["cyc_vec"]
    span = c["cyc_last"] - c["cyc_first"]
    report(dut, f"f5: PREFETCH {pf}, {n} tiles x {keys} keys x {rows} rows: hidden {c['cyc_hidden']} of "
           f"{comp} MM+VEC cycles = {c['cyc_hidden'] / max(1, comp):.3f}; wait {c['cyc_wait']}, busy "
           f"{c['cyc_busy']}, first S2 -> last completion {span} cycles, DMA busy {c['dma_busy']}")
    s.check_o(await s.read_o(*o), model_sweep(q, tiles), f"{n} tiles of {keys} keys")
    v.finish()


# ---------------------------------------------------------------- ADR §8.6: GQA, one K/V load per group


@cocotb.test()
async def f6_gqa_one_load_per_group(dut) -> None:
    """The same K/V tiles with ROWS=8 (G=8) and ROWS=1: one K and one V load per tile in both, identical
    K+V bytes; O bit exact; the 1-row sweep (row 0 of the group) equals row 0 of the 8-row one."""
    cube, s, v = await start_session(dut, "pe")
    d, n = s.d, 3
    q_addr, q = s.q(8)
    tiles = [s.tile(32), s.tile(32), s.tile(9)]
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=8, qreg=0, q_addr=q_addr)
    await cube.cmd(0, "LOAD_Q", rows=1, qreg=1, q_addr=q_addr)     # row 0 of the same group
    await s.finish()
    kv_expect = sum(2 * kv_bytes(t.keys, d) for t in tiles)
    snaps, outs = [cube.counters(0)], []
    for i, rows in enumerate((8, 1)):
        for j, t in enumerate(tiles):
            await s.attn(t, rows, sreg=i, qreg=i, init=(j == 0), tag=j)
        outs.append(await s.store(i, rows))
        await s.finish()
        snaps.append(cube.counters(0))
    for i, rows in enumerate((8, 1)):
        a, b = snaps[i], snaps[i + 1]
        for k in ("cnt_k", "cnt_v"):
            v.check(b[k] - a[k] == n, f"ROWS={rows}: {k} grew by {b[k] - a[k]}, expected {n} (one per tile)")
        v.check(b["dma_bytes"] - a["dma_bytes"] == kv_expect, f"ROWS={rows}: K+V DMA bytes "
                f"{b['dma_bytes'] - a['dma_bytes']}, expected {kv_expect} whatever ROWS is")
    o8 = await s.read_o(*outs[0])
    o1 = await s.read_o(*outs[1])
    s.check_o(o8, model_sweep(q, tiles), "ROWS=8 (G=8)")
    s.check_o(o1, model_sweep(q[:1], tiles), "ROWS=1")
    v.check(np.array_equal(o1[0], o8[0]), "row 0 differs between the ROWS=1 and ROWS=8 composites")
    report(dut, f"f6: {n} tiles, K+V bytes {kv_expect} for ROWS=8 and for ROWS=1")
    v.finish()


# ---------------------------------------------------------------- command faults


@cocotb.test()
async def faults(dut) -> None:
    """Every fault code (F_RANGE and F_EDGE twice): code and tag, the queue stops and resumes on fault_clr,
    cnt_fault counts, the faulting command does nothing (F_FRAME: the packet is consumed, the state is not
    written)."""
    cube, s, v = await start_session(dut, "pe")
    d, rows, slice_bytes = s.d, 8, cube.p["WORDS"] * 64
    q_addr, q = s.q(rows)
    t = s.tile(32)
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    await s.attn(t, rows, sreg=3, init=True, tag=1)                # S3: a known state the F_FRAME pop must not touch
    await s.finish()
    good = dict(rows=rows, keys=t.keys, sreg=0, qreg=0, k_addr=t.k_addr, v_addr=t.v_addr)
    attn = encode_cmd("ATTN_TILE", tag=0x11, **good)

    rsvd_opc = max(set(range(16)) - set(OPCODES.values()))     # reserved in docs/ahbm.md §4 and the model
    w = set_field(encode_cmd("NOP", tag=0x12), COMMON_FIELDS["opc"], rsvd_opc)
    await expect_fault(cube, v, w, "F_OPCODE", 0x12, f"opcode {rsvd_opc}")
    w = set_field(encode_cmd("ATTN_TILE", tag=0x13, **good), COMMON_FIELDS["rows_m1"], 64)
    await expect_fault(cube, v, w, "F_ROWS", 0x13, "ATTN_TILE rows_m1 = 64")
    k_addr = OP_FIELDS["ATTN_TILE"]["k_addr"]
    w = set_field(encode_cmd("ATTN_TILE", tag=0x14, **good), k_addr, t.k_addr + 32)
    await expect_fault(cube, v, w, "F_ALIGN", 0x14, "ATTN_TILE k_addr + 32")
    last_word = slice_bytes - 64                                    # starts inside the slice, ends past it
    w = encode_cmd("ATTN_TILE", tag=0x15, **{**good, "v_addr": last_word})
    await expect_fault(cube, v, w, "F_RANGE", 0x15, f"ATTN_TILE v_addr {last_word:#x} (+ {kv_bytes(32, d)} bytes)")
    w = encode_cmd("ATTN_TILE", tag=0x1C, **{**good, "k_addr": slice_bytes})
    await expect_fault(cube, v, w, "F_RANGE", 0x1C, f"ATTN_TILE k_addr {slice_bytes:#x} (= WORDS*64)")
    await expect_fault(cube, v, encode_cmd("IPCQ_POP", tag=0x16, sreg=1, dir=E, rows=rows), "F_EMPTY", 0x16,
                       "IPCQ_POP from East with nothing queued")
    await expect_fault(cube, v, encode_cmd("IPCQ_PUSH", tag=0x17, sreg=3, dir=W, rows=rows), "F_EDGE", 0x17,
                       "IPCQ_PUSH towards the West edge")
    await expect_fault(cube, v, encode_cmd("IPCQ_POP", tag=0x18, sreg=1, dir=2, rows=rows), "F_EDGE", 0x18,
                       "IPCQ_POP from the South edge")
    rb = reserved_bit("ATTN_TILE")
    w = attn | 1 << rb
    try:
        decode_cmd(w)
        v.check(False, f"the model accepts ATTN_TILE with bit {rb} set: not a reserved bit")
    except ValueError:
        pass
    w = set_field(w, COMMON_FIELDS["tag"], 0x19)
    await expect_fault(cube, v, w, "F_RSVD", 0x19, f"ATTN_TILE with reserved bit {rb} set")

    # F_FRAME: PE 1 pushes a 4-row (empty) state, PE 0 pops it declaring 8 rows into S3
    await cube.cmd(1, "NOP", sreg=0, init=1)
    await cube.cmd(1, "IPCQ_PUSH", sreg=0, dir=W, rows=4, push_tag=0x44, tag=0x31)
    await wait_pop_avail(cube, 0, E, "PE 0: PE 1's 4-row packet")
    await expect_fault(cube, v, encode_cmd("IPCQ_POP", tag=0x1A, sreg=3, dir=E, rows=rows), "F_FRAME", 0x1A,
                       "IPCQ_POP rows=8 of a 4-row packet", pop_info_kept=False)
    check_header(v, int(cube.core(0).pop_info.value), d, 4, 1, 0x44, "F_FRAME: PE 0 POP_INFO")
    await cube.wait_idle(1, MAX_CYCLES)
    v.check(cube.pop_avail(0) >> E & 1 == 0, "F_FRAME: the bad packet was not consumed (pkt_avail still set)")
    # the framing is intact after it: a correct 8-row packet pops cleanly into S6
    await cube.cmd(1, "IPCQ_PUSH", sreg=0, dir=W, rows=rows, push_tag=0x45, tag=0x32)
    await wait_pop_avail(cube, 0, E, "PE 0: PE 1's 8-row packet")
    await cube.cmd(0, "IPCQ_POP", sreg=6, dir=E, rows=rows, tag=0x1B)
    o_empty = await s.store(6, rows)
    o_s3 = await s.store(3, rows)
    await s.finish(0, 1)
    check_header(v, int(cube.core(0).pop_info.value), d, rows, 1, 0x45, "after F_FRAME: PE 0 POP_INFO")
    s.check_o(await s.read_o(*o_s3), model_sweep(q, [t]), "S3 after the F_FRAME pop into it (must be untouched)")
    s.check_o(await s.read_o(*o_empty), empty_state(rows, d), "the empty 8-row state popped after F_FRAME")
    s.check_counts(0, cnt_fault=10, cnt_pop=1, cnt_comp=1, cnt_k=1, cnt_v=1)
    s.check_counts(1, cnt_fault=0, cnt_push=2)
    v.finish()


# ---------------------------------------------------------------- monitor self-test


@cocotb.test()
async def monitor_enqueue_while_full(dut) -> None:
    """A command written while PE 0's queue is full: the core's monitor must raise mon_err, the command is
    dropped, reset clears mon_err. Passes only if mon_err rose."""
    # the monitor's line in sim.log is expected here (tb.run.regress counts it), as in the ipcq monitor self-tests
    cube, s, v = await start_session(dut, "pe")
    depth, rows = cube.p["CMDQ_DEPTH"], 1
    q_addr, _ = s.q(rows)
    t = s.tile(1)
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)   # held ~DMA_LAT cycles: the rest piles up
    for j in range(depth - 1):
        await s.attn(t, rows, sreg=0, init=(j == 0), tag=j + 1)
    core = cube.core(0)
    await FallingEdge(cube.clk)
    v.check(int(core.cmd_ready.value) == 0 and int(core.cmdq_free.value) == 0,
            f"queue not full after {depth} commands: cmd_ready {int(core.cmd_ready.value)}, "
            f"{int(core.cmdq_free.value)} free, {int(core.cmd_done.value)} done")
    v.check(not cube.mon_err(), "mon_err set before the forced write")
    dut.cmd_data[0].value = encode_cmd("NOP", tag=0xEE)             # forced: valid while not ready
    dut.cmd_valid[0].value = 1
    await RisingEdge(cube.clk)
    await FallingEdge(cube.clk)
    dut.cmd_valid[0].value = 0
    await First(RisingEdge(dut.mon_err), Timer(8 * PERIOD_NS, "ns"))
    v.check(cube.mon_err(), "a command written while the queue was full did not raise mon_err within 8 cycles")
    await cube.wait_idle(0, MAX_CYCLES)
    c = cube.counters(0)
    v.check(c["cmd_done"] == depth, f"{c['cmd_done']} commands completed, expected {depth} (the forced one "
            "must be dropped)")
    v.check(int(core.last_tag.value) == depth - 1, f"last completed tag {int(core.last_tag.value):#x}, expected "
            f"the last queued tile's {depth - 1:#x}")
    v.check(cube.fault(0).code == 0, f"PE 0 faulted: {cube.fault(0).name}")
    v.cycles = cube.now() - s.t0
    await cube.reset()
    v.check(not cube.mon_err(), "reset did not clear the sticky mon_err")
    v.finish()


@cocotb.test()
@cocotb.parametrize(reg=["cfg_prefetch", "cfg_dma_lat", "cfg_ipcq_depth"])
async def monitor_runtime_config_out_of_range(dut, reg: str) -> None:
    """A run-time PREFETCH, DMA latency or IPCQ depth the build cannot hold (written past the harness's
    refusal, as a direct Verilog user could): the core's, the DMA's or the queues' monitor must raise
    mon_err. Passes only if it rose."""
    key = {"cfg_prefetch": "PREFETCH", "cfg_dma_lat": "DMA_LAT", "cfg_ipcq_depth": "IPCQ_DEPTH"}[reg]
    cube, s, v = await start_session(dut, "pe")
    v.check(not cube.mon_err(), "mon_err set before the bad configuration")
    bad = cube.built[key] + 1
    getattr(dut, reg).value = bad
    await First(RisingEdge(dut.mon_err), Timer(8 * PERIOD_NS, "ns"))
    v.check(cube.mon_err(), f"{reg}={bad} (the build holds up to {bad - 1}) did not raise mon_err within 8 cycles")
    getattr(dut, reg).value = cube.p[key]
    v.cycles = cube.now() - s.t0
    await cube.reset()
    v.check(not cube.mon_err(), "reset did not clear the sticky mon_err")
    v.finish()


# ---------------------------------------------------------------- the checkers can fail


@cocotb.test()
async def checker_fails_on_wrong_value(dut) -> None:
    """check_o flags one flipped bf16 bit and check_counts a count off by one (on a probe verdict), and
    both pass the right values: the bench's checkers cannot pass silently."""
    cube, s, v = await start_session(dut, "pe")
    rows = 8
    q_addr, q = s.q(rows)
    t = s.tile(32)
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=q_addr)
    await s.attn(t, rows, sreg=0, init=True)
    o = await s.store(0, rows)
    await s.finish()
    got = await s.read_o(*o)
    st = model_sweep(q, [t])
    s.check_o(got, st, "the real output")
    probe = PeTB(cube, Verdict(v.bench, v.test + ".probe", v.seed, v.run_seed, dut._log), v.seed)
    probe.check_o(got, st, "probe: right value")
    v.check(probe.v.failures == [] and probe.v.checks == 1, f"check_o failed on the right value: "
            f"{probe.v.failures}")
    r, c, bit = int(s.rng.integers(rows)), int(s.rng.integers(s.d)), int(s.rng.integers(16))
    bad = got.copy()
    bad[r, c] ^= np.uint16(1 << bit)
    probe.check_o(bad, st, "probe: one flipped bit")
    v.check(len(probe.v.failures) == 1 and f"({r}, {c})" in probe.v.failures[0],
            f"check_o on O with bit {bit} of ({r}, {c}) flipped: failures {probe.v.failures}")
    probe.v.failures.clear()
    n = cube.counters(0)["cnt_comp"]
    probe.check_counts(0, cnt_comp=n)
    v.check(probe.v.failures == [], f"check_counts failed on the right count: {probe.v.failures}")
    probe.check_counts(0, cnt_comp=n + 1, cnt_k=n)
    v.check(len(probe.v.failures) == 1 and "cnt_comp" in probe.v.failures[0],
            f"check_counts with cnt_comp off by one: failures {probe.v.failures}")
    probe.v.failures.clear()
    v.finish()


# ---------------------------------------------------------------- regressions


@cocotb.test()
async def fence_on_load_q(dut) -> None:
    """LOAD_Q with FENCE=1: the tile behind it must not be fetched before it completes (docs/ahbm.md §3).
    Regression: the front-end used to ignore FENCE on LOAD_Q."""
    cube, s, v = await start_session(dut, "pe")
    q_addr, q = s.q(8)
    t = s.tile(32)
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=8, qreg=0, q_addr=q_addr, fence=1, tag=1)
    await s.attn(t, 8, sreg=0, init=True, tag=2)
    o = await s.store(0, 8)
    await wait_done(cube, 0, 1, "the fenced LOAD_Q to complete")
    seen = int(cube.core(0).cyc_now.value)      # the first falling edge after the completion
    await s.finish()
    kiss = s.trace(1)[0]["kiss"]
    v.check(kiss >= seen, f"the ATTN_TILE behind a fenced LOAD_Q issued its K at cycle {kiss}, before the "
            f"LOAD_Q completed (seen complete at cycle {seen})")
    s.check_o(await s.read_o(*o), model_sweep(q, [t]), "O")
    v.finish()


@cocotb.test()
async def load_q_fetched_ahead(dut) -> None:
    """The front-end fetches a LOAD_Q ahead like a tile once nothing before it reads or loads its Q slot:
    a new request's Q into a free slot lands while the previous tiles compute; reloading a slot waits
    for the tiles that read its old contents (docs/ahbm.md §3). Bits: all three sweeps = the model's."""
    cube, s, v = await start_session(dut, "pe")
    rows = 8
    qa_addr, q_a = s.q(rows)
    qb_addr, q_b = s.q(rows)
    qc_addr, q_c = s.q(rows)
    ta = [s.tile(64) for _ in range(2)]
    tb, tc = s.tile(64), s.tile(64)
    await s.load()
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=qa_addr, tag=1)
    for j, t in enumerate(ta):
        await s.attn(t, rows, sreg=0, qreg=0, init=(j == 0), tag=2 + j)
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=1, q_addr=qb_addr, tag=4)      # a free slot: fetched ahead
    await s.attn(tb, rows, sreg=1, qreg=1, init=True, tag=5)
    await cube.cmd(0, "LOAD_Q", rows=rows, qreg=0, q_addr=qc_addr, tag=6)      # slot 0 again: waits for ta
    await s.attn(tc, rows, sreg=2, qreg=0, init=True, tag=7)
    outs = [await s.store(i, rows) for i in range(3)]
    await s.finish()
    tr = s.trace(4)
    v.check(tr[2]["kiss"] < tr[1]["s6"], f"the tile behind LOAD_Q into a free slot issued its K at cycle "
            f"{tr[2]['kiss']}, not before the previous tile's S6 ({tr[1]['s6']}): the LOAD_Q was not fetched ahead")
    v.check(tr[3]["kiss"] > tr[1]["s6"], f"the tile behind the reload of Q slot 0 issued its K at cycle "
            f"{tr[3]['kiss']}, before the last reader of the old Q0 ran S6 ({tr[1]['s6']})")
    for (o_addr, _), q, tiles, what in zip(outs, (q_a, q_b, q_c), (ta, [tb], [tc]), ("Q0 sweep", "Q1", "Q0 reloaded")):
        s.check_o(await s.read_o(o_addr, rows), model_sweep(q, tiles), what)
    s.check_counts(0, cnt_q=3, cnt_comp=4)
    report(dut, f"LOAD_Q ahead: K of the tile behind Q1's load issued at {tr[2]['kiss']}, the tile before it "
                f"ran S6 at {tr[1]['s6']}")
    v.finish()


@cocotb.test()
async def load_q_waits_across_the_queue_wrap(dut) -> None:
    """The reload of a Q slot waits for a tile that reads its old contents wherever that tile sits in the
    command queue's ring, including past its end: the same round of nine commands (LOAD_Q into Q0 and
    Q1, a long Q1 tile, a short Q0 tile, a reload of Q0, a tile of the new Q0, three NORM_STOREs) runs
    CMDQ_DEPTH times, so nine being odd, the Q0 tile reaches every ring position behind the head. The
    long Q1 tile holds the engine, so a reload fetched ahead over the Q0 tile lands before that tile's
    S2 reads Q0, and shows as its O computed with the new Q. Bits: every round = the model's."""
    cube, s, v = await start_session(dut, "pe")
    depth = cube.p["CMDQ_DEPTH"]
    rows, keys = (4, 16, 4), (16, 64, 16)                         # Q0 old, Q1 (long), Q0 new
    q_addrs, qs = zip(*(s.q(r) for r in rows))
    tiles = [s.tile(k) for k in keys]
    o_addrs = [s.alloc(np.zeros((r, s.d), np.uint16)) for r in rows]
    await s.load()
    models = [model_sweep(q, [t]) for q, t in zip(qs, tiles)]
    for r in range(depth):
        await cube.cmd(0, "LOAD_Q", rows=rows[0], qreg=0, q_addr=q_addrs[0])
        await cube.cmd(0, "LOAD_Q", rows=rows[1], qreg=1, q_addr=q_addrs[1])
        await s.attn(tiles[1], rows[1], sreg=1, qreg=1, init=True)
        await s.attn(tiles[0], rows[0], sreg=0, qreg=0, init=True)
        await cube.cmd(0, "LOAD_Q", rows=rows[2], qreg=0, q_addr=q_addrs[2])    # must wait for the tile above
        await s.attn(tiles[2], rows[2], sreg=2, qreg=0, init=True)
        for i in range(3):
            await cube.cmd(0, "NORM_STORE", sreg=i, rows=rows[i], o_addr=o_addrs[i])
        await s.finish()
        for i, what in enumerate(("Q0 before its reload", "Q1", "Q0 reloaded")):
            s.check_o(await s.read_o(o_addrs[i], rows[i]), models[i], f"round {r}: {what}")
    s.check_counts(0, cnt_q=3 * depth, cnt_comp=3 * depth, cnt_store=3 * depth)
    v.finish()


@cocotb.test()
async def wait_reports_missed_wakeup(dut) -> None:
    """A bounded wait whose condition turns true without any signal it awaits changing (here: time
    alone) ends at its bound as a named failure, never as a late success (the bench's guard against a
    kernel wait that lists the wrong wake-up signals)."""
    cube, s, v = await start_session(dut, "pe")
    t0 = cube.now()
    try:
        await cube.wait_for(0, lambda: cube.now() >= t0 + 20, "time alone", 100)
        v.check(False, "a wait woken by nothing it awaits ended as a success")
    except CubeTimeout as exc:
        v.check("misses a wake-up" in str(exc), f"the wait ended with another message: {exc}")
        v.check(cube.now() - t0 >= 100, f"the wait ended after {cube.now() - t0} cycles, before its bound 100")
    await s.finish()
    v.finish()
