"""ClusterModel: the event model with the per-instruction helpers benches and kernel models call.

The state and every rule are ClusterCore's; this adds the views older callers
use: :meth:`ClusterModel.receive` (inbound flits -> the flits sent back),
:meth:`ClusterModel.execute` (one CU_INST -> its flits and its completion, an
:class:`Outcome`), :meth:`ClusterModel.fill_responses` (answer a FILL as the
memory agent would and apply it), and the building blocks ``run_gemm`` /
``drain`` on decoded fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Sequence

from models.cu.base import SigCode, signal_fields
from models.noc.flit import FIELDS, FlitType

from .core import ClusterCore, Event, burst_ok
from .images import fill_responses_for
from .isa import Fault


@dataclass
class Outcome:
    """What one instruction made the cluster send: flits (in order) and its completion.

    ``completion`` is None while the instruction is still in flight (a FILL waiting for its entries, or an
    instruction queued behind one); ``fault`` is the FAULT code it retired with, if any.
    """

    flits: list[int]
    completion: int | None
    fault: Fault | None


def _is_completion_of(e: Event, inst: int) -> bool:
    f = e.flit
    if FIELDS["type"].extract(f) != FlitType.CU_SIGNAL or signal_fields(f)[0] == SigCode.DATA_RECEIVED:
        return False
    return (e.dst == (FIELDS["src_x"].extract(inst), FIELDS["src_y"].extract(inst))
            and FIELDS["txn"].extract(f) == FIELDS["txn"].extract(inst))


class ClusterModel(ClusterCore):
    """ClusterCore plus the helpers of the module docstring."""

    burst_ok = staticmethod(burst_ok)

    def __init__(self, coord: tuple[int, int] = (1, 1), mag: tuple[int, int] = (0, 1)) -> None:
        super().__init__(coord, mag)
        self.last_events: list[Event] = []  # what the last fill_responses() made the cluster send

    def receive(self, flits: Sequence[int]) -> list[int]:
        """Apply inbound flits (CU_DATA bursts, fill responses) in order; return the flits sent back (acks)."""
        return [e.flit for e in self.take_all(flits)]

    def execute(self, inst: int) -> Outcome:
        """Run one CU_INST flit; a FILL completes later, when :meth:`fill_responses` or ``take`` delivers its
        entries."""
        events = self.take(inst)
        done = next((e for e in events if _is_completion_of(e, inst)), None)
        fault = None
        if done is not None:
            code, arg = signal_fields(done.flit)
            fault = Fault(arg) if code == SigCode.FAULT else None
        return Outcome([e.flit for e in events if e is not done], None if done is None else done.flit, fault)

    def fill_responses(self, words: Sequence[int], inst_payload: int) -> list[int]:
        """The MEM_RD_RESP flits the memory agent sends this cluster for a FILL reading `words` (4n of
        them), applied as the cluster takes them; the FILL's completion is in :attr:`last_events`."""
        flits = fill_responses_for(words, inst_payload, self.coord, self.mag)
        self.last_events = self.take_all(flits)
        return flits

    def run_gemm(self, f: Mapping[str, int]) -> list[int]:
        """A GEMM's sweep on decoded fields (no completion); returns the flits it emits."""
        return self.sweep(f)

    def drain(self, f: Mapping[str, int]) -> list[int]:
        """The flits of a DRAIN on decoded fields, in the order they leave (no completion)."""
        return self.drain_flits(f)


__all__ = ["ClusterModel", "Outcome"]
