"""How a shadowed unit hands errors across the link: the error of the flit it is taking, and those of the
data flits it sends, in sending order.

The machine (models/bundle/bound/machine.py) sets ``inbound`` before every ``take`` to
the error array the delivered flit carries (None for a flit without data); a
unit appends ``(payload, errors)`` to ``outbox`` for every data flit it sends,
and the machine pairs them with the flits the golden model returned, payload
against payload, so an error can never ride on the wrong flit.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from .rules import BoundError


class ErrorPort:
    """The error side of a unit's link port (a mixin of the shadowed units)."""

    def _init_port(self) -> None:
        self.inbound: np.ndarray | None = None
        self.outbox: deque[tuple[int, np.ndarray]] = deque()

    def take_inbound(self, what: str) -> np.ndarray:
        """The delivered flit's errors; a data flit that arrives without them is refused by name."""
        if self.inbound is None:
            raise BoundError(f"{what} arrived without an error bound: its sender is not shadowed")
        return self.inbound

    def send(self, payload: int, err: np.ndarray) -> None:
        self.outbox.append((int(payload), np.array(err, dtype=np.float64)))  # a copy: the sender keeps changing its own


__all__ = ["ErrorPort"]
