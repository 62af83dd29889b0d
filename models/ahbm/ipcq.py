"""Golden model of the AHBM IPCQ fabric (rtl/ahbm/ipcq*.v) and of its bench traffic.

Plain Python, no cocotb. It holds:
- the packet framing (header fields, `last` rule) shared with the RTL;
- mesh geometry: PE numbering, directions, neighbours (as ipcq_mesh.v wires them);
- `IpcqQueue`, a word-level model of one link (blocking push, take-style pop,
  pkt_avail status);
- the seeded traffic the harness generators produce (mix32, direction choice,
  packet lengths, body words), mirrored bit for bit by rtl/bench/ipcq_harness.v,
  and `expected_traffic`, the per-link packet lists the scoreboard expects.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

M32 = 0xFFFF_FFFF
N, E, S, W = 0, 1, 2, 3
DIR_NAMES = ("N", "E", "S", "W")
KIND_MLO = 0x01           # an (m, l, O) partial (docs/ahbm.md)
KIND_TRAFFIC = 0x5A       # bench traffic


def opposite(d: int) -> int:
    return (d + 2) % 4


# ---------------------------------------------------------------- framing

@dataclass(frozen=True)
class Header:
    length: int      # body words after the header
    kind: int
    src: int
    tag: int         # W-32 bits (the bench uses it as per-(src, dir) sequence number)

    def pack(self, width: int = 64) -> int:
        if not 0 <= self.length < 1 << 16:
            raise ValueError(f"packet length {self.length} outside 0..65535 (LEN is 16 bits)")
        if not (0 <= self.kind < 256 and 0 <= self.src < 256):
            raise ValueError("kind and src are 8-bit fields")
        if not 0 <= self.tag < 1 << (width - 32):
            raise ValueError(f"tag {self.tag} does not fit {width - 32} bits")
        return self.length | self.kind << 16 | self.src << 24 | self.tag << 32

    @staticmethod
    def unpack(word: int) -> "Header":
        return Header(word & 0xFFFF, (word >> 16) & 0xFF, (word >> 24) & 0xFF, word >> 32)


def frame(header: Header, body: list[int], width: int = 64) -> list[tuple[int, int]]:
    """(word, last) pairs of one packet: header then body, last on the final word."""
    if header.length != len(body):
        raise ValueError(f"header LEN {header.length} disagrees with {len(body)} body words")
    words = [header.pack(width)] + list(body)
    return [(w, int(i == len(words) - 1)) for i, w in enumerate(words)]


def check_framing(words: list[tuple[int, int]]) -> list[str]:
    """Framing errors in a word stream, as the RTL monitor reports them."""
    errors: list[str] = []
    rem = None
    for i, (w, last) in enumerate(words):
        if rem is None:
            length = w & 0xFFFF
            if (length == 0) != bool(last):
                errors.append(f"word {i}: header LEN={length} but last={last}")
            rem = None if last else length
        else:
            if (rem == 1) != bool(last):
                errors.append(f"word {i}: last={last} with {rem - 1} body word(s) still expected")
            rem = None if last else rem - 1
    return errors


def mlo_words(d_head: int = 128, g: int = 8, t_q: int = 1, width: int = 64) -> int:
    """Body words of an (m, l, O) partial: fp32 m and l per row, fp32 O[rows, d]."""
    rows = g * t_q
    bits = 32 * (2 * rows + rows * d_head)
    return -(-bits // width)


# ---------------------------------------------------------------- geometry

@dataclass(frozen=True)
class MeshShape:
    rows: int = 2
    cols: int = 4

    @property
    def num_pe(self) -> int:
        return self.rows * self.cols

    def neighbour(self, p: int, d: int) -> int | None:
        r, c = divmod(p, self.cols)
        if d == N:
            return p - self.cols if r > 0 else None
        if d == E:
            return p + 1 if c < self.cols - 1 else None
        if d == S:
            return p + self.cols if r < self.rows - 1 else None
        return p - 1 if c > 0 else None

    def nb_mask(self, p: int) -> int:
        return sum(1 << d for d in range(4) if self.neighbour(p, d) is not None)


# ---------------------------------------------------------------- one link

class IpcqQueue:
    """Word-level model of one IPCQ link (ipcq.v)."""

    def __init__(self, depth: int) -> None:
        if depth < 1:
            raise ValueError("DEPTH must be at least 1")
        self.depth = depth
        self.q: deque[tuple[int, int]] = deque()
        self.pkts = 0

    @property
    def full(self) -> bool:
        return len(self.q) == self.depth

    @property
    def ready(self) -> bool:
        return not self.full

    @property
    def pkt_avail(self) -> bool:
        return self.pkts > 0 or self.full

    def push(self, word: int, last: int) -> bool:
        """Offer a word; False (nothing stored, nothing overwritten) while full."""
        if self.full:
            return False
        self.q.append((word, last))
        self.pkts += bool(last)
        return True

    def pop(self) -> tuple[int, int]:
        if not self.q:
            raise IndexError("pop of an empty IPCQ (the kernel must poll pkt_avail first)")
        word, last = self.q.popleft()
        self.pkts -= bool(last)
        return word, last


# ---------------------------------------------------------------- bench traffic (mirrors the harness)

def mix32(x: int) -> int:
    x &= M32
    x ^= (x << 13) & M32
    x ^= x >> 17
    x ^= (x << 5) & M32
    x = (x * 0x9E3779B1) & M32
    x ^= x >> 16
    return x


def choose_dir(seed: int, src: int, k: int, nb_mask: int) -> int:
    """Direction of PE src's k-th packet: a hashed start, then the next existing neighbour."""
    h = mix32(seed ^ (0xD1 << 24) ^ ((src & 0xFF) << 16) ^ (k & 0xFFFF))
    d0 = h & 3
    for i in range(4):
        d = (d0 + i) & 3
        if nb_mask >> d & 1:
            return d
    raise ValueError(f"PE {src} has no neighbour")


def pkt_len(seed: int, src: int, d: int, seq: int, max_len: int) -> int:
    key = (0x1 << 28) | (d << 24) | ((src & 0xFF) << 16) | (seq & 0xFFFF)
    return mix32(seed ^ key) % (max_len + 1)


def body_word(seed: int, src: int, d: int, seq: int, i: int) -> int:
    key = ((src & 0xFF) << 24) | (d << 22) | ((seq & 0xFFF) << 10) | (i & 0x3FF)
    return mix32(seed ^ key) << 32 | mix32(seed ^ key ^ 0x5BD1E995)


def packet(seed: int, src: int, d: int, seq: int, max_len: int) -> list[tuple[int, int]]:
    n = pkt_len(seed, src, d, seq, max_len)
    body = [body_word(seed, src, d, seq, i) for i in range(n)]
    return frame(Header(n, KIND_TRAFFIC, src, seq), body)


def expected_traffic(shape: MeshShape, seed: int, npkt: int, max_len: int) -> dict[tuple[int, int], list[tuple[int, int, int]]]:
    """Per receiving link (dst PE, in-direction): the packets in order, as (src, seq, len)."""
    if not 0 <= npkt < 4096:
        raise ValueError(f"npkt {npkt} outside 0..4095 (the body-word key holds a 12-bit sequence)")
    if not 0 <= max_len < 1024:
        raise ValueError(f"max_len {max_len} outside 0..1023 (the body-word key holds a 10-bit index)")
    out: dict[tuple[int, int], list[tuple[int, int, int]]] = {
        (p, d): [] for p in range(shape.num_pe) for d in range(4)}
    for src in range(shape.num_pe):
        seqs = [0, 0, 0, 0]
        for k in range(npkt):
            d = choose_dir(seed, src, k, shape.nb_mask(src))
            dst = shape.neighbour(src, d)
            assert dst is not None
            out[(dst, opposite(d))].append((src, seqs[d], pkt_len(seed, src, d, seqs[d], max_len)))
            seqs[d] += 1
    return out


def score_links(shape: MeshShape, expected: dict[tuple[int, int], list[tuple[int, int, int]]],
                rx: list[int], errs: list[int], status_errs: list[int]) -> tuple[int, list[str]]:
    """Compare per-link harness counters (index p*4+d) with the expected traffic.

    The harness checker verifies each packet's header (source, in-order sequence,
    length) and every body word as it pops it; a lost, duplicated, reordered or
    corrupted packet shows up as a checker error or as a count that differs
    from the model's. Returns (number of checks, error messages).
    """
    checks = 0
    out: list[str] = []
    for p in range(shape.num_pe):
        for d in range(4):
            i = p * 4 + d
            want = len(expected[(p, d)])
            checks += 3
            where = f"PE {p} queue from {DIR_NAMES[d]}"
            if rx[i] != want:
                kind = "LOST" if rx[i] < want else "SURPLUS"
                out.append(f"{kind} {where}: received {rx[i]} packets, model sent {want}")
            if errs[i]:
                out.append(f"CORRUPT/REORDER {where}: checker saw {errs[i]} bad word(s) (see CHKFAIL lines)")
            if status_errs[i]:
                out.append(f"STATUS {where}: pkt_avail disagreed with the queue contents on {status_errs[i]} cycle(s)")
    return checks, out


# ---------------------------------------------------------------- PE command encoding (docs/ahbm.md §4)

OPCODES = {"NOP": 0, "ATTN_TILE": 1, "IPCQ_POP": 2, "MERGE": 3, "NORM_STORE": 4, "IPCQ_PUSH": 5, "LOAD_Q": 6,
           "KV_SEND": 7, "KV_RECV": 8}
KIND_KV = 0x02           # a KV block (KV_SEND / KV_RECV, ring attention)

# name -> (lsb, width); common fields first, then per-opcode fields
COMMON_FIELDS: dict[str, tuple[int, int]] = {
    "opc": (0, 4), "tag": (4, 8), "sreg": (12, 3), "sreg2": (15, 3), "dir": (18, 2),
    "mask_en": (20, 1), "push_en": (21, 1), "init": (22, 1), "fence": (23, 1), "rows_m1": (24, 8),
}
OP_FIELDS: dict[str, dict[str, tuple[int, int]]] = {
    "NOP": {},
    "ATTN_TILE": {"keys_m1": (32, 8), "qreg": (40, 2), "k_addr": (48, 24), "v_addr": (72, 24),
                  "mask_addr": (96, 24), "push_tag": (120, 8)},
    "IPCQ_POP": {},
    "MERGE": {"pdir": (32, 2), "src_q": (34, 1), "push_tag": (40, 8)},
    "NORM_STORE": {"o_addr": (32, 24)},
    "IPCQ_PUSH": {"push_tag": (32, 8)},
    "LOAD_Q": {"qreg": (40, 2), "q_addr": (48, 24)},
    "KV_SEND": {"kv_addr": (48, 24), "kv_bytes": (72, 24)},
    "KV_RECV": {"kv_addr": (48, 24), "kv_bytes": (72, 24)},
}
SLICE_BYTES = 1 << 24  # what the 24-bit address fields reach in bytes (ADDR_SHIFT 0, every bench's default)
ALIGN = 64
ADDR_SHIFTS = (0, 6)  # the address fields count bytes, or 64-byte words (a slice of up to 1 GiB: docs/ahbm.md §4)


def slice_reach(addr_shift: int = 0) -> int:
    """The bytes a PE's slice may hold for the build's ADDR_SHIFT: what the 24-bit address fields reach."""
    if addr_shift not in ADDR_SHIFTS:
        raise ValueError(f"ADDR_SHIFT {addr_shift}: the address fields count bytes (0) or 64-byte words (6)")
    return SLICE_BYTES << addr_shift


def encode_cmd(op: str, addr_shift: int = 0, **fields: int) -> int:
    """A 128-bit PE command; refuses unknown fields, values that do not fit, bad rows/keys/alignment. Address
    fields are given as byte addresses and stored as the build's ADDR_SHIFT says (bytes, or 64-byte words)."""
    if op not in OPCODES:
        raise ValueError(f"unknown opcode {op!r}; known: {', '.join(OPCODES)}")
    layout = {**COMMON_FIELDS, **OP_FIELDS[op]}
    rows = fields.pop("rows", 1)
    if not 1 <= rows <= 64:
        raise ValueError(f"rows {rows} outside 1..64")
    vals = {"rows_m1": rows - 1}
    if op == "ATTN_TILE":
        keys = fields.pop("keys", 64)
        if not 1 <= keys <= 128:
            raise ValueError(f"keys {keys} outside 1..128")
        vals["keys_m1"] = keys - 1
    for name, v in fields.items():
        if name not in layout or name in ("opc", "rows_m1", "keys_m1"):
            raise ValueError(f"field {name!r} does not exist for {op}")
        if name.endswith("_addr"):
            reach = slice_reach(addr_shift)
            if v % ALIGN or not 0 <= v < reach:
                raise ValueError(f"{name} {v:#x} must be {ALIGN}-byte aligned and inside the {reach >> 20} MiB the "
                                 f"address fields reach at ADDR_SHIFT {addr_shift}")
            v >>= addr_shift
        if name == "kv_bytes" and (v % ALIGN or not 0 < v < 1 << 19):
            raise ValueError(f"kv_bytes {v} must be a non-zero multiple of {ALIGN} below 512 KiB "
                             "(a packet is at most 65535 IPCQ words)")
        vals[name] = v
    vals["opc"] = OPCODES[op]
    word = 0
    for name, v in vals.items():
        lsb, width = layout[name]
        if not 0 <= v < 1 << width:
            raise ValueError(f"field {name}={v} does not fit {width} bits")
        word |= v << lsb
    return word


def decode_cmd(word: int) -> tuple[str, dict[str, int]]:
    """Inverse of encode_cmd; refuses reserved opcodes and non-zero reserved bits."""
    opc = word & 0xF
    names = {v: k for k, v in OPCODES.items()}
    if opc not in names:
        raise ValueError(f"reserved opcode {opc} (F_OPCODE)")
    op = names[opc]
    layout = {**COMMON_FIELDS, **OP_FIELDS[op]}
    out: dict[str, int] = {}
    used = 0
    for name, (lsb, width) in layout.items():
        out[name] = (word >> lsb) & ((1 << width) - 1)
        used |= ((1 << width) - 1) << lsb
    if word & ~used & ((1 << 128) - 1) or word >> 128:
        raise ValueError(f"reserved bits set in {op} command (F_RSVD)")
    return op, out
