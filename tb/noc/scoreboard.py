"""End-to-end flit scoreboard for the mesh NoC, free of any simulator import.

The testbench calls :meth:`FlitScoreboard.expect` when an endpoint's
injection handshake completes and :meth:`FlitScoreboard.observe` when an
endpoint captures a flit.  All matching happens in :meth:`finish`, after the
run, because only then is it known whether a flit was lost or merely late,
and which of two captures of the same flit is the duplicate.  Keeping this
pure Python makes it unit-testable in milliseconds, so its ability to *fail*
is itself tested.

Design rule: one injected fault yields one error.  Captures are matched to
injections in passes of decreasing confidence (exact value, then same
payload, then same header), and a flit that has been explained once is never
reported again (a misrouted flit is not also LOST; a late flit creates one
REORDER, not one per overtaken flit).

Error categories (each message starts with one, followed by the source and
destination endpoints as ``#index(x,y)`` and a decoded flit):

* ``SRC_MISMATCH`` header src differs from the injecting endpoint's coordinate.
* ``BAD_DST``      header dst is not a present endpoint (testbench bug); the
  flit is not tracked and captures of it are absorbed silently.
* ``LOST``         injected, never captured.
* ``DUPLICATE``    captured more times than injected (or a corrupted copy of
  an already-captured flit).
* ``MISROUTE``     captured at an endpoint other than the injected dst, or
  the dst field changed in flight (matched by payload).
* ``REORDER``      per (source, destination) pair, capture order differs
  from injection order.
* ``CORRUPT``      captured flit matches an injection by payload or header
  but other bits changed.
* ``UNKNOWN``      captured flit matches nothing injected.
* ``LATENCY``      capture_cycle - inject_cycle < min_cycles_per_hop * hops
  (default ROUTER_MIN_CYCLES_PER_HOP = 3: noc_router.v registers a flit three
  times per router, the input FIFO write, the holding register and the output
  register, upstream's hop).
* ``EMPTY``        nothing was injected at all (a vacuous pass is a failure
  unless ``finish(allow_empty=True)``).

Checks counting rule (``ScoreboardReport.checks``), one per evaluated check
of what the device did (a fact about the bench's own stimulus is a set-up
assertion: SRC_MISMATCH and BAD_DST still fail the run, but count nothing):

* 1 per capture: identity (does it match an injection?);
* 1 per capture matched to an injection: routing (right endpoint/dst intact?);
* 1 per flit delivered intact at the right endpoint: latency;
* 1 per adjacent pair of such deliveries within a (src, dst) pair: ordering;
* 1 per tracked injection at finish: loss;
* 1 for the non-empty-run check unless ``allow_empty``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Callable, Iterable, Optional

from models.noc.flit import FIELDS, FLIT_MASK, PAYLOAD_MASK, PAYLOAD_WIDTH, describe_flit
from models.noc.mesh import Coord, MeshGeometry

__all__ = ["CATEGORIES", "ROUTER_MIN_CYCLES_PER_HOP", "ScoreboardReport", "FlitScoreboard"]

ROUTER_MIN_CYCLES_PER_HOP = 3  # noc_router.v: input FIFO write, holding register, output register

CATEGORIES: tuple[str, ...] = (
    "SRC_MISMATCH",
    "BAD_DST",
    "LOST",
    "DUPLICATE",
    "MISROUTE",
    "REORDER",
    "CORRUPT",
    "UNKNOWN",
    "LATENCY",
    "EMPTY",
)
"""Every error category prefix the scoreboard can emit."""

# (shift, mask) of the header coordinates, taken once: the scoreboard reads them for every flit
_DX, _DXM = FIELDS["dst_x"].lsb, FIELDS["dst_x"].mask
_DY, _DYM = FIELDS["dst_y"].lsb, FIELDS["dst_y"].mask
_SX, _SXM = FIELDS["src_x"].lsb, FIELDS["src_x"].mask
_SY, _SYM = FIELDS["src_y"].lsb, FIELDS["src_y"].mask


def _dst_of(flit: int) -> Coord:
    """Header destination coordinate of a packed flit."""
    return ((flit >> _DX) & _DXM, (flit >> _DY) & _DYM)


def _src_of(flit: int) -> Coord:
    """Header source coordinate of a packed flit."""
    return ((flit >> _SX) & _SXM, (flit >> _SY) & _SYM)


def _changed_fields(a: int, b: int) -> list[str]:
    """Names of flit fields whose values differ between two packed flits."""
    return [n for n, spec in FIELDS.items() if spec.extract(a) != spec.extract(b)]


def _check_flit(value: object) -> int:
    """Validate a raw flit from the testbench (must be a 288-bit int)."""
    if type(value) is int and 0 <= value <= FLIT_MASK:  # the common case, in one test
        return value
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"flit must be an int, got {type(value).__name__}")
    if value < 0 or value > FLIT_MASK:
        raise ValueError(f"flit value {value:#x} does not fit in 288 bits")
    return value


@dataclass(slots=True)
class _Injection:
    """One tracked injected flit; ``seq`` is its global injection order."""

    seq: int
    src_port: int
    flit: int
    cycle: int
    dst_port: int
    hops: int


@dataclass(slots=True)
class _Capture:
    """One captured flit; ``seq`` breaks ties between same-cycle captures."""

    seq: int
    port: int
    flit: int
    cycle: int


# captures in the order they happened (same-cycle captures in the order they were recorded)
_capture_order = attrgetter("cycle", "seq")


def _pair_capture_order(ic: tuple[_Injection, _Capture]) -> tuple[int, int]:
    """(injection, capture) pairs in capture order."""
    return (ic[1].cycle, ic[1].seq)


@dataclass
class ScoreboardReport:
    """Outcome of :meth:`FlitScoreboard.finish`.

    Latency fields cover flits delivered intact at the right endpoint and are
    None when there were none.  ``slack_min`` is min(latency - floor * hops):
    how much slower than the routers' minimum (``min_cycles_per_hop``) the
    quickest flit was; 0 means a flit took exactly the minimum.
    """

    errors: list[str]
    checks: int
    expected: int
    delivered: int
    observed: int
    counts: dict[str, int] = field(default_factory=dict)
    latency_min: Optional[int] = None
    latency_mean: Optional[float] = None
    latency_max: Optional[int] = None
    slack_min: Optional[int] = None

    @property
    def passed(self) -> bool:
        """True when no check failed."""
        return not self.errors

    def summary(self) -> str:
        """One line suitable for a test log."""
        verdict = "PASS" if self.passed else f"FAIL ({len(self.errors)} errors)"
        cats = ", ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        lat = (
            f" latency min/mean/max={self.latency_min}/{self.latency_mean:.2f}/"
            f"{self.latency_max} slack_min={self.slack_min}"
            if self.latency_mean is not None
            else ""
        )
        return (
            f"scoreboard {verdict}: {self.checks} checks, {self.delivered}/"
            f"{self.expected} delivered, {self.observed} captured{lat}"
            + (f" [{cats}]" if cats else "")
        )

    def raise_if_errors(self, limit: int = 10) -> None:
        """Raise AssertionError listing the first ``limit`` errors and the total."""
        if self.passed:
            return
        shown = self.errors[:limit]
        more = len(self.errors) - len(shown)
        lines = [self.summary()] + [f"  {e}" for e in shown]
        if more:
            lines.append(f"  ... and {more} more")
        raise AssertionError("\n".join(lines))


class FlitScoreboard:
    """Checks that every injected flit arrives once, intact, in order, in time.

    ``min_cycles_per_hop`` sets the latency floor: a capture earlier than
    ``min_cycles_per_hop * hops`` cycles after injection is impossible for a
    correct pipeline and usually means the monitor or a bypass path is wrong.
    """

    def __init__(self, geometry: MeshGeometry, min_cycles_per_hop: int = ROUTER_MIN_CYCLES_PER_HOP) -> None:
        if min_cycles_per_hop < 0:
            raise ValueError(f"min_cycles_per_hop must be >= 0, got {min_cycles_per_hop}")
        self.geometry = geometry
        self.min_cycles_per_hop = min_cycles_per_hop
        n = geometry.num_ports
        self._num_ports = n  # taken once: geometry's properties compute it on every read
        self._present: list[bool] = [geometry.present(i) for i in range(n)]
        self._coords: list[Coord] = [geometry.port_coord(i) for i in range(n)]
        self._index_of: dict[Coord, int] = {c: i for i, c in enumerate(self._coords)}
        self._hops: dict[tuple[int, int], int] = {}
        self._seq = 0
        self._injections: list[_Injection] = []
        self._by_value: dict[int, list[_Injection]] = {}
        self._captures: list[_Capture] = []
        self._rejected: Counter[int] = Counter()
        # Errors found at expect time: (cycle, order, category, message).
        self._early: list[tuple[int, int, str, str]] = []

    # --------------------------------------------------------------- helpers
    def _ep(self, port: Optional[int]) -> str:
        """Render an endpoint as ``#index(x,y)`` (``?`` when unknown)."""
        return "?" if port is None else f"#{port}({self._coords[port][0]},{self._coords[port][1]})"

    def _port_of(self, coord: Coord) -> Optional[int]:
        """Present endpoint index at ``coord``, or None."""
        idx = self._index_of.get(coord)
        return idx if idx is not None and self._present[idx] else None

    def _check_port(self, port: int, what: str) -> None:
        """Reject port numbers outside the mesh's index space (testbench bug)."""
        if not isinstance(port, int) or not 0 <= port < self._num_ports:
            raise ValueError(
                f"{what} port {port!r} is outside 0..{self._num_ports - 1}"
            )

    @property
    def injected_count(self) -> int:
        """Number of expect() calls so far (tracked or rejected)."""
        return self._seq

    @property
    def captured_count(self) -> int:
        """Number of observe() calls so far."""
        return len(self._captures)

    # ------------------------------------------------------------ recording
    def expect(self, src_port: int, flit: int, inject_cycle: int) -> None:
        """Record that endpoint ``src_port`` injected ``flit`` at ``inject_cycle``."""
        self._check_port(src_port, "source")
        if not self._present[src_port]:
            raise ValueError(f"source port {src_port} has no endpoint in this mesh")
        flit = _check_flit(flit)
        seq = self._seq
        self._seq += 1
        src_coord = self._coords[src_port]
        hdr_src = _src_of(flit)
        if hdr_src != src_coord:
            self._early.append((inject_cycle, seq, "SRC_MISMATCH",
                f"SRC_MISMATCH {self._ep(src_port)}->?: header src={hdr_src} but injected "
                f"by endpoint {self._ep(src_port)} at cycle {inject_cycle} | {describe_flit(flit)}"))
        dst_port = self._port_of(_dst_of(flit))
        if dst_port is None:
            self._early.append((inject_cycle, seq, "BAD_DST",
                f"BAD_DST {self._ep(src_port)}->?: header dst={_dst_of(flit)} is not a "
                f"present endpoint (injected at cycle {inject_cycle}) | {describe_flit(flit)}"))
            self._rejected[flit] += 1
            return
        key = (src_port, dst_port)
        hops = self._hops.get(key)
        if hops is None:
            hops = self._hops[key] = self.geometry.hops(src_port, dst_port)
        inj = _Injection(seq, src_port, flit, inject_cycle, dst_port, hops)
        self._injections.append(inj)
        self._by_value.setdefault(flit, []).append(inj)

    def observe(self, port: int, flit: int, cycle: int) -> None:
        """Record that endpoint ``port`` captured ``flit`` at ``cycle``."""
        self._check_port(port, "capture")
        self._captures.append(_Capture(len(self._captures), port, _check_flit(flit), cycle))

    # ------------------------------------------------------------- checking
    def finish(self, *, allow_empty: bool = False) -> ScoreboardReport:
        """Match captures to injections and return the full report.

        Does not modify recorded state, so it may be called more than once
        (e.g. for an interim report).
        """
        errs: list[tuple[int, int, str, str]] = list(self._early)
        checks = 0
        order = [len(errs)]

        def err(cycle: int, cat: str, msg: str) -> None:
            errs.append((cycle, order[0], cat, f"{cat} {msg}"))
            order[0] += 1

        matched: dict[int, _Capture] = {}
        intact: list[tuple[_Injection, _Capture]] = []
        caps = sorted(self._captures, key=_capture_order)

        # Pass 1: exact value.  Captures at the intended endpoint claim the
        # injections first (FIFO), so a stray copy elsewhere is the one blamed.
        groups: dict[int, list[_Capture]] = {}
        for c in caps:
            groups.setdefault(c.flit, []).append(c)
        leftovers: list[_Capture] = []
        rejected = Counter(self._rejected)
        for value, clist in groups.items():
            injs = self._by_value.get(value)
            if injs is None:
                absorb = min(rejected[value], len(clist))
                if absorb:
                    checks += absorb
                    rejected[value] -= absorb
                    clist = clist[absorb:]
                leftovers.extend(clist)
                continue
            want = injs[0].dst_port
            if len(clist) == 1 and clist[0].port == want:  # the common case: one capture, where it was sent
                c = clist[0]
                matched[injs[0].seq] = c
                checks += 2  # identity, routing
                intact.append((injs[0], c))
                continue
            ordered = [c for c in clist if c.port == want] + [c for c in clist if c.port != want]
            for k, c in enumerate(ordered):
                checks += 1  # identity
                if k >= len(injs):
                    first = ordered[0]
                    inj = injs[-1]
                    err(c.cycle, "DUPLICATE",
                        f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}: captured again at "
                        f"{self._ep(c.port)} cycle {c.cycle} (injected {len(injs)}x, first "
                        f"capture at {self._ep(first.port)} cycle {first.cycle}) | "
                        f"{describe_flit(value)}")
                    continue
                inj = injs[k]
                matched[inj.seq] = c
                checks += 1  # routing
                if c.port != want:
                    err(c.cycle, "MISROUTE",
                        f"{self._ep(inj.src_port)}->{self._ep(want)}: captured at "
                        f"{self._ep(c.port)} cycle {c.cycle} (injected cycle {inj.cycle}) | "
                        f"{describe_flit(value)}")
                else:
                    intact.append((inj, c))

        # Pass 2: captures whose exact value was never injected.
        if leftovers:
            leftovers.sort(key=_capture_order)
            checks += self._explain_leftovers(leftovers, matched, err)

        # Latency and ordering over intact deliveries.
        lat_min = lat_max = slack = None
        lat_mean = None
        if intact:
            lats = []
            per_pair: dict[tuple[int, int], list[tuple[_Injection, _Capture]]] = {}
            floor = self.min_cycles_per_hop
            for inj, c in intact:
                checks += 1  # latency
                lat = c.cycle - inj.cycle
                lats.append(lat)
                s = lat - floor * inj.hops
                slack = s if slack is None or s < slack else slack
                if lat < floor * inj.hops:
                    err(c.cycle, "LATENCY",
                        f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}: latency {lat} "
                        f"cycles (injected {inj.cycle}, captured {c.cycle}) < "
                        f"{floor} x {inj.hops} hops | {describe_flit(inj.flit)}")
                per_pair.setdefault((inj.src_port, inj.dst_port), []).append((inj, c))
            lat_min, lat_max, lat_mean = min(lats), max(lats), sum(lats) / len(lats)
            for seq_list in per_pair.values():
                seq_list.sort(key=_pair_capture_order)
                for (a, ca), (b, cb) in zip(seq_list, seq_list[1:]):
                    checks += 1  # ordering
                    if a.seq > b.seq:
                        err(cb.cycle, "REORDER",
                            f"{self._ep(b.src_port)}->{self._ep(b.dst_port)}: flit injected at "
                            f"cycle {b.cycle} captured at cycle {cb.cycle}, after a flit injected "
                            f"later (cycle {a.cycle}, captured {ca.cycle}) | earlier-injected: "
                            f"{describe_flit(b.flit)} | later-injected: {describe_flit(a.flit)}")

        for inj in self._injections:
            checks += 1  # loss
            if inj.seq not in matched:
                err(inj.cycle, "LOST",
                    f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}: injected at cycle "
                    f"{inj.cycle}, never captured | {describe_flit(inj.flit)}")

        if not allow_empty:
            checks += 1
            if self._seq == 0:
                err(0, "EMPTY", "?->?: no flit was injected, so nothing was checked")

        errs.sort(key=lambda e: (e[0], e[1]))
        return ScoreboardReport(
            errors=[e[3] for e in errs],
            checks=checks,
            expected=len(self._injections),
            delivered=len(matched),
            observed=len(self._captures),
            counts=dict(Counter(e[2] for e in errs)),
            latency_min=lat_min,
            latency_mean=lat_mean,
            latency_max=lat_max,
            slack_min=slack,
        )

    def _explain_leftovers(self, leftovers: Iterable[_Capture], matched: dict[int, _Capture],
                           err: Callable[[int, str, str], None]) -> int:
        """Attribute captures with no exact match: by payload, then by header.

        Returns the number of checks evaluated.  Mutates ``matched`` so a
        flit explained here is not also reported as LOST.
        """
        checks = 0
        by_payload: dict[int, list[_Injection]] = {}
        by_header: dict[int, list[_Injection]] = {}
        for inj in self._injections:
            by_payload.setdefault(inj.flit & PAYLOAD_MASK, []).append(inj)
            by_header.setdefault(inj.flit >> PAYLOAD_WIDTH, []).append(inj)

        for c in leftovers:
            checks += 1  # identity
            got = describe_flit(c.flit)
            same_payload = by_payload.get(c.flit & PAYLOAD_MASK, [])
            inj = next((i for i in same_payload if i.seq not in matched), None)
            if inj is not None:
                matched[inj.seq] = c
                checks += 1  # routing
                route = f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}"
                changed = ",".join(_changed_fields(inj.flit, c.flit))
                if _dst_of(c.flit) != _dst_of(inj.flit):
                    err(c.cycle, "MISROUTE",
                        f"{route}: dst field changed in flight from {_dst_of(inj.flit)} to "
                        f"{_dst_of(c.flit)} (changed: {changed}); captured at "
                        f"{self._ep(c.port)} cycle {c.cycle} | captured: {got}")
                elif c.port != inj.dst_port:
                    err(c.cycle, "MISROUTE",
                        f"{route}: header corrupted (changed: {changed}) and captured at "
                        f"{self._ep(c.port)} cycle {c.cycle} | captured: {got}")
                else:
                    err(c.cycle, "CORRUPT",
                        f"{route}: header changed in flight (changed: {changed}); captured "
                        f"cycle {c.cycle} | expected: {describe_flit(inj.flit)} | captured: {got}")
                continue
            if same_payload:
                inj = same_payload[0]
                err(c.cycle, "DUPLICATE",
                    f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}: corrupted copy of an "
                    f"already-captured flit, captured at {self._ep(c.port)} cycle {c.cycle} | "
                    f"captured: {got}")
                continue
            same_header = [i for i in by_header.get(c.flit >> PAYLOAD_WIDTH, [])
                           if i.seq not in matched]
            if same_header:
                inj = next((i for i in same_header if i.dst_port == c.port), same_header[0])
                matched[inj.seq] = c
                checks += 1  # routing
                route = f"{self._ep(inj.src_port)}->{self._ep(inj.dst_port)}"
                xor = (inj.flit ^ c.flit) & PAYLOAD_MASK
                cat = "CORRUPT" if c.port == inj.dst_port else "MISROUTE"
                where = "" if cat == "CORRUPT" else f" and captured at {self._ep(c.port)}"
                err(c.cycle, cat,
                    f"{route}: payload changed in flight{where} (xor=0x{xor:x}); captured cycle "
                    f"{c.cycle} | expected: {describe_flit(inj.flit)} | captured: {got}")
                continue
            src = self._port_of(_src_of(c.flit))
            err(c.cycle, "UNKNOWN",
                f"{self._ep(src)}->{self._ep(c.port)}: captured at cycle {c.cycle} matches no "
                f"injected flit | {got}")
        return checks
