"""The host engine (rtl/bench/host_engine.v, tb/system/host_engine.py) on the mm_mesh_sys machine's host port.

Five tests:

* round trip: registers written and read back, two staging slots read back
  equal, and a word overwritten behind the host's back named by the client's
  read-back (a wrong value is caught, not passed);
* bus timing: a write takes 4 cycles, a read 4, a staged slot's five-word
  read 16, a poll that never matches ends at exactly the cycle the poll
  policy (tb/bundle/rtl_run.py: reads back to back, then waits of elapsed // 256)
  puts it, with the read count that policy makes;
* faults named: a batch longer than the queue (refused in Python before
  anything is sent, and by the engine itself when told a longer count), a
  command the engine does not know (first and later in a batch), a poll
  whose wait is shorter than its lead; after each the engine works again;
* a batch that never completes ends at its bound with a named failure, and the
  engine works again after a reset;
* a poll stops at once on an overshoot, named by the Await and by the loader's
  poll as before, and stops on the read that matches.
"""

from __future__ import annotations

import cocotb

from models.bundle.executor import PollFailed
from models.bundle.loader import Poll
from models.orch.host_port import STAGE_WORDS, Reg, node_status_addr, stage_addr
from tb.bundle.rtl_run import RtlHost
from tb.orch.host import AwaitError
from tb.system.host_engine import Command, HostEngine, HostEngineError, Op, Status, read
from tb.system.bench import PERIOD_NS, SystemTB

WRITE_CYCLES = 4  # AW at launch+1, W +2, B +3; the next launch the edge after B
READ_CYCLES = 4  # AR at launch+1, R +3
SLOT_READ_CYCLES = READ_CYCLES + (STAGE_WORDS - 1) * 3  # the next AR rides behind the previous one's R


def poll_policy(bound: int, interval: int, resolution: int) -> tuple[int, int]:
    """(reads counted, cycles) of a poll that never matches, by the policy of tb/bundle/rtl_run.py RtlHost.poll:
    a read takes READ_CYCLES from its launch; after a read ending `elapsed` cycles in, stop past the bound
    (then one final read, not counted), else launch the next read max(1, gap) cycles later."""
    elapsed = READ_CYCLES  # the first read launches the edge after the call
    reads = 1
    while elapsed < bound:
        gap = max(interval, elapsed // resolution if resolution else 0)
        elapsed += max(1, gap) - 1 + READ_CYCLES
        reads += 1
    return reads, elapsed + READ_CYCLES


async def _cycles(tb: SystemTB, work) -> int:
    t0 = tb.cycle()
    await work
    return tb.cycle() - t0


@cocotb.test()
async def test_round_trip_and_a_wrong_value(dut) -> None:
    """Registers and staging slots read back as written; a slot word changed behind the host is named."""
    tb = SystemTB(dut, "test_round_trip_and_a_wrong_value")

    async def body() -> None:
        await tb.start()
        v, h = tb.verdict, tb.host
        regs = {Reg.PROG_LEN: 0x1234, Reg.PROG_BASE: 0x0042, Reg.PROG_DST: 0x21}
        await h.write_words(list(regs.items()))
        for reg, want in regs.items():
            got = await h.read(reg)
            v.check(got == want, f"register {reg:#x} reads back {got:#x}, {want:#x} was written")
        flits = [tb.rng.getrandbits(288) for _ in range(2)]
        rtl = RtlHost(h, tb.dram, tb.landing, tb.machine, period_ns=PERIOD_NS)
        await rtl.stage({3: flits[0], 4: flits[1]})
        got = await h.read_stages([3, 4])
        v.check(got == flits, f"staged slots read back {[hex(f) for f in got]}, staged {[hex(f) for f in flits]}")
        planted = 0xDEAD_BEEF
        await h.write(stage_addr(4, 2, h.slots), planted)  # behind the client's back
        await rtl.wait_landed("the planted word")
        want_bad = (flits[1] & ~((2**64 - 1) << 128)) | (planted << 128)
        v.check(rtl.stage_errors == [f"staging slot 4 reads back {want_bad:#074x}, staged {flits[1]:#074x}"],
                f"the overwritten word was not named as it should be: {rtl.stage_errors}")

    await tb.guard(body, max_cycles=20_000)


@cocotb.test()
async def test_bus_timing(dut) -> None:
    """The measured host timing: 4 cycles a write and a read, 16 a staged slot's read-back, a poll's timeout at
    the cycle and read count its policy gives (reads back to back until 256 cycles, then gaps of elapsed // 256)."""
    tb = SystemTB(dut, "test_bus_timing")

    async def body() -> None:
        await tb.start()
        v, h = tb.verdict, tb.host
        n = 10
        got = await _cycles(tb, h.write_words([(Reg.PROG_LEN, k) for k in range(n)]))
        v.check(got == n * WRITE_CYCLES, f"{n} writes took {got} cycles, {n * WRITE_CYCLES} expected")
        got = await _cycles(tb, h.read(Reg.CAPS))
        v.check(got == READ_CYCLES, f"a read took {got} cycles, {READ_CYCLES} expected")
        await h.stage(0, [tb.rng.getrandbits(288) for _ in range(2)])
        got = await _cycles(tb, h.read_stages([0, 1]))
        v.check(got == 2 * SLOT_READ_CYCLES, f"two slots read back in {got} cycles, {2 * SLOT_READ_CYCLES} expected")
        engine = h.engine
        assert engine is not None
        for bound in (1, 300, 2_000):
            poll = Command(Op.POLL, Reg.CAPS, data=1, want=2, bound=bound, resolution=256, final=True)
            t0 = tb.cycle()
            res = (await engine.run([poll], what="a poll that never matches"))[0]
            want_reads, want_cycles = poll_policy(bound, 0, 256)
            v.check(res.status is Status.TIMEOUT and (res.reads, tb.cycle() - t0) == (want_reads, want_cycles),
                    f"poll bound {bound}: {res.status.name}, {res.reads} reads in {tb.cycle() - t0} cycles; the "
                    f"policy gives TIMEOUT, {want_reads} reads in {want_cycles} cycles")

    await tb.guard(body, max_cycles=20_000)


async def _fault(tb: SystemTB, engine: HostEngine, words: list[int], count: int, want: str) -> None:
    """Run a raw batch that must fail with `want` in its message, then check the engine answers again."""
    v = tb.verdict
    try:
        await engine.run_raw(words, count, bound=200, what="raw batch")
        v.check(False, f"the engine accepted a batch that must fail with: {want}")
    except HostEngineError as exc:
        v.check(want in str(exc), f"the failure does not say '{want}': {exc}")
        tb.log.info("named as it must be: %s", exc)
    caps = await tb.host.caps()
    v.check(caps.own == tb.orch, f"after the fault the engine reads CAPS own={caps.own}, not {tb.orch}")


@cocotb.test()
async def test_faults_are_named(dut) -> None:
    """Queue overflow (Python's refusal and the engine's own), unknown commands, a poll that starts late."""
    tb = SystemTB(dut, "test_faults_are_named")

    async def body() -> None:
        await tb.start()
        v, engine = tb.verdict, tb.host.engine
        assert engine is not None
        depth = engine.depth
        try:
            await engine.run([read(Reg.CAPS)] * (depth + 1), what="a long batch")
            v.check(False, "a batch longer than the queue was not refused")
        except HostEngineError as exc:
            v.check(str(exc) == f"a long batch: {depth + 1} commands; the host engine's queue holds 1..{depth} "
                               f"(split the batch, or raise DEPTH of rtl/bench/host_engine.v)", f"refusal: {exc}")
        caps = read(Reg.CAPS).word()
        await _fault(tb, engine, [caps], depth + 1, f"host engine fault OVERFLOW: the batch is longer than the "
                                                     f"engine's queue (nothing was sent) (count {depth + 1}, queue {depth})")
        await _fault(tb, engine, [0xF << 252], 1, "host engine fault UNKNOWN_OP: a command the engine does not know "
                                                  "(the batch stopped there) (command 0)")
        await _fault(tb, engine, [caps, caps, 0], 3, "host engine fault UNKNOWN_OP: a command the engine does not "
                                                     "know (the batch stopped there) (command 2)")
        late = Command(Op.POLL, Reg.CAPS, data=1, want=1, bound=100, interval=0, pre=True).word()
        await _fault(tb, engine, [late], 1, "host engine fault LATE: a poll's wait before its first read is shorter")

    await tb.guard(body, max_cycles=20_000)


@cocotb.test()
async def test_a_batch_that_never_completes(dut) -> None:
    """A poll that never matches, given a batch bound shorter than its own: a named failure at the bound, no
    hang; after a reset the engine answers again."""
    tb = SystemTB(dut, "test_a_batch_that_never_completes")

    async def body() -> None:
        await tb.start()
        v, engine = tb.verdict, tb.host.engine
        assert engine is not None
        never = Command(Op.POLL, Reg.CAPS, data=1, want=2, bound=10_000).word()
        t0 = tb.cycle()
        try:
            await engine.run_raw([never], 1, bound=300, what="a poll that never matches")
            v.check(False, "a batch past its bound did not fail")
        except HostEngineError as exc:
            v.check(str(exc).startswith("a poll that never matches: the host engine did not finish its batch of 1 "
                                        "command(s) within 300 cycles: at command 0 (POLL)"), f"failure: {exc}")
            v.check(tb.cycle() - t0 <= 301, f"the failure came {tb.cycle() - t0} cycles after the start, bound 300")
            tb.log.info("named as it must be: %s", exc)
        await tb.clock.reset()
        caps = await tb.host.caps()
        v.check(caps.own == tb.orch, f"after a reset the engine reads CAPS own={caps.own}, not {tb.orch}")

    await tb.guard(body, max_cycles=20_000)


@cocotb.test()
async def test_overshoot_and_match(dut) -> None:
    """A node never heard from (count 0) awaited from baseline 5 for 3 signals has 65531 'since the baseline':
    an overshoot, ended after its first read by the Await and by the loader's poll, each naming it; a poll of
    CAPS for its own value is met on its first read."""
    tb = SystemTB(dut, "test_overshoot_and_match")

    async def body() -> None:
        await tb.start()
        v, h = tb.verdict, tb.host
        node = tb.machine.vector_cores[0]
        try:
            await h.await_count(node, 3, 5, 5_000)
            v.check(False, "an overshooting Await was not refused")
        except AwaitError as exc:
            v.check(str(exc) == f"Await overshoot at node ({node[0]},{node[1]}): expected count 8 (baseline 5 + 3), "
                                f"seen 0", f"Await failure: {exc}")
        rtl = RtlHost(h, tb.dram, tb.landing, tb.machine, period_ns=PERIOD_NS)
        cmd = Poll(node_status_addr(node), (8 << 8) | 1, 0xFFFF01, "NODE_STATUS", node, 5, 3)
        t0 = tb.cycle()
        try:
            await rtl.poll(cmd, "overshoot test")
            v.check(False, "an overshooting poll was not refused")
        except PollFailed as exc:
            v.check(str(exc).endswith("seen 0 (65531 signal(s) since the baseline); the node's last signal: no "
                                      "signal yet; overshoot: more signals than awaited"), f"poll failure: {exc}")
        v.check(tb.cycle() - t0 == 4 and rtl.polls == 1, f"the overshoot took {tb.cycle() - t0} cycles and "
                                                          f"{rtl.polls} read(s), one read of 4 cycles expected")
        caps = await h.read(Reg.CAPS)
        got = await rtl.poll(Poll(Reg.CAPS, caps, 2**64 - 1, "CAPS"), "match test")
        v.check(got == caps and rtl.polls == 2, f"a poll for CAPS's own value returned {got:#x} after "
                                                f"{rtl.polls - 1} read(s)")

    await tb.guard(body, max_cycles=20_000)
