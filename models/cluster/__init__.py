"""Golden model of the cluster CU (rtl/cluster/cluster_cu.v), plain Python/numpy, by concern.

What crosses the cluster's port follows units.md §C and protocol.md §4-§6
(fixed protocol); everything inside is ours and stated in docs/cluster.md. The
RTL must agree with this model bit for bit (tb/cluster/test_cluster.py).

* ``isa``    - the CU_INST fields (incl. peers/npeer/preq and the bank bits),
  encoder/decoder, the fault codes, the builders :func:`fill`, :func:`gemm`,
  :func:`drain`;
* ``images`` - L1 images (:func:`a_entries`, :func:`b_entries`), the memory
  agent's answer to a FILL, OP_SEND granules, ack and drain counts;
* ``flits``  - what the cluster originates: a leading FILL's MEM_RD_REQ, the
  leader rule, the write port's bursts (DRAIN and emitting GEMM);
* ``core``   - :class:`ClusterCore`, the event model: ``take(flit) ->
  list[Event]`` answers every inbound flit as the RTL does;
* ``model``  - :class:`ClusterModel`, ClusterCore with per-instruction helpers
  (``receive``, ``execute`` -> :class:`Outcome`, ``fill_responses``).
"""

from models.cu.base import (  # noqa: F401  (CU_DATA encoders re-exported for the benches)
    SigCode, completion, cu_data_bursts, cu_data_descriptor, cu_data_fields, signal_flit)

from .core import MAG_DEFAULT, ClusterCore, Event, burst_ok, l1_entry
from .flits import fill_flags, fill_request, leads, listed_peers, own_byte, write_port
from .images import (
    a_entries, acks_for, b_entries, data_received, drain_shape, fill_responses_for, granules_of, send_granules,
    split_by_type, unpack_send,
)
from .isa import (
    ACC_TILES, ADDR_BITS, ADDR_HIGH, ADDR_LOW, ANCHOR_NEUTRAL, BANK_ENTRIES, CU_TYPE, ENTRY_GRANULES, FILL_MAX,
    GRANULE_BYTES, INST_FIELDS, L1_ENTRIES, L1_GRANULES, MAX_PEERS, N_BUFFERS, PEER_GRANULES, WBURST, Buf, Coord,
    Fault, Op, decode_inst, drain, emits, encode_inst, fault_of, fault_reason, fill, gemm, one, peer_field,
)
from .model import ClusterModel, Outcome
from .sweep import Command, sweep_order
