"""Module bench of the orchestrator (rtl/orch/orchestrator.v) on orch_harness.

The orchestrator sits on the Local port of router (1,1) of a 2x2 mesh; bench
endpoints stand on the other Local ports (and on a DIRECT port wired straight
to the orchestrator). The host is cocotbext-axi's AxiLiteMaster behind
tb.orch.host.Orchestrator; expected values come from models.orch.host_port. Each test runs
under a simulated-time watchdog and ends with one verdict. Its monitors'
self-tests are the orch_monitors bench (tb/orch/test_orch_monitors.py).
"""

from __future__ import annotations

import cocotb

from models.cu.base import SigCode
from models.noc.flit import FIELDS, FlitType, describe_flit
from models.orch.host_port import (
    STAGE_BASE,
    STAGE_STRIDE,
    Caps,
    NodeStatus,
    Reg,
    SummaryModel,
    credit_after,
    dispatch_stall_point,
    merge_strobes,
    node_status_addr,
    pack_coord,
    rewrite_header,
    stage_addr,
)
from models.cu.base import signal_flit
from tb.lib.harness import StallMode, StallPattern
from tb.orch.host import AwaitError
from tb.orch.bench import OrchTB

ALL_CODES = (SigCode.INST_COMPLETE, SigCode.BATCH_COMPLETE, SigCode.DATA_RECEIVED, SigCode.FAULT)


def check_dispatched(tb: OrchTB, records, port: int, staged: list[int], dst, what: str) -> None:
    """Flit by flit: the flits captured at `port` are the staged ones, rewritten, in order."""
    v = tb.verdict
    got = [r.flit for r in records if r.port == port]
    v.check(len(got) == len(staged), f"{what}: {len(got)} flits captured at port {port}, {len(staged)} dispatched")
    for i, (flit, sent) in enumerate(zip(got, staged)):
        want = rewrite_header(sent, dst, tb.own)
        v.check(flit == want, f"{what}: flit {i} is\n    {describe_flit(flit)}\n  expected\n    {describe_flit(want)}")
    others = [r for r in records if r.port != port]
    v.check(not others, f"{what}: {len(others)} flit(s) captured at other ports")


# ==================================================================== registers
@cocotb.test()
async def test_registers(dut) -> None:
    """CAPS, register read-back, unmapped offsets, byte strobes, STAGE read-back."""
    tb = OrchTB(dut, "test_registers")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        caps = await h.caps()
        v.check(caps == Caps(288, 4, tb.slots, tb.own), f"CAPS reads {caps}")
        await h.write(Reg.PROG_DST, pack_coord((2, 1)))
        await h.write(Reg.PROG_LEN, 7)
        await h.write(Reg.PROG_BASE, 9)
        await h.write(Reg.PROG_CRED, 5)
        for reg, want in ((Reg.PROG_DST, 0x12), (Reg.PROG_LEN, 7), (Reg.PROG_BASE, 9), (Reg.PROG_CRED, 5),
                          (Reg.PROG_KICK, 0), (Reg.PROG_STAT, 5 << 17), (Reg.SIG_DONE, 0)):
            got = await h.read(reg)
            v.check(got == want, f"{reg.name} reads {got:#x}, expected {want:#x}")
        # Unmapped offsets read 0 and swallow writes without side effects.
        stage_end = STAGE_BASE + tb.slots * STAGE_STRIDE
        for addr in (0x0000, 0x0008, 0x0018, 0x0078, 0x0FF8, 0x1800, 0x1FF8, stage_end, 0xFFF8):
            await h.write(addr, 0xDEAD_BEEF_0BAD_F00D)
            got = await h.read(addr)
            v.check(got == 0, f"unmapped offset {addr:#06x} reads {got:#x}")
        got = await h.read(Reg.PROG_LEN)
        v.check(got == 7, f"PROG_LEN changed to {got} by writes to unmapped offsets")
        # Byte strobes: one byte into PROG_LEN, two into a STAGE word.
        await h.write_bytes(Reg.PROG_LEN + 1, b"\x12")
        got = await h.read(Reg.PROG_LEN)
        v.check(got == 0x1207, f"PROG_LEN after a one-byte write to byte 1 reads {got:#x}, expected 0x1207")
        flits = [tb.random_flit(FlitType.CU_INST) for _ in range(3)]
        slots = [0, tb.slots // 2, tb.slots - 1]
        for slot, flit in zip(slots, flits):
            await h.stage(slot, [flit])
        for slot, flit in zip(slots, flits):
            got = await h.read_stage(slot)
            v.check(got == flit, f"STAGE slot {slot} reads back\n    {describe_flit(got)}\n  staged\n    {describe_flit(flit)}")
        addr = stage_addr(slots[1], 2, tb.slots)
        old = await h.read(addr)
        await h.write_bytes(addr + 4, b"\xa5\x5a")
        got = await h.read(addr)
        want = merge_strobes(old, 0x5AA5 << 32, 0b0011_0000)
        v.check(got == want, f"STAGE word after a two-byte write reads {got:#x}, expected {want:#x}")
        # The header word keeps 32 bits; its upper half reads 0.
        await h.write(stage_addr(0, 4, tb.slots), 0xFFFF_FFFF_1234_5678)
        got = await h.read(stage_addr(0, 4, tb.slots))
        v.check(got == 0x1234_5678, f"STAGE header word reads {got:#x}, expected 0x12345678")
        # NODE_STATUS: empty after reset, writes ignored.
        for coord in tb.nodes() + [(0, 0), (15, 15)]:
            await h.write(node_status_addr(coord), 0xFFFF_FFFF_FFFF_FFFF)
            st = await h.read_node_status(coord)
            v.check(st == NodeStatus(), f"NODE_STATUS{coord} reads {st} before any signal")
        v.check(tb.mon_err == 0, "a monitor fired on legal host traffic")

    await tb.guard(body, 20_000)


# ==================================================================== dispatch
@cocotb.test()
async def test_stage_and_dispatch(dut) -> None:
    """Staged flits go out in order with dst/src rewritten, through the mesh and to the direct port."""
    tb = OrchTB(dut, "test_stage_and_dispatch")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        types = [FlitType.CU_INST] * 12 + [FlitType.CU_CTRL, FlitType.CU_DATA, FlitType.CU_CTRL, FlitType.CU_INST]
        tb.rng.shuffle(types)
        staged = [tb.random_flit(t) for t in types]
        base = 40
        await h.stage(base, staged)
        n_inst = sum(t == FlitType.CU_INST for t in types)

        # 1: all 16 to (2,2), plenty of credit, free-running sinks
        await h.dispatch((2, 2), base, len(staged), 20)
        stat = await h.wait_dispatched(2_000)
        v.check(stat.left == 0 and stat.credit == 20 - n_inst,
                f"after dispatch PROG_STAT is {stat}, expected left 0, credit {20 - n_inst}")
        v.check(await tb.wait_captured(len(staged), 1_000), "not every dispatched flit reached the bank")
        recs = await tb.captures()
        check_dispatched(tb, recs, tb.port((2, 2)), staged, (2, 2), "run 1 to (2,2)")

        # 2: 10 of them from slot base+5 to (1,2) against random sink busy
        tb.bank.configure(seed=tb.seed, backpressure=StallPattern(StallMode.BURST, 60))
        await h.dispatch((1, 2), base + 5, 10, 10)
        await h.wait_dispatched(3_000)
        v.check(await tb.wait_captured(len(staged) + 10, 2_000), "run 2: flits missing at the bank")
        recs = (await tb.captures())[len(staged):]
        check_dispatched(tb, recs, tb.port((1, 2)), staged[5:15], (1, 2), "run 2 to (1,2) under busy")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired during legal dispatch")

        # 3: straight to the DIRECT port, to a coordinate no mesh has (the header is what counts)
        await tb.reset(direct=True)
        tb.bank.configure(seed=tb.seed, backpressure=StallPattern(StallMode.RANDOM, 128))
        await h.stage(0, staged[:6])
        await h.dispatch((9, 14), 0, 6, 6)
        await h.wait_dispatched(2_000)
        v.check(await tb.wait_captured(6, 1_000), "run 3: flits missing at the direct port")
        check_dispatched(tb, await tb.captures(), tb.direct_port, staged[:6], (9, 14), "run 3 direct to (9,14)")
        v.check(tb.mon_err == 0, "a monitor fired during legal direct dispatch")

    await tb.guard(body, 40_000)


# ==================================================================== timing
# Upstream's orchestrator (noc_orchestrator.v at 7703ee8), in cycles after the edge the KICK's W beat is
# taken: a one-cycle kick request, the dispatcher's start, five 64-bit word reads a flit (one a cycle), the
# push into the TX FIFO, the FIFO's one-cycle fall-through, the output register: the first flit is taken
# off the link DISPATCH_FIRST cycles after the KICK, the next ones CYCLES_PER_FLIT apart; PROG_STAT's run
# bit reads 0 from RUN_LOW + CYCLES_PER_FLIT * PROG_LEN. Each router on the way adds ROUTER_HOP.
DISPATCH_FIRST = 9
CYCLES_PER_FLIT = 5
RUN_LOW = 2
ROUTER_HOP = 3


@cocotb.test()
async def test_host_port_timing(dut) -> None:
    """The AXI4-Lite slave's cycles, stamped in the harness: a write's W is taken the cycle after its AW and
    its B the cycle after W (3 cycles a write); a read's R is taken two cycles after its AR (3 a read)."""
    tb = OrchTB(dut, "test_host_port_timing")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        await h.write(Reg.PROG_LEN, 3)
        aw, w, b = await tb.stamps("aw", "w", "b")
        v.check((w - aw, b - w) == (1, 1), f"write: AW taken at cycle {aw}, W at {w}, B at {b}; expected W one "
                                           f"cycle after AW and B one after W")
        got = await h.read(Reg.PROG_LEN)
        ar, r = await tb.stamps("ar", "r")
        v.check(r - ar == 2 and got == 3, f"read: AR taken at cycle {ar}, R at {r} reading {got}; expected R two "
                                          f"cycles after AR reading 3")
        tb.log.info("measured: write AW->W %d, W->B %d cycles; read AR->R %d cycles", w - aw, b - w, r - ar)

    await tb.guard(body, 2_000)


@cocotb.test()
async def test_dispatch_timing(dut) -> None:
    """Dispatch at upstream's pace: straight into the direct port and through three routers of the mesh,
    flit i is captured DISPATCH_FIRST + ROUTER_HOP * routers + CYCLES_PER_FLIT * i cycles after the KICK's
    W beat, and the run bit is low from RUN_LOW + CYCLES_PER_FLIT * n."""
    tb = OrchTB(dut, "test_dispatch_timing")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        n = 6
        staged = [tb.random_flit(FlitType.CU_INST) for _ in range(n)]
        for direct, dst, routers in ((True, (9, 14), 0), (False, (2, 2), 3)):
            await tb.reset(direct=direct)
            await h.stage(0, staged)
            await h.dispatch(dst, 0, n, n)
            (kick,) = await tb.stamps("w")  # the dispatch's last write is the KICK
            await h.wait_dispatched(1_000)
            v.check(await tb.wait_captured(n, 500), f"to {dst}: not every flit arrived")
            recs = await tb.captures()
            port = tb.direct_port if direct else tb.port(dst)
            check_dispatched(tb, recs, port, staged, dst, f"timed run to {dst}")
            got = [r.cycle - kick for r in recs]
            want = [DISPATCH_FIRST + ROUTER_HOP * routers + CYCLES_PER_FLIT * i for i in range(n)]
            v.check(got == want, f"to {dst} through {routers} routers: flits captured {got} cycles after the "
                                 f"KICK, expected {want}")
            run_low = (await tb.stamps("run_low"))[0] - kick
            v.check(run_low == RUN_LOW + CYCLES_PER_FLIT * n,
                    f"run bit low {run_low} cycles after the KICK, expected {RUN_LOW + CYCLES_PER_FLIT * n}")
            tb.log.info("measured: to %s through %d routers, flits at +%s, run low at +%d", dst, routers,
                        ",".join(map(str, got)), run_low)
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired during timed dispatch")

    await tb.guard(body, 10_000)


@cocotb.test()
async def test_credit_stall_and_refill(dut) -> None:
    """At credit 0 the next CU_INST waits; only INST_COMPLETE refills; other types need no credit."""
    tb = OrchTB(dut, "test_credit_stall_and_refill")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        target = (2, 2)
        port = tb.port(target)
        types = [FlitType.CU_INST] * 3 + [FlitType.CU_CTRL] + [FlitType.CU_INST] * 5
        staged = [tb.random_flit(t) for t in types]
        seed_credit = 3
        await h.stage(10, staged)
        await h.dispatch(target, 10, len(staged), seed_credit)
        first = dispatch_stall_point(staged, seed_credit)  # 3 CU_INST + the CU_CTRL
        await tb.idle(300)
        stat = await h.prog_stat()
        v.check(stat.run and stat.left == len(staged) - first and stat.credit == 0,
                f"stalled dispatch: PROG_STAT {stat}, expected run, left {len(staged) - first}, credit 0")
        await tb.idle(500)
        stat = await h.prog_stat()
        captured = int(tb.bank.h.cap_count.value)
        v.check(stat.left == len(staged) - first and captured == first,
                f"the stall did not hold: PROG_STAT {stat}, {captured} flits captured, expected {first}")

        # Round 1: the target reports INST_COMPLETE, BATCH_COMPLETE, INST_COMPLETE, DATA_RECEIVED:
        # two credits come back (BATCH_COMPLETE and DATA_RECEIVED refill nothing).
        codes1 = [SigCode.INST_COMPLETE, SigCode.BATCH_COMPLETE, SigCode.INST_COMPLETE, SigCode.DATA_RECEIVED]
        sigs1 = [signal_flit(tb.own, target, c, i) for i, c in enumerate(codes1)]
        await tb.start_bank({port: sigs1})
        await h.await_count(target, len(sigs1), 0, 2_000)
        v.check(await tb.wait_captured(first + 2, 500), "two refills did not release two CU_INSTs")
        await tb.idle(200)
        stat = await h.prog_stat()
        v.check(stat.run and stat.left == len(staged) - first - 2 and stat.credit == 0,
                f"after two refills PROG_STAT is {stat}, expected left {len(staged) - first - 2}, credit 0")
        v.check(int(tb.bank.h.cap_count.value) == first + 2, "more CU_INSTs went out than credits came back")

        # Round 2: four more INST_COMPLETE finish the run with one credit to spare.
        sigs2 = [signal_flit(tb.own, target, SigCode.INST_COMPLETE, 0x100 + i) for i in range(4)]
        await tb.start_bank({port: sigs2})
        base2 = (await h.baseline([target]))[target]
        await h.await_count(target, len(sigs2), base2, 2_000)
        stat = await h.wait_dispatched(1_000)
        want = credit_after(staged, seed_credit, 6)
        v.check(stat.credit == want == 1, f"final credit {stat.credit}, expected {want}")
        v.check(await h.credit() == want, "PROG_CRED disagrees with PROG_STAT")
        recs = await tb.captures()
        check_dispatched(tb, recs, port, staged, target, "credit-limited run")
        gap = recs[first].cycle - recs[first - 1].cycle if len(recs) > first else 0
        v.check(gap >= 700, f"the flit after the stall arrived only {gap} cycles after the one before it")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired during a legal credit run")

    await tb.guard(body, 20_000)


@cocotb.test()
async def test_credit_seed_512(dut) -> None:
    """The compiled plans' seed: PROG_CRED = 512 is held as written (a write SETS the credit, never adds), a
    128-flit kick goes out on it at once, one credit per CU_INST pushed, one back per INST_COMPLETE only."""
    tb = OrchTB(dut, "test_credit_seed_512")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        for seed in (512, 300, 512):
            await h.write(Reg.PROG_CRED, seed)
            got = await h.credit()
            v.check(got == seed, f"PROG_CRED written {seed} reads {got} (a write must set the credit)")
        target, n = (2, 2), 128  # the longest kick of a compiled plan
        staged = [tb.random_flit(FlitType.CU_INST) for _ in range(n)]
        await h.stage(0, staged)
        await h.dispatch(target, 0, n, 512)
        stat = await h.wait_dispatched(3_000)
        v.check(stat.credit == 512 - n, f"after {n} CU_INSTs on a seed of 512 the credit is {stat.credit}, "
                                        f"expected {512 - n}")
        v.check(await tb.wait_captured(n, 2_000), f"not all {n} flits reached {target}")
        check_dispatched(tb, await tb.captures(), tb.port(target), staged, target, "128-flit kick on 512 credits")
        codes = [SigCode.INST_COMPLETE] * 100 + [SigCode.BATCH_COMPLETE, SigCode.DATA_RECEIVED, SigCode.FAULT] * 9
        sigs = [signal_flit(tb.own, target, c, i) for i, c in enumerate(codes)]
        await tb.start_bank({tb.port(target): sigs})
        await h.await_count(target, len(sigs), 0, 5_000)
        got = await h.credit()
        v.check(got == 512 - n + 100, f"credit {got} after 100 INST_COMPLETE and 27 other signals, expected "
                                      f"{512 - n + 100} (only INST_COMPLETE gives a credit back)")
        await h.write(Reg.PROG_CRED, 512)
        v.check(await h.credit() == 512, "re-seeding 512 did not set the credit back to 512")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired during a legal 512-credit run")

    await tb.guard(body, 30_000)


# ==================================================================== signals
@cocotb.test()
async def test_node_status_counts(dut) -> None:
    """NODE_STATUS per source: last code/arg, cumulative count of every code; SIG_DONE and its clear."""
    tb = OrchTB(dut, "test_node_status_counts")

    async def body() -> None:
        v, h, r = tb.verdict, tb.host, tb.rng
        await tb.reset()
        model = SummaryModel(tb.own)

        def sig(src, code):
            return signal_flit(tb.own, src, code, r.getrandbits(32), txn=r.getrandbits(8))

        round1 = {
            (2, 1): [sig((2, 1), c) for c in (*ALL_CODES, 0x02)],            # every code, and one unknown
            (1, 2): [sig((1, 2), r.choice(ALL_CODES)) for _ in range(7)],
            (2, 2): [sig((2, 2), SigCode.FAULT)],
        }
        await tb.start_bank({tb.port(c): fl for c, fl in round1.items()})
        for fl in round1.values():
            for f in fl:
                model.accept(f)
        base = await h.baseline(round1)
        v.check(all(b == 0 for b in base.values()), f"baselines after reset are {base}")
        await h.await_round({c: len(fl) for c, fl in round1.items()}, base, 3_000)
        for c in round1:
            st = await h.read_node_status(c)
            v.check(st == model.status(c), f"NODE_STATUS{c} is {st}, expected {model.status(c)}")
        done = await h.sig_done()
        v.check(done == model.sig_done == 13, f"SIG_DONE reads {done}, expected {model.sig_done}")
        cred = await h.credit()
        v.check(cred == model.credit_refills, f"credit {cred}: expected one per INST_COMPLETE ({model.credit_refills})")
        for c in ((1, 1), (3, 3), (0, 5)):
            st = await h.read_node_status(c)
            v.check(st == NodeStatus(), f"NODE_STATUS{c} of a silent node reads {st}")

        await h.clear_sig_done()
        v.check(await h.sig_done() == 0, "SIG_DONE did not clear on write")
        v.check((await h.read_node_status((2, 1))).count == 5, "clearing SIG_DONE changed a count")

        # Round 2: counts go on from the baseline; a header src outside the mesh gets its own entry.
        round2 = {
            (2, 1): [sig((2, 1), r.choice(ALL_CODES)) for _ in range(3)],
            (2, 2): [sig((2, 2), SigCode.BATCH_COMPLETE), sig((7, 3), SigCode.DATA_RECEIVED),
                     sig((2, 2), SigCode.INST_COMPLETE)],
        }
        streams = {tb.port(c): fl for c, fl in round2.items()}
        base = await h.baseline([(2, 1), (2, 2), (7, 3)])
        await tb.start_bank(streams)
        for fl in round2.values():
            for f in fl:
                model.accept(f)
        await h.await_round({(2, 1): 3, (2, 2): 2, (7, 3): 1}, base, 3_000)
        for c in ((2, 1), (1, 2), (2, 2), (7, 3)):
            st = await h.read_node_status(c)
            v.check(st == model.status(c), f"round 2 NODE_STATUS{c} is {st}, expected {model.status(c)}")
        v.check((await h.read_node_status((2, 1))).count == 8, "counts are not cumulative across rounds")
        done = await h.sig_done()
        v.check(done == 6, f"SIG_DONE reads {done} after the clear and 6 more signals")

        # Only reset clears the summary.
        await tb.reset()
        for c in ((2, 1), (1, 2), (2, 2), (7, 3)):
            st = await h.read_node_status(c)
            v.check(st == NodeStatus(), f"NODE_STATUS{c} reads {st} after reset")
        v.check(await h.sig_done() == 0, "SIG_DONE not 0 after reset")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired on legal signals")

    await tb.guard(body, 30_000)


@cocotb.test()
async def test_await(dut) -> None:
    """Await: success on the exact count, a timeout and an overshoot that name coordinate and counts."""
    tb = OrchTB(dut, "test_await")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        coords = [(2, 1), (1, 2), (2, 2)]
        base = await h.baseline(coords)
        streams = {tb.port((2, 1)): [signal_flit(tb.own, (2, 1), SigCode.INST_COMPLETE, i) for i in range(3)],
                   tb.port((2, 2)): [signal_flit(tb.own, (2, 2), SigCode.DATA_RECEIVED, i) for i in range(3)]}
        await tb.start_bank(streams, idle=StallPattern(StallMode.RANDOM, 200))

        polls0 = h.polls
        st = await h.await_count((2, 1), 3, base[(2, 1)], 4_000, max_polls=40)
        v.check(st.count == 3 and st.code == SigCode.INST_COMPLETE and st.arg == 2, f"Await returned {st}")
        v.check(h.polls - polls0 <= 41, f"Await made {h.polls - polls0} polls, bound 41")

        t0 = tb.cycle()
        polls0 = h.polls
        try:
            await h.await_count((1, 2), 1, base[(1, 2)], 600, max_polls=10)
            v.check(False, "Await of a silent node did not time out")
        except AwaitError as exc:
            msg = str(exc)
            v.check("(1,2)" in msg and "expected count 1" in msg and "seen 0" in msg and "timeout" in msg,
                    f"timeout message does not name coordinate and counts: {msg}")
            tb.log.info("expected Await failure: %s", msg)
        waited = tb.cycle() - t0
        v.check(600 <= waited <= 800, f"the timeout took {waited} cycles for a 600-cycle bound")
        v.check(h.polls - polls0 <= 11, f"the timeout made {h.polls - polls0} polls, bound 11")

        v.check(await tb.wait_injected(6, 3_000), "the bank did not send every signal")
        await tb.idle(50)
        try:
            await h.await_count((2, 2), 2, base[(2, 2)], 1_000)
            v.check(False, "Await of 2 signals passed with 3 arrived")
        except AwaitError as exc:
            msg = str(exc)
            v.check(exc.state == "overshoot" and exc.seen == 3 and exc.expected == 2,
                    f"overshoot reported as {exc.state}, seen {exc.seen}, expected {exc.expected}")
            v.check("(2,2)" in msg and "expected count 2" in msg and "seen 3" in msg,
                    f"overshoot message does not name coordinate and counts: {msg}")
            tb.log.info("expected Await failure: %s", msg)
        st = await h.await_count((1, 2), 0, base[(1, 2)], 100)
        v.check(not st.valid, "Await of 0 signals on a silent node should pass at once")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired during Await")

    await tb.guard(body, 20_000)


@cocotb.test()
async def test_unknown_types_dropped(dut) -> None:
    """Inbound flits other than CU_SIGNAL are taken and dropped: nothing counted, no credit, no echo."""
    tb = OrchTB(dut, "test_unknown_types_dropped")

    async def body() -> None:
        v, h = tb.verdict, tb.host
        await tb.reset()
        src = (2, 1)
        looks_like_completion = signal_flit(tb.own, src, SigCode.INST_COMPLETE, 1)
        others = [looks_like_completion & ~FIELDS["type"].place(-1) | FIELDS["type"].place(t)
                  for t in (FlitType.CU_DATA, FlitType.MEM_RD_REQ, FlitType.CU_INST, FlitType.CU_CTRL,
                            FlitType.MEM_WR_ACK, FlitType.ERROR)]
        stream = others[:3] + [signal_flit(tb.own, src, SigCode.BATCH_COMPLETE, 7)] + others[3:]
        model = SummaryModel(tb.own)
        for f in stream:
            model.accept(f)
        await tb.start_bank({tb.port(src): stream})
        v.check(await tb.wait_injected(len(stream), 2_000), "the orchestrator did not take every inbound flit")
        await tb.idle(50)
        v.check(await h.sig_done() == 1, "SIG_DONE counts something other than the one CU_SIGNAL")
        st = await h.read_node_status(src)
        v.check(st == model.status(src) and st.count == 1, f"NODE_STATUS{src} is {st}")
        v.check(await h.credit() == 0, "a non-signal flit carrying an INST_COMPLETE payload refilled credit")
        v.check(int(tb.bank.h.cap_count.value) == 0, "the orchestrator sent something back")
        v.setup(model.dropped == len(others), "the summary model disagrees on the drop count "
                                              "(tests/unit/orch/test_orch_model.py)")
        v.check(tb.mon_err == 0 and tb.mesh_mon_err == 0, "a monitor fired on dropped flits")

    await tb.guard(body, 10_000)


@cocotb.test()
async def test_input_never_busy(dut) -> None:
    """Signals sent back to back straight into the orchestrator are all taken on consecutive cycles (the
    input is never busy: upstream summarises a CU_SIGNAL at the edge it arrives) and all counted."""
    tb = OrchTB(dut, "test_input_never_busy")

    async def body() -> None:
        v = tb.verdict
        n = 40
        sigs = [signal_flit(tb.own, (2, 1), SigCode.DATA_RECEIVED, i) for i in range(n)]
        await tb.reset(direct=True)
        await tb.start_bank({tb.direct_port: sigs})
        st = await tb.host.await_count((2, 1), n, 0, 1_000)
        times = (await tb.inject_times())[:n]
        v.check(times[-1] - times[0] == n - 1, f"{n} signals taken over cycles {times[0]}..{times[-1]}, expected "
                                               f"one a cycle")
        v.check(st.count == n and tb.mon_err == 0, f"direct stream: {st}, mon_err {tb.mon_err}")

    await tb.guard(body, 5_000)
