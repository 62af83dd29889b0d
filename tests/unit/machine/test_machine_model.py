"""The machine model (models/machine/event_model.py) runs the compiled bundles through the loader, as the RTL does.

On every bundle (the vector cores', the clusters' and the memory agent's event
models on one ideal network): every output region equals upstream's RTL bit
for bit (select_lt_m32n64: upstream's models, units.md H1, with its 16 HAZARD
H1 reports), every await is met by exact equality, the baselines and counts of
every round are the ones upstream's run observed, the slots staged and the
signals per node are the plan's. And the parts one by one: the orchestrator
model's credit and dispatch rules, landing, the refusals, the plug-in table
(a machine without a unit's model still runs the rounds that do not need it).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from models.bundle.reader import Bundle, bundle_names
from models.bundle.judge import judge, lanes_vs_models, reference
from models.cu.base import SigCode, signal_flit
from models.bundle.executor import (MachineMismatch, NotLanded, PollFailed, Unawaited, check_machine, execute,
                                    expected_signals, run_sync)
from models.noc.flit import FlitType, make_flit
from models.bundle.loader import STATUS_MASK, Poll
from models.machine.event_model import UNIT_MODELS, MachineModel, MissingUnit, ModelHost, ModelRefused, model_refusal, run_bundle

H1_BUNDLES = {"select_lt_m32n64"}  # the one compiled program whose run meets hazard H1 (16 stale predicate reads)
from models.machine.layouts import FUSED4, MM_MESH_SYS, UnitKind
from models.orch.host_port import NodeStatus, ProgStat, Reg, node_status_addr, pack_coord, stage_addr
from models.orch.event_model import OrchModel
from models.vector.link import Event
from tb.bundle.plan_faults import orphan_follower

ORCH = FUSED4.agent
# the machine as it stood before the cluster's event model: the cluster rounds are refused, the rest runs
NO_CLUSTER = {**UNIT_MODELS, UnitKind.CLUSTER: lambda c, mm: MissingUnit(c, "cluster", "models.cluster.ClusterCore")}


@pytest.mark.parametrize("name", bundle_names())
def test_bundle_runs_as_compiled(name: str) -> None:
    b = Bundle(name)
    run = run_bundle(b)
    assert judge(b, run.result) == []  # outputs, observed baselines/counts, signals per node, staged slots
    assert run.result.signals() == expected_signals(b)
    assert not run.faults and not run.errors
    assert run.counts["wr_data_sent"] == run.counts["dram_words_written"] > 0
    assert run.counts["inst_pushed"] == sum(r.kicked for r in run.result.rounds)
    assert max(run.counts["max_queued"].values()) <= FUSED4.inst_depth
    assert len(run.hazards) == (16 if name in H1_BUNDLES else 0)
    # compiled code emits no D2/D4 chain and no FP32 store: upstream hazards H2, H3 and H4 never occur (V.8)
    assert [h.line(str) for h in run.hazards if h.hid != "H1"] == []
    if name in H1_BUNDLES:  # the interlocked result is not upstream's RTL's (542 lanes) but its models'
        assert reference(b) == "models"
        assert sum(lanes_vs_models(b, run.image).values()) == 0
    else:
        assert reference(b) == "rtl"


def test_a_machine_without_a_units_model_refuses_its_rounds_by_name() -> None:
    vc_only = [n for n in bundle_names() if model_refusal(Bundle(n), NO_CLUSTER) is None]
    assert vc_only == ["group_norm_g8n128", "ops_log2_m32n64", "ops_where_m32n64", "rmsnorm_m32n64",
                       "select_lt_m32n64", "softmax_m32n64"]
    with pytest.raises(ModelRefused, match=r"round\(s\) \[0\] run on the clusters \(MG\).*ClusterCore"):
        run_bundle(Bundle("matmul_m32k64n32"), unit_models=NO_CLUSTER)
    assert judge(Bundle("softmax_m32n64"), run_bundle(Bundle("softmax_m32n64"), unit_models=NO_CLUSTER).result) == []


# ---------------------------------------------------------------- the orchestrator model
def _inst(i: int, last: int = 0) -> int:
    return make_flit((0, 0), (0, 0), FlitType.CU_INST, 0, last, i)


def test_credit_is_set_spent_per_cu_inst_and_regained_per_inst_complete_only() -> None:
    o = OrchModel(ORCH, 128)
    flits = [_inst(0), _inst(1), make_flit((0, 0), (0, 0), FlitType.CU_DATA, 0, 0, 7), _inst(2, 1)]
    for slot, flit in enumerate(flits):
        for w in range(5):
            o.write(stage_addr(slot, w, 128), (flit >> (64 * w)) & (2**64 - 1))
    o.write(Reg.PROG_CRED, 512)
    o.write(Reg.PROG_CRED, 2)  # a write sets the credit, it does not add
    assert o.read(Reg.PROG_CRED) == 2
    o.write(Reg.PROG_DST, pack_coord((1, 0)))
    o.write(Reg.PROG_LEN, 4)
    sent = o.write(Reg.PROG_KICK, 1)
    assert len(sent) == 3  # two CU_INSTs and the CU_DATA (free); the third CU_INST waits for credit
    assert all(e.dst == (1, 0) and (e.flit >> 272) & 0xFF == ORCH[0] << 4 | ORCH[1] for e in sent)
    assert ProgStat.decode(o.read(Reg.PROG_STAT)) == ProgStat(True, 1, 0)
    assert o.write(Reg.PROG_KICK, 1) == [] and "while one is running" in o.errors[-1]
    assert o.take(signal_flit(ORCH, (1, 0), SigCode.BATCH_COMPLETE, 0)) == []  # no credit for BATCH_COMPLETE
    assert len(o.take(signal_flit(ORCH, (1, 0), SigCode.INST_COMPLETE, 0))) == 1
    o.take(signal_flit(ORCH, (1, 0), SigCode.FAULT, 5))
    st = NodeStatus.decode(o.read(node_status_addr((1, 0))))
    assert (st.count, st.code, st.arg, o.credit, o.faults) == (3, SigCode.FAULT, 5, 0, [((1, 0), 5)])
    o.write(Reg.PROG_BASE, 100)
    o.write(Reg.PROG_LEN, 29)
    assert o.write(Reg.PROG_KICK, 1) == [] and "past the staging RAM" in o.errors[-1]


def test_a_read_of_an_unlanded_line_is_refused() -> None:
    mm = MachineModel(FUSED4)
    host = ModelHost(mm)
    addr = FUSED4.mem_base + 0x40
    flits = [make_flit(FUSED4.mag, ORCH, FlitType.MEM_WR_REQ, 1, 0, addr << 216),
             make_flit(FUSED4.mag, ORCH, FlitType.MEM_WR_DATA, 1, 1, 0xABCD)]
    run_sync(host.stage(dict(enumerate(flits))))
    for reg, value in ((Reg.PROG_DST, pack_coord(FUSED4.mag)), (Reg.PROG_LEN, 2), (Reg.PROG_KICK, 1)):
        mm.write(reg, value)
    assert mm.outstanding_writes == 1  # handed to the network, not yet delivered
    with pytest.raises(NotLanded, match="1 write\\(s\\) outstanding"):
        run_sync(host.read_dram(addr, 32))
    run_sync(host.wait_landed("test"))
    assert int.from_bytes(run_sync(host.read_dram(addr, 32)).tobytes(), "little") == 0xABCD


def test_a_poll_that_never_matches_names_node_counts_and_last_signal() -> None:
    host = ModelHost(MachineModel(FUSED4))
    cmd = Poll(node_status_addr((1, 0)), 5 << 8 | 1, STATUS_MASK, "NODE_STATUS[1,0]", (1, 0), 0, 5)
    with pytest.raises(PollFailed, match=r"node \(1,0\): expected count 5 \(baseline 0 \+ 5\), seen 0 .*no signal"):
        run_sync(host.poll(cmd, "test"))


def test_an_await_one_short_is_a_race_with_the_run_still_going() -> None:
    """The plan awaits one signal fewer than the kick makes: the await is met while the RUN still runs, so
    the host would go on racing it (docs/bundle.md, "The models' watchdogs"): named, with the RUN."""
    b = Bundle("ops_log2_m32n64")
    step = next(s for p in b.meta["plan"] if p["kind"] == "round" for s in p["steps"] if s["op"] == "await")
    step["count"] -= 1
    with pytest.raises(Unawaited, match=r"round 0 \(log2:0, VC\): after its awaits: .*: vector core \(1,0\): "
                       r"its RUN from pc \d+ in progress at pc \d+"):
        run_bundle(b)


class _StraySignal(ModelHost):
    """A unit sends one signal more than the plan awaits, in flight as the host goes on past its awaits."""

    async def wait_landed(self, what: str) -> None:
        if "after its awaits" in what:
            self.mm.queue.append(Event(ORCH, signal_flit(ORCH, (1, 0), SigCode.INST_COMPLETE, 0)))
        await super().wait_landed(what)


def test_a_surplus_signal_after_the_await_is_an_overshoot() -> None:
    """A signal in flight is let land (it is no work) and then counted: the exact-count check names it."""
    b = Bundle("ops_log2_m32n64")
    mm = MachineModel(FUSED4)
    res = run_sync(execute(b, _StraySignal(mm), FUSED4))
    assert any("node (1,0) count 45 once the writes landed, the await matched 44" in p and "1 surplus signal(s)" in p
               for p in res.problems), res.problems
    assert judge(b, res)


def test_machines_the_bundle_was_not_compiled_for_are_refused() -> None:
    b = Bundle("ops_log2_m32n64")
    with pytest.raises(MachineMismatch, match=r"machine\.inst_depth = 512 \(bundle\.json\), machine fused4 has 32"):
        check_machine(b, dataclasses.replace(FUSED4, inst_depth=32))
    with pytest.raises(MachineMismatch, match=r"machine\.mem_window_base = 0x80000000 .*has 0x0 .*recompile it"):
        check_machine(b, dataclasses.replace(FUSED4, mem_base=0))
    with pytest.raises(MachineMismatch, match=r"machine\.units\.MG = \[\[1, 1\], .*mm_mesh_sys has \[\[2, 1\]\]"):
        check_machine(b, MM_MESH_SYS)
    with pytest.raises(ValueError, match="raise dram_words"):
        check_machine(b, dataclasses.replace(FUSED4, dram_words=64))
    step = next(s for p in b.meta["plan"] if p["kind"] == "round" for s in p["steps"] if s["op"] == "seed")
    step["credits"] = 513  # more credit than the FIFOs the bundle itself declares
    with pytest.raises(MachineMismatch, match=r"^bundle\.json plan\[\d+\]\.steps\[\d+\] \(round \d+, seed\) credits: 513, "
                       r".*hold 512 \(inst_depth\); recompile"):
        check_machine(b, FUSED4)
    step["credits"] = 1
    kick = next(s for p in b.meta["plan"] if p["kind"] == "round" for s in p["steps"] if s["op"] == "kick")
    kick["base"] = 128  # past the staging RAM the bundle itself declares
    with pytest.raises(MachineMismatch, match=r"^bundle\.json plan\[\d+\]\.steps\[\d+\] \(round \d+, kick\) base: 128 \+ "
                       r"\d+ flit\(s\) reaches slot \d+, machine fused4 stages 128 \(stage_slots, 0\.\.127\)"):
        check_machine(b, FUSED4)


def test_the_dram_is_at_machine_addresses_and_keeps_the_bytes_around_a_partial_store() -> None:
    mm = MachineModel(FUSED4)
    base = FUSED4.mem_base
    mm.load(base, np.arange(64, dtype=np.uint8))
    mm.load(base + 30, np.array([0xEE, 0xFF, 0x11], dtype=np.uint8))
    got = mm.dump(base, 64)
    assert list(got[28:34]) == [28, 29, 0xEE, 0xFF, 0x11, 33] and got[0] == 0 and got[63] == 63
    assert mm.dram.word(1) == int.from_bytes(bytes(got[32:64]), "little")  # word 0 is mem_base
    with pytest.raises(ValueError, match="outside its DRAM window"):
        mm.load(0x1000, np.zeros(32, np.uint8))


def test_an_orphan_follower_is_named_when_the_machine_goes_quiet() -> None:
    """A multicast FILL whose leader never sends: the await fails naming the node and the follower's FILL."""
    b = Bundle("matmul_m32k64n32")
    n = orphan_follower(b, (2, 1), (1, 1))
    with pytest.raises(PollFailed, match=r"await at node \(2,1\): expected count 4 .* went quiet; cluster \(2,1\): "
                       rf"FILL as follower \(the group's leader sends the request\) waiting for MEM_RD_RESP, 0 of "
                       rf"{n} entries committed"):
        run_bundle(b)


class _ReadEveryDelivery(ModelHost):
    """The host as it was: the poll's condition read before every delivery."""

    def _holds(self, cmd: Poll):
        return lambda: self.mm.read(cmd.addr) & cmd.mask == cmd.want


@pytest.mark.parametrize("name", ["softmax_m32n64", "matmul_m32k64n32"])
def test_a_poll_rereads_only_after_the_orchestrator_changed_and_stops_where_reading_always_does(name: str) -> None:
    """ModelHost re-reads a poll's register only after the orchestrator took a flit or the host wrote; each
    poll must still end after the same delivery, so the steps at every poll and the run's counts are equal."""
    from models.bundle.executor import execute

    b = Bundle(name)
    runs = []
    for host in (ModelHost, _ReadEveryDelivery):
        mm = MachineModel(FUSED4)
        h = host(mm)
        at_poll: list[int] = []
        plain = h.poll

        async def poll(cmd: Poll, what: str, plain=plain, mm=mm, at_poll=at_poll) -> int:
            got = await plain(cmd, what)
            at_poll.append(mm.steps)
            return got
        h.poll = poll  # type: ignore[method-assign]
        res = run_sync(execute(b, h, FUSED4))
        runs.append((at_poll, mm.steps, dict(mm.delivered), res.image.tobytes()))
    assert runs[0][0] and runs[0] == runs[1]
