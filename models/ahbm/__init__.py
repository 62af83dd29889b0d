"""AHBM GQA fused attention (ADR-001) golden models, pure numpy.

numerics  - bf16 <-> fp32, the defined exp_f32, ordered fp32 reductions;
attention - attn_tile composite, merge, finalize, references, tolerance rule;
placement - round-robin KV placement, causal tile/ring-step decisions, masks;
tree      - log-sum-exp reduction tree mapped onto an R x C mesh;
kernel    - the per-PE kernel reference (decode/prefill, with/without SP).
"""
