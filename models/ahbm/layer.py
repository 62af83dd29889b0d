"""A whole Llama3-70B layer's decode attention on AHBM CUBEs: which heads run where, and what a layer's run
must add up to.

Why a model of its own: the layer run (tb/ahbm/layer.py) launches one decode per CUBE and merges their
reports; which CUBE holds which KV head and which query heads it answers for is a decision of the ADR's,
stated once here and in docs/ahbm.md ("A whole layer"), and checked against the merged report (every query
head answered exactly once).

ADR-001 §0, reference dimensions: H_q = 64 query heads on H_kv = 8 KV heads (GQA group G = 8), d = 128,
L = 80 layers. The mapping:

* **one KV head per CUBE.** A KV head's K/V cache lives in one CUBE, spread over its N PEs token by token
  (Layer 1, round-robin: token i on PE (start_pe + i) mod N) and reduced inside the CUBE (ADR §0: "reduction
  stays intra-CUBE, query head never spans CUBEs"). A layer takes H_kv = 8 CUBEs; their launches share
  nothing (no query head, no KV), so they run in parallel and the layer's attention latency is the slowest
  CUBE's launch;
* **the KV head's G query heads batched in every composite** (ADR §5.2 and §8 item 6: "GQA batching on the
  Q axis", the main lever of KV-load-bound decode): each K/V tile is read from the bank once per request for
  all 8 query heads (ROWS = G x T_q = 8 in decode); query head h belongs to KV head h // G (Llama's grouping:
  KV head k serves query heads kG .. kG+G-1);
* **B requests per launch**, request r starting at PE (request_id mod N) (Layer 2).

The ADR's other allocation line, "one query head per CUBE; for GQA-8, one KV head's 8 query heads map to
8 CUBEs", is its policy for sequence-parallel prefill; applied to decode it would read every KV head's
cache in 8 CUBEs, 8x the bank bytes of the batched mapping for the same answers, against the ADR's own
decode analysis (§5.2: "decode is KV-load-bound, so amortizing K/V load over the group is where the win
is"). :func:`kv_bytes` gives both figures.
"""

from __future__ import annotations

from dataclasses import dataclass

H_Q = 64  # query heads (ADR-001 §0)
H_KV = 8  # KV heads
GQA = H_Q // H_KV  # query heads per KV head, G
D_HEAD = 128
LAYERS = 80
BF16_BYTES = 2


@dataclass(frozen=True)
class CubeAssignment:
    """One CUBE of the layer: the KV head it holds and the query heads it answers for."""

    cube: int
    kv_head: int
    query_heads: tuple[int, ...]

    @property
    def heads_text(self) -> str:
        return f"{self.query_heads[0]}-{self.query_heads[-1]}"


def layer_mapping(cubes: int = H_KV) -> list[CubeAssignment]:
    """The layer's CUBEs in order, KV head k on CUBE k with query heads kG .. kG+G-1. `cubes` below H_kv runs
    only the first ones (a partial layer is never called a layer: :func:`whole_layer`)."""
    if not 1 <= cubes <= H_KV:
        raise ValueError(f"cubes={cubes}: a layer has {H_KV} KV heads, one per CUBE; give 1..{H_KV}")
    return [CubeAssignment(k, k, tuple(range(k * GQA, (k + 1) * GQA))) for k in range(cubes)]


def whole_layer(assignments: list[CubeAssignment]) -> bool:
    """Every query head of the layer answered exactly once, each by the CUBE of its KV head."""
    heads = sorted(h for a in assignments for h in a.query_heads)
    return heads == list(range(H_Q)) and all(h // GQA == a.kv_head for a in assignments for h in a.query_heads)


def kv_bytes(context: int, b: int, d: int = D_HEAD) -> dict[str, int]:
    """Bank bytes one layer's decode attention reads for `b` requests of `context` tokens: K and V (bf16) of
    every KV head once (the batched mapping), and what the one-query-head-per-CUBE mapping would read."""
    once = H_KV * b * 2 * context * d * BF16_BYTES
    return {"batched": once, "one_query_head_per_cube": once * GQA}


__all__ = ["BF16_BYTES", "CubeAssignment", "D_HEAD", "GQA", "H_KV", "H_Q", "LAYERS", "kv_bytes", "layer_mapping",
           "whole_layer"]
