"""A float64 error bound for any compiled program, derived from its own run.

docs/numerics.md, "The float64 error bound", states the rules and their reasons.

rules.py (per-operation propagation), lanes.py (vector lanes with error: ALU
stages, VRED trees), port.py (errors across the link), mag.py, cluster.py,
vector.py (the golden unit models with an error shadow), machine.py (the
whole plan: :func:`models.bundle.bound.machine.derive`).
"""
