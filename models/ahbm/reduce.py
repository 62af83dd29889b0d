"""Timing model of the AHBM reduction: the streamed MERGE and the IPCQ link width (docs/ahbm.md §3,
"the streamed MERGE"), cycle for cycle as rtl/ahbm/pe/pe_engine.v runs it.

A streamed MERGE (`MERGE` with `SRC_Q`) takes the child's (m, l, O) packet from its queue word by word
as it arrives and merges each word at once; with `PUSH_EN` it pushes the merged state to its parent,
each output word as soon as it is final. The rules, on the edges of the PE clock:

* the command is dispatched at edge `start`; from edge `start + 1` the engine may take one input word
  per edge, the first (the header) as soon as it is queued: a word written into the queue at edge `a`
  can be taken from edge `a + 1`;
* a taken word holds the engine (its VEC) for `hold` edges: one for the header, and for a body word
  `max(1, ceil(n_O / MERGE_LANES))` with `n_O` the O elements it carries and
  `MERGE_LANES = max(1, VEC_LANES // 2)` (a merged element is two products and a sum); the word that
  completes every row's m and l holds it `ceil(ROWS / VEC_LANES)` edges more (the row scales);
* output word j (0 = header) goes on the push port at the edge after input word j was taken (the two
  packets have the same layout; the header waits for the input header, a body word also for the row
  scales), and is taken at a later edge when the receiving queue has room, one word per edge;
* the command completes at the first edge at which its last input word's hold has ended and, with
  PUSH_EN, its last output word has been taken.

`stream_merge` replays these rules for given arrival edges and returns every take, every push and the
completion edge; the module bench (tb/ahbm/test_pe_merge.py) records the same three things from the RTL
and requires equality. `reduction_roofline` is the cost of a whole tree reduction the decode sweep sets
against its measured launches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from models.ahbm.ipcq import mlo_words

LINK_WIDTHS = (64, 128, 256, 512)     # the IPCQ_W values the RTL builds


def check_width(width: int) -> None:
    if width not in LINK_WIDTHS:
        raise ValueError(f"IPCQ link width {width} bits: the PE builds {', '.join(map(str, LINK_WIDTHS))}")


def merge_lanes(vec_lanes: int) -> int:
    """O elements one streamed MERGE merges per cycle."""
    return max(1, vec_lanes // 2)


def word_holds(rows: int, d: int, width: int, vec_lanes: int = 16) -> list[int]:
    """Edges each word of an (m, l, O) packet holds a streamed MERGE: [header, body 1, ..., body LEN]."""
    check_width(width)
    epw = width // 32
    n_body = mlo_words(d, rows, 1, width)
    o_end = 2 * rows + rows * d
    lanes = merge_lanes(vec_lanes)
    holds = [1]
    for j in range(n_body):
        lo, hi = j * epw, (j + 1) * epw            # elements [lo, hi) of the body
        n_o = max(0, min(hi, o_end) - max(lo, 2 * rows))
        hold = max(1, -(-n_o // lanes))
        if j + 1 == ml_body_word(rows, width):
            hold += -(-rows // vec_lanes)
        holds.append(hold)
    return holds


@dataclass(frozen=True)
class MergeTiming:
    takes: list[int]      # edge each input word was taken (header first)
    pushes: list[int]     # edge each output word was taken by the receiving queue (empty without push)
    done: int             # edge the command completed


def stream_merge(rows: int, d: int, width: int, start: int, arrivals: Sequence[int], push: bool,
                 vec_lanes: int = 16, push_ready: Callable[[int], bool] = lambda edge: True,
                 limit: int = 1_000_000) -> MergeTiming:
    """The edges of one streamed MERGE dispatched at `start`, input word j queued at `arrivals[j]`."""
    holds = word_holds(rows, d, width, vec_lanes)
    n = len(holds)
    if len(arrivals) != n:
        raise ValueError(f"{len(arrivals)} arrival edges for a {n}-word packet (rows {rows}, d {d}, "
                         f"width {width})")
    ml_word = ml_body_word(rows, width)
    taken = 0            # registered state, as in the RTL
    left = 0
    idone = xdone = False
    pv = pdone = False
    pword = 0
    takes: list[int] = []
    pushes: list[int] = []
    for edge in range(start + 1, start + limit):
        # every decision of this edge reads the state the previous edge left
        n_taken, n_left, n_idone, n_xdone = taken, left, idone, xdone
        n_pv, n_pdone, n_pword = pv, pdone, pword
        if left:
            n_left = left - 1
        elif not idone and arrivals[taken] < edge:
            takes.append(edge)
            n_left = holds[taken] - 1
            n_xdone = xdone or taken == ml_word
            n_taken = taken + 1
            n_idone = n_taken == n
        if push and not pdone:
            nxt = pword + 1 if pv else pword
            avail = taken >= 1 if nxt == 0 else (taken > nxt and xdone)
            if pv and push_ready(edge):
                pushes.append(edge)
                if pword == n - 1:
                    n_pv, n_pdone = False, True
                else:
                    n_pv = avail
                    n_pword = pword + 1
            elif not pv and avail:
                n_pv = True
        if idone and left == 0 and (not push or pdone):
            return MergeTiming(takes, pushes, edge)
        taken, left, idone, xdone = n_taken, n_left, n_idone, n_xdone
        pv, pdone, pword = n_pv, n_pdone, n_pword
    raise RuntimeError(f"streamed MERGE not complete within {limit} edges (arrivals end at {max(arrivals)})")


def ml_body_word(rows: int, width: int) -> int:
    """Body word (1-based) that completes every row's m and l: it carries element 2 ROWS - 1."""
    return (2 * rows - 1) // (width // 32) + 1


def reduction_roofline(n_pes: int, rows: int, d: int, width: int, vec_lanes: int = 16) -> int:
    """Cycles a tree reduction over n_pes PEs costs at least, once the leaves' partials are final:
    ceil(log2 N) levels, each one packet over one link at one word per cycle, or the merge's own
    rate where it is slower (the longer of the packet's words and its merge holds)."""
    levels = max(0, (n_pes - 1).bit_length())
    per_level = max(1 + mlo_words(d, rows, 1, width), sum(word_holds(rows, d, width, vec_lanes)))
    return levels * per_level


def compare_timing(measured: MergeTiming, model: MergeTiming, what: str) -> list[str]:
    """Differences between a streamed MERGE the RTL ran and the model's, one line each (empty: equal)."""
    out = []
    for name, verb in (("takes", "taken"), ("pushes", "pushed")):
        got, want = getattr(measured, name), getattr(model, name)
        if len(got) != len(want):
            out.append(f"{what}: {len(got)} words {verb}, the model {len(want)}")
            continue
        bad = [i for i, (g, w) in enumerate(zip(got, want)) if g != w]
        if bad:
            i = bad[0]
            out.append(f"{what}: {len(bad)} {name} at other edges than the model's, first word {i}: edge "
                       f"{got[i]}, model {want[i]}")
    if measured.done != model.done:
        out.append(f"{what}: completed at edge {measured.done}, the model at {model.done}")
    return out
