"""Module bench of the vector core (rtl/units/vector_core.v) on a 1x1 mesh.

Bench endpoints: (1,0) port 1 = the host (instructions, bursts), (1,2) port 2 and
(2,1) port 4 = peers and acknowledgement destinations, (0,1) port 3 = the memory
agent's coordinate, where VDRAIN writes and VFILL read requests are captured.
Every answer is predicted by models/vector_core.py and compared flit for flit
per capturing port; DRAM words are also compared lane by lane.

Sequencing: a host waits for DATA_RECEIVED before it RUNs a program on the
delivered data. A bulk bench cannot wait, so the tests that drain delivered data
send the bursts and then the program from the same port (one source, order kept
on the way in), and the program's IMEM/DESC writes keep the RUN behind the
burst's last data flit.
"""

from __future__ import annotations

import cocotb
import numpy as np

from models.cu_base import cu_inst
from models.flit import FIELDS, FlitType, pack_fields
from models.numerics import e8m15_to_fp16, fp16_to_e8m15
from models.vector_core import (
    F_CUDATA, F_LEN, F_OPCODE, Descriptor, NodeTarget, VectorCore, assemble, compare_fp16_words,
    cu_data_burst, desc_payload, imem_payload, program_flits, run_payload, u16_to_word,
)
from tb.lib.expect import compare_per_port
from tb.lib.harness import StallMode, StallPattern
from tb.lib.noc_tb import NocTB


UNIT = (1, 1)
HOST, SOUTH, MAG, EAST = (1, 0), (1, 2), (0, 1), (2, 1)
HOSTILE = dict(idle=StallPattern(StallMode.RANDOM, 80), backpressure=StallPattern(StallMode.BURST, 40))
PAYLOAD = (1 << 256) - 1


def _type(flit: int) -> int:
    return FIELDS["type"].extract(flit)


def _key(flit: int) -> str:
    """Streams with an order of their own at one port: completions, acks, memory writes, the rest by type."""
    t = _type(flit)
    if t == FlitType.CU_SIGNAL:
        return "ack" if (flit >> 248) & 0xFF == 0x03 else "completion"
    if t in (FlitType.MEM_WR_REQ, FlitType.MEM_WR_DATA):
        return "write"
    return f"type{t}"


class VcBench:
    def __init__(self, dut, name: str) -> None:
        self.tb = NocTB(dut, name)
        self.v = self.tb.verdict
        self.rng = self.tb.rng

    def port(self, coord) -> int:
        return self.tb.geometry.port_index(coord)

    def expected(self, events) -> dict[int, list[int]]:
        out: dict[int, list[int]] = {}
        for e in events:
            out.setdefault(self.port(e.dst), []).append(e.flit)
        return out

    async def run(self, streams: dict, events, *, hostile: bool = False, extra: dict | None = None,
                  expect_done: bool = True, **kw):
        """Inject `streams` ({coord: flits}), wait for the predicted answers, compare them per port."""
        want = self.expected(events)
        for port, flits in (extra or {}).items():
            want.setdefault(port, []).extend(flits)
        total = sum(map(len, want.values()))
        run = await self.tb.run_streams({self.port(c): f for c, f in streams.items()}, expect_total=total,
                                        **(HOSTILE if hostile else {}), **kw)
        if expect_done:
            self.v.check(run.outcome.ended == "done", f"run ended by {run.outcome.ended}: "
                         f"{run.outcome.captured}/{total} answers captured")
        checks, errors = compare_per_port(want, run.records, _key)
        self.v.add_checks(checks, errors)
        return run

    def mon_clean(self, run) -> None:
        self.v.check(run.mon_err == 0, "an RTL monitor raised mon_err (see ERROR lines)")

    def dram_words(self, run, port: int) -> list[int]:
        return [r.flit & PAYLOAD for r in run.records if r.port == port and _type(r.flit) == FlitType.MEM_WR_DATA]

    def words(self, n: int) -> list[int]:
        return [u16_to_word([self.rng.getrandbits(16) for _ in range(16)]) for _ in range(n)]


def filler(src, dst, n: int, tag: int = 0) -> list[int]:
    """Reserved-type flits from one bench endpoint to another: a delay that is itself checked."""
    return [pack_fields({"dst_x": dst[0], "dst_y": dst[1], "src_x": src[0], "src_y": src[1], "type": 0x9,
                         "txn": (tag + i) & 0xFF, "last": 1, "payload": i}) for i in range(n)]


def bursts(dst, src, words, *, off=0, flags=1, ack=(0, 0), size=8, txn=0) -> list[int]:
    """`words` as CU_DATA bursts of at most `size` granules (the cluster's WBURST)."""
    out: list[int] = []
    for k in range(0, len(words), size):
        out += cu_data_burst(dst, src, words[k:k + size], off=off + k, flags=flags, ack=ack, txn=txn + k // size)
    return out


# ================================================================ envelope
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_imem_desc_run_completions(dut, hostile: bool) -> None:
    """IMEM/DESC retire at once, RUN at VHALT (result = its address), bad opcodes fault; three sources."""
    b = VcBench(dut, f"test_imem_desc_run_completions/hostile={hostile}")
    streams: dict = {}
    events = []
    for n, src in enumerate((HOST, SOUTH, EAST)):
        model = VectorCore(UNIT)  # each source touches its own IMEM words and descriptor
        base = 40 * n + 3
        prog = assemble("VSETI 16\nVSETVL\nVSETMODE FLAT\nVBAR\n" + "VHALT")
        flits = [cu_inst(UNIT, src, 0x10 + i, 0, imem_payload(base + i, w)) for i, w in enumerate(prog)]
        flits += [cu_inst(UNIT, src, 0x20 + f, 0, desc_payload(n, f, b.rng.getrandbits(20))) for f in range(6)]
        flits += [cu_inst(UNIT, src, 0x30, 0, desc_payload(n, 7, 0)),        # fld 7: F_OPCODE
                  cu_inst(UNIT, src, 0x31, 0, 0xE << 252),                    # unknown envelope opcode
                  cu_inst(UNIT, src, 0x32, 0, run_payload(base)),             # RUN -> INST_COMPLETE(pc of VHALT)
                  cu_inst(UNIT, src, 0x33, 1, run_payload(base + 4))]         # last=1 -> BATCH_COMPLETE
        streams[src] = flits
        events += model.take_all(flits)
    run = await b.run(streams, events, hostile=hostile)
    b.mon_clean(run)
    b.v.finish()


# ================================================================ peer bursts and drains
@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_peer_bursts_then_vdrain_to_memory(dut, hostile: bool) -> None:
    """Protocol section 7 step 4: 9 granules in two bursts (acks: to the ack field, then to the source),
    then VDRAIN A0 (base 0x8000, {32, 9}); the 9 DRAM words equal the delivered ones bit for bit."""
    b = VcBench(dut, f"test_peer_bursts_then_vdrain_to_memory/hostile={hostile}")
    data = b.words(9)
    flits = cu_data_burst(UNIT, HOST, data[:8], off=0, flags=1, ack=EAST, txn=0x51)
    flits += cu_data_burst(UNIT, HOST, data[8:], off=8, flags=1, ack=(0, 0), txn=0x52)
    flits += program_flits(UNIT, HOST, assemble("VDRAIN A0\nVHALT"), {0: Descriptor(0x8000, ((32, 9),))})
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=hostile)
    got = b.dram_words(run, b.port(MAG))
    checks, errors = compare_fp16_words(data, got, "DRAM word")
    b.v.add_checks(checks, errors)
    addrs = [r.flit >> 216 & (2**40 - 1) for r in run.records if _type(r.flit) == FlitType.MEM_WR_REQ]
    b.v.check(addrs == [0x8000 + 32 * i for i in range(9)], f"write addresses {[hex(a) for a in addrs]}")
    acks = [(r.port, r.flit >> 216 & 0xFFFF_FFFF) for r in run.records if _key(r.flit) == "ack"]
    b.v.check(sorted(acks) == sorted([(b.port(EAST), 0), (b.port(HOST), 0)]),
              f"acks (port, arg) {acks}: one to the ack field (2,1), one back to the source (1,0)")
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_ack_count_per_drain(dut, hostile: bool) -> None:
    """Drains of n granules in bursts of <= 8 with flags=1: ceil(n/8) acks each, arg = buf 0, to the ack
    field or to the source when it is 0; flags=0 bursts are not acknowledged."""
    b = VcBench(dut, f"test_ack_count_per_drain/hostile={hostile}")
    flits: list[int] = []
    want: dict = {}
    off = 0
    for i, (n, ack, flags) in enumerate([(1, (0, 0), 1), (8, EAST, 1), (9, SOUTH, 1), (17, (0, 0), 1),
                                         (64, EAST, 1), (12, EAST, 0)]):
        flits += bursts(UNIT, HOST, b.words(n), off=off, flags=flags, ack=ack, txn=i * 16)
        dst = HOST if ack == (0, 0) else ack
        want[dst] = want.get(dst, 0) + (-(-n // 8) if flags else 0)
        off += n
    flits += [cu_inst(UNIT, HOST, 0x70, 1, imem_payload(0, 0xF8000000))]
    events = VectorCore(UNIT).take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=hostile)
    for dst, n in want.items():
        got = [r for r in run.records if r.port == b.port(dst) and _key(r.flit) == "ack"]
        b.v.check(len(got) == n, f"{len(got)} acks at {dst}, expected {n}")
        b.v.check(all(r.flit >> 216 & 0xFFFF_FFFF == 0 for r in got), f"an ack at {dst} has arg != buf 0")
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
async def test_vdrain_to_node(dut) -> None:
    """VDRAIN on a descriptor with a node target: one CU_DATA descriptor for the whole walk, then the words."""
    b = VcBench(dut, "test_vdrain_to_node")
    data = b.words(11)
    flits = bursts(UNIT, HOST, data, off=100, flags=0)
    tgt = NodeTarget(EAST, buf=0, flags=1, ack=SOUTH)
    flits += program_flits(UNIT, HOST, assemble("VDRAIN A6+100\nVDRAIN A6+100\nVHALT"),
                           {6: Descriptor(200, ((32, 11),), tgt)}, txn=0x44, run_last=1)
    events = VectorCore(UNIT).take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=True)
    got = [r.flit & PAYLOAD for r in run.records if r.port == b.port(EAST)]
    b.v.check(len(got) == 24 and got[1:12] == data and got[13:] == data, "node drain payloads")
    b.mon_clean(run)
    b.v.finish()


# ================================================================ the reference epilogue
EPILOGUE = "VSETI 16\nVSETVL\nVSETMODE FLAT\n" + "".join(
    f"VLD v0, A1+{t}\nVADD v1, v0, v0\nVST v1, A2+{t}\n" for t in range(9)) + "VDRAIN A3+64\nVHALT"
EPI_DESC = {1: Descriptor(0, ((1, 1),)), 2: Descriptor(64, ((1, 1),)), 3: Descriptor(0x8800, ((32, 9),))}


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_reference_epilogue(dut, hostile: bool) -> None:
    """Protocol section 7 step 5: VLD/VADD/VST over 9 words (A1 base 0 {1,1}, A2 base 64 {1,1}), VDRAIN A3+64
    (base 0x8800 {32,9}): the 9x16 FP16 lanes equal the model's and the gold (each input doubled, zero
    stays zero, 0xf8bb saturates to 0xfbff), no fault."""
    b = VcBench(dut, f"test_reference_epilogue/hostile={hostile}")
    lanes = [[b.rng.choice([b.rng.getrandbits(16) & 0xBFFF, 0]) for _ in range(16)] for _ in range(9)]
    lanes[0][:3] = [0xF8BB, 0x0000, 0x8000]
    data = [u16_to_word(x) for x in lanes]
    flits = bursts(UNIT, HOST, data, off=0, flags=1, ack=SOUTH)
    flits += program_flits(UNIT, HOST, assemble(EPILOGUE), EPI_DESC, run_last=1)
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=hostile)
    got = b.dram_words(run, b.port(MAG))
    gold = [u16_to_word(e8m15_to_fp16(np.asarray(fp16_to_e8m15(np.array(x, np.uint16))) + (1 << 15)))
            for x in lanes]  # exponent + 1 in E8M15 (inputs are finite, below 2^15), then the saturating store
    checks, errors = compare_fp16_words(gold, got, "epilogue word")
    b.v.add_checks(checks, errors)
    b.v.check(bool(got) and got[0] & 0xFFFF == 0xFBFF, "0xf8bb doubled is not 0xfbff")
    cpl = [r.flit for r in run.records if _key(r.flit) == "completion" and r.port == b.port(HOST)]
    b.v.check(bool(cpl) and (cpl[-1] >> 248) & 0xFF == 0x01, "the RUN did not retire with BATCH_COMPLETE")
    b.mon_clean(run)
    b.v.finish()


# ================================================================ faults
@cocotb.test()
@cocotb.parametrize(kind=["buf", "range"])
async def test_rejected_burst(dut, kind: str) -> None:
    """A burst with buf != 0, or off+len past word 511: not written (not wrapped), not acknowledged,
    F_CUDATA at the next RUN only; the following RUN runs and the words around it are intact."""
    b = VcBench(dut, f"test_rejected_burst/kind={kind}")
    keep = b.words(9)
    flits = bursts(UNIT, HOST, keep[:7], off=505, flags=1) + bursts(UNIT, HOST, keep[7:], off=0, flags=1)
    bad = b.words(9)
    if kind == "buf":
        flits += cu_data_burst(UNIT, HOST, bad[:7], off=505, buf=1 + b.rng.randrange(255), flags=1, ack=EAST)
        flits += cu_data_burst(UNIT, HOST, bad[7:], off=0, buf=2, flags=1, ack=EAST)
    else:
        flits += cu_data_burst(UNIT, HOST, bad, off=505, flags=1, ack=EAST)  # 505 + 8 > 511: would wrap
    prog = assemble("VDRAIN A0+505\nVDRAIN A1+0\nVHALT")
    flits += program_flits(UNIT, HOST, prog, {0: Descriptor(0x1000, ((32, 7),)), 1: Descriptor(0x2000, ((32, 2),))})
    flits += [cu_inst(UNIT, HOST, 0x41, 0, run_payload(0))]       # the second RUN drains
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    run = await b.run({HOST: flits}, events)
    faults = [r.flit >> 216 & 0xFF for r in run.records if _key(r.flit) == "completion" and (r.flit >> 248) & 0xFF == 4]
    b.v.check(faults == [F_CUDATA], f"faults {faults}: expected exactly one F_CUDATA")
    b.v.check(not any(r.port == b.port(EAST) for r in run.records), "a rejected burst was acknowledged")
    checks, errors = compare_fp16_words(keep, b.dram_words(run, b.port(MAG)), "L1 word after rejection")
    b.v.add_checks(checks, errors)
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
async def test_second_sender_mid_burst(dut) -> None:
    """Two peers send 41-flit bursts at once (the router interleaves them): both bursts fault, no ack,
    F_CUDATA at the next RUN; the stream state is clean afterwards (a good burst is acknowledged)."""
    b = VcBench(dut, "test_second_sender_mid_burst")
    a = cu_data_burst(UNIT, SOUTH, b.words(40), off=0, flags=1)
    c = cu_data_burst(UNIT, EAST, b.words(40), off=100, flags=1)
    host = [cu_inst(UNIT, HOST, i, 0, imem_payload(300 + i, 0xF8000000)) for i in range(64)]  # keeps the RUN back
    host += [cu_inst(UNIT, HOST, 0x80, 0, run_payload(300)), cu_inst(UNIT, HOST, 0x81, 0, run_payload(300))]
    host += cu_data_burst(UNIT, HOST, b.words(2), off=7, flags=1, txn=0x99)
    # one order the core can see them in: interleaved, then the host's stream
    model = VectorCore(UNIT)
    events = model.take_all([f for pair in zip(a, c) for f in pair] + host)
    run = await b.run({SOUTH: a, EAST: c, HOST: host}, events, backpressure=StallPattern(StallMode.BURST, 40))
    b.v.check(not any(_key(r.flit) == "ack" and r.port != b.port(HOST) for r in run.records),
              "an interleaved burst was acknowledged")
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
async def test_program_faults(dut) -> None:
    """F_LEN (a VDRAIN walk of 272 entries: no flit leaves), F_OPCODE (VLOG2, VLOOP, envelope 0xF)."""
    b = VcBench(dut, "test_program_faults")
    flits = program_flits(UNIT, HOST, assemble("VDRAIN A0\nVHALT"), {0: Descriptor(0, ((32, 16), (512, 17)))})
    flits += [cu_inst(UNIT, HOST, 1, 0, imem_payload(10, w)) for w in assemble("VLOG2 v1, v0")]
    flits += [cu_inst(UNIT, HOST, 2, 0, imem_payload(11, w)) for w in assemble("VLOOP")]
    flits += [cu_inst(UNIT, HOST, 3, 0, run_payload(10)), cu_inst(UNIT, HOST, 4, 0, run_payload(11)),
              cu_inst(UNIT, HOST, 5, 1, 0xF << 252)]
    events = VectorCore(UNIT).take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=True)
    faults = [r.flit >> 216 & 0xFF for r in run.records if (r.flit >> 248) & 0xFF == 4]
    b.v.check(faults == [F_LEN, F_OPCODE, F_OPCODE, F_OPCODE], f"faults {faults}")
    b.v.check(not any(r.port == b.port(MAG) for r in run.records), "a faulted VDRAIN sent flits")
    b.mon_clean(run)
    b.v.finish()


# ================================================================ fills
@cocotb.test()
async def test_vfill_requests_and_vbar_waits(dut) -> None:
    """VFILL issues one plain MEM_RD_REQ per word (addr, len 0, txn = tag); nobody answers, so VBAR holds
    the RUN: no completion before the bench's quiet-cycle watchdog fires."""
    b = VcBench(dut, "test_vfill_requests_and_vbar_waits")
    flits = program_flits(UNIT, HOST, assemble("VFILL A2+10\nVBAR\nVHALT"),
                          {2: Descriptor(0x4000, ((64, 3), (1024, 2)))})
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    # the model's RUN is waiting too: what it sent is the completions of the loads and the 6 requests
    run = await b.run({HOST: flits}, events, expect_done=True, quiet_limit=600)
    reqs = [r.flit for r in run.records if _type(r.flit) == FlitType.MEM_RD_REQ]
    b.v.check([f >> 216 & (2**40 - 1) for f in reqs] == [0x4000 + 64 * i + 1024 * j for j in range(2) for i in range(3)],
              "read request addresses")
    b.v.check(int(dut.u_dut.st.value) == 10, f"the core is not waiting at VBAR (state {int(dut.u_dut.st.value)})")
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_vfill_answered_then_vdrain(dut, hostile: bool) -> None:
    """The bench at (0,1) answers the read requests (after a checked delay, out of order): VBAR releases,
    the filled words drain back bit for bit; a response nobody waits for is dropped."""
    b = VcBench(dut, f"test_vfill_answered_then_vdrain/hostile={hostile}")
    data = b.words(5)
    flits = program_flits(UNIT, HOST, assemble("VFILL A0+20\nVBAR\nVDRAIN A1+20\nVHALT"),
                          {0: Descriptor(0x100, ((32, 5),)), 1: Descriptor(0x9000, ((32, 5),))}, run_last=1)
    resp = lambda tag, w: pack_fields({"dst_x": 1, "dst_y": 1, "src_x": 0, "src_y": 1,  # noqa: E731
                                       "type": FlitType.MEM_RD_RESP, "txn": tag, "last": 1, "payload": w})
    order = [3, 0, 4, 1, 2]
    mag = filler(MAG, EAST, 250) + [resp(t, data[t]) for t in order] + [resp(77, 0xDEAD)]
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    events += model.take_all([resp(t, data[t]) for t in order] + [resp(77, 0xDEAD)])
    run = await b.run({HOST: flits, MAG: mag}, events, hostile=hostile,
                      extra={b.port(EAST): filler(MAG, EAST, 250)})
    checks, errors = compare_fp16_words(data, b.dram_words(run, b.port(MAG)), "filled word")
    b.v.add_checks(checks, errors)
    b.mon_clean(run)
    b.v.finish()


# ================================================================ drops and monitors
@cocotb.test()
async def test_unconsumed_types_are_dropped(dut) -> None:
    """MEM_WR_ACK, an unexpected MEM_RD_RESP, MEM_WR_REQ/DATA, CU_SIGNAL, reserved types: taken and dropped."""
    b = VcBench(dut, "test_unconsumed_types_are_dropped")
    flits = []
    for i, t in enumerate([3, 2, 1, 4, 6, 9, 0xA, 0] * 3):
        flits.append(pack_fields({"dst_x": 1, "dst_y": 1, "src_x": HOST[0], "src_y": HOST[1], "type": t,
                                  "txn": i, "last": 1, "payload": b.rng.getrandbits(256)}))
        flits.append(cu_inst(UNIT, HOST, i, 0, imem_payload(i, 0)))
    events = VectorCore(UNIT).take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=True)
    b.mon_clean(run)
    b.v.finish()


@cocotb.test()
@cocotb.parametrize(bug=["early_last", "late_last", "desc_last"])
async def test_monitor_catches_bad_framing(dut, bug: str) -> None:
    """A sender whose last bit disagrees with its burst's count (or a descriptor with last=1) is reported."""
    b = VcBench(dut, f"test_monitor_catches_bad_framing/bug={bug}")
    flits = cu_data_burst(UNIT, EAST, b.words(4), off=0, flags=0)
    last = FIELDS["last"]
    if bug == "early_last":
        flits[2] |= last.place(1)
    elif bug == "late_last":
        flits[4] &= ~last.place(1)
    else:
        flits[0] |= last.place(1)
    flits.append(cu_inst(UNIT, EAST, 1, 0, imem_payload(0, 0)))
    run = await b.run({EAST: flits}, VectorCore(UNIT).take_all(flits), quiet_limit=300)
    b.v.check(run.mon_err == 1, f"bad framing ({bug}) did not raise mon_err")
    b.v.finish()


# ================================================================ arithmetic wiring
def _fp16_pattern(rng) -> int:
    """Random FP16 bits, with zeros, subnormals, Inf/NaN and the saturation edge mixed in."""
    pick = rng.random()
    if pick < 0.06:
        return rng.choice([0x0000, 0x8000, 0x7C00, 0xFC00, 0x7E00, 0x0001, 0x83FF, 0x7BFF, 0xF8BB])
    return rng.getrandbits(16)


ALU_PROGRAM = """
VSETI 128
VSETVL
VSETMODE FLAT
VLD v0, A1+0
VLD v1, A1+8
VSETI s0, 1.5
VSETI s1, -3.25
VSETI 0.7
VADD v2, v0, v1
VSUB v3, v0, s0
VMUL v4, v0, v1
VFMA v5, v0, v1, v2
VFNMA v6, v0, s1, k1
VMAX v7, v0, v1
VMIN v8, v0, k3
VEXP2 v9, v0
VINV v10, v1
VNEG v11, v0
VABS v12, v1
VMOV v13, s0
VST v2, A2+0
VST v3, A2+8
VST v4, A2+16
VST v5, A2+24
VST v6, A2+32
VST v7, A2+40
VST v8, A2+48
VST v9, A2+56
VST v10, A2+64
VST v11, A2+72
VST v12, A2+80
VST v13, A2+88
VSETI 37
VSETVL
VMUL v2, v1, k2 !p1
VADD v3, v0, v0 ?p0
VST v2, A2+0
VST v3, A2+8
VLD v14, A4+300, FP32
VMUL v14, v14, s0
VFMA v15, v14, v14, k3
VST v14, A4+310, FP32
VST v15, A4+320, FP32
VSETI 128
VSETVL
VST v2, A2+96
VDRAIN A3+100
VDRAIN A5+300
VHALT
"""
ALU_DESC = {1: Descriptor(0, ((1, 8),)), 2: Descriptor(100, ((1, 8),)), 3: Descriptor(0x10000, ((32, 104),)),
            4: Descriptor(0, ((1, 5), (3, 2))), 5: Descriptor(0x20000, ((32, 10), (-3200, 3)))}


@cocotb.test()
@cocotb.parametrize(hostile=[False, True])
async def test_alu_ops_sources_and_masks(dut, hostile: bool) -> None:
    """Every wired opcode with V, S and K sources, VL tails (128, 37, 128 again: lanes past VL keep
    their value), predication (pm 1 and 2), FP32 loads/stores over a two-dim walk, a drain walk with a
    negative stride: the drained words equal the model's bit for bit."""
    b = VcBench(dut, f"test_alu_ops_sources_and_masks/hostile={hostile}")
    fp16 = [u16_to_word([_fp16_pattern(b.rng) for _ in range(16)]) for _ in range(16)]
    fp32 = [sum(b.rng.choice([b.rng.getrandbits(32), b.rng.getrandbits(32) & 0x807FFFFF | 0x3F000000])
                << (32 * j) for j in range(8)) for _ in range(10)]
    flits = bursts(UNIT, HOST, fp16, off=0, flags=0) + bursts(UNIT, HOST, fp32[:5], off=300, flags=0)
    flits += bursts(UNIT, HOST, fp32[5:], off=303, flags=0)   # words 300..307 (overlap rewrites 303, 304)
    flits += program_flits(UNIT, HOST, assemble(ALU_PROGRAM), ALU_DESC, run_last=1)
    model = VectorCore(UNIT)
    events = model.take_all(flits)
    run = await b.run({HOST: flits}, events, hostile=hostile)
    want = [e.flit & PAYLOAD for e in events if _type(e.flit) == FlitType.MEM_WR_DATA]
    checks, errors = compare_fp16_words(want, b.dram_words(run, b.port(MAG)), "drained word")
    b.v.add_checks(checks, errors)
    b.v.check(len(want) == 134, f"the model drained {len(want)} words, 134 expected")
    b.mon_clean(run)
    b.v.finish()
