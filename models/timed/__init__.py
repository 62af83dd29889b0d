"""The machine's golden models with a clock: every flit stamped with the cycle it moves (issue: timing what-ifs).

Why: the golden models (models/machine/event_model.py) give every answer bit for bit on an ideal network and
keep no clock, so every timing question costs a full RTL run. Here each unit's golden model is wrapped by a
timed twin that stamps the flits it sends from the machine's timing facts (models/machine/unit_timing.py),
and a network model carries them hop by hop with the routers' own timing, so a bundle's rounds get machine
cycles comparable with the RTL's (and with upstream's timing_rtl.json).

Edges: cycle numbers count clock edges of the one machine clock. A unit's timed twin implements
:class:`models.timed.unit.TimedUnit`: ``take_at(flit, t)`` is called with ``t`` the edge the unit's endpoint
takes the flit from its router's local output register, and returns every flit the unit sends in answer,
each stamped with the edge its router's local input FIFO takes it.
"""
