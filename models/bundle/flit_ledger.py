"""Instruction flits by unit and role: our kernel programs against the public compiler's, flit by flit.

Scenario 6 compares the instruction flits the host dispatches for one kernel
in two forms (fused, unfused) with the compiler's published counts (protocol
§9: 94 vs 107). A total alone cannot say *why* two programs differ, so this
module puts every flit of both sides in a ledger, keyed by unit kind and role,
and compares the ledgers row by row:

* a **kick** is one program as the host dispatches it to one unit: its CU_INST
  payloads in order. Ours come from :class:`models.programs.KernelPrograms`,
  the compiler's from a bundle's dispatch ``plan`` (every staged flit of every
  ``kick`` step; the bundles of ``clients/bundles/``);
* a flit's **role** is read from the flit itself, with the fixed decoders
  (``models.cluster.decode_inst``, the vector core's CU_INST envelope and
  program words, units.md V.2/V.4), never from how it was built: MG flits by
  opcode (FILL, GEMM, DRAIN); VC IMEM flits by the instruction they write (a
  VSETI and its immediate are two flits of one role, split by whether a
  VSETVL of the same program reads its register: "VSETI VL" or "VSETI
  constant"); DESC flits by field (base, dim 1, dims 2-4, the no-effect
  fields 5-7); RUN.

:func:`seed_report` renders the comparison of the seed case as the markdown
block that ``models/programs/comparison.py`` and docs/machine.md quote verbatim
(``python -m models.bundle.flit_ledger --write`` re-pastes both);
tests/unit/bundle/test_flit_ledger.py recomputes it and fails when either copy
differs, so every number in those documents is measured here.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from models.cluster import Op, decode_inst
from models.vector import OPCODES, SRC_K, Word
from models.bundle.reader import BUNDLES
from models.machine.layouts import Coord

__all__ = [
    "BUNDLE_DIR", "SEED_BUNDLES", "Kick", "Row", "load_bundle", "bundle_kicks", "kernel_kicks", "roles_of",
    "ledger", "compare", "imem_image", "desc_fields", "word_differences", "REASONS", "WHY", "write_docs", "seed_kicks", "seed_report",
]

BUNDLE_DIR = BUNDLES
SEED_BUNDLES: Mapping[str, str] = {"fused": "linear_silu_fused_m32k64n32", "unfused": "linear_silu_unfused_m32k64n32"}
PAYLOAD_MASK = (1 << 256) - 1
MG, VC = "MG", "VC"

# Row order of a ledger (roles not listed here sort after, alphabetically).
ROLE_ORDER = (
    (MG, "FILL"), (MG, "GEMM"), (MG, "DRAIN"),
    (VC, "VSETI VL"), (VC, "VSETI constant"), (VC, "VSETVL"), (VC, "VSETMODE"), (VC, "VFILL"), (VC, "VBAR"),
    (VC, "VLD"), (VC, "VMUL"), (VC, "VEXP2"), (VC, "VADD"), (VC, "VINV"), (VC, "VST"), (VC, "VDRAIN"),
    (VC, "VHALT"), (VC, "DESC base"), (VC, "DESC dim 1"), (VC, "DESC dims 2-4"), (VC, "RUN"),
)


@dataclass(frozen=True)
class Kick:
    """One program as the host dispatches it: the unit, its kind ('MG' or 'VC'), its CU_INST payloads."""

    unit: Coord
    kind: str
    payloads: tuple[int, ...]

    @property
    def name(self) -> str:
        return f"{self.kind} ({self.unit[0]},{self.unit[1]})"


# ---------------------------------------------------------------- the two sources of kicks
@lru_cache(maxsize=None)
def _load(path: str) -> str:
    return Path(path).read_text()


def load_bundle(name: str, directory: Path = BUNDLE_DIR) -> dict:
    """A compiled bundle's bundle.json (from clients/bundles by default)."""
    path = Path(directory) / name / "bundle.json"
    if not path.is_file():
        known = ", ".join(sorted(p.parent.name for p in Path(directory).glob("*/bundle.json"))) or "none"
        raise FileNotFoundError(f"no bundle {name!r} in {directory} (known: {known})")
    return json.loads(_load(str(path)))


def bundle_kicks(bundle: Mapping) -> list[Kick]:
    """Every kick of a bundle's dispatch plan, in plan order, payloads taken from the staged flits."""
    units = {tuple(c): kind for kind, coords in bundle["machine"]["units"].items() for c in coords}
    out: list[Kick] = []
    for entry in bundle["plan"]:
        if entry.get("kind") != "round":
            continue  # a host relayout moves no instruction flit
        for step in entry["steps"]:
            if step["op"] != "kick":
                continue
            node = tuple(step["node"])
            if node not in units:
                raise ValueError(f"bundle {bundle.get('name')}: a kick to {node}, which is no MG or VC unit of "
                                 f"machine {bundle['machine']['name']}")
            flits = [int(f, 16) for f in step["flits"]]
            if len(flits) != step["nflits"]:
                raise ValueError(f"bundle {bundle.get('name')}: kick to {node} stages {len(flits)} flits, "
                                 f"nflits says {step['nflits']}")
            out.append(Kick(node, units[node], tuple(f & PAYLOAD_MASK for f in flits)))
    return out


def kernel_kicks(kernel) -> list[Kick]:
    """Our kicks of a models.programs.KernelPrograms: every cluster program, then every vector program
    (the host's stage order)."""
    out = [Kick(ip.cluster.cluster, MG, tuple(ip.cluster.payloads)) for ip in kernel.instances]
    out += [Kick(ip.vector.core, VC, tuple(ip.vector.payloads())) for ip in kernel.instances]
    return out


# ---------------------------------------------------------------- roles, read from the flits
def imem_image(kick: Kick) -> dict[int, int]:
    """IMEM address -> word, as a vector kick's IMEM flits leave it."""
    return {(p >> 243) & 0x1FF: p & 0xFFFF_FFFF for p in kick.payloads if p >> 252 == 1}


def desc_fields(kick: Kick) -> list[tuple[int, int]]:
    """(descriptor, field) of every DESC flit of a vector kick, in order."""
    return [((p >> 249) & 7, (p >> 246) & 7) for p in kick.payloads if p >> 252 == 2]


def _imem_roles(image: Mapping[int, int]) -> dict[int, str]:
    """Role of every IMEM address written: the instruction's mnemonic, a VSETI's immediate with it."""
    words = [image[a] for a in sorted(image)]
    if sorted(image) != list(range(len(words))):
        raise ValueError(f"IMEM writes do not cover 0..{len(words) - 1} contiguously: {sorted(image)}")
    insts = []
    pc = 0
    while pc < len(words):
        w = Word(words[pc])
        insts.append((pc, w))
        pc += 2 if w.op == OPCODES["VSETI"] else 1
    vl_regs = {w.va for _, w in insts if w.op == OPCODES["VSETVL"]}
    out: dict[int, str] = {}
    for pc, w in insts:
        if w.op == OPCODES["VSETI"]:
            role = "VSETI VL" if w.sa != SRC_K and w.vd in vl_regs else "VSETI constant"
            out[pc] = out[pc + 1] = role
        elif w.op == OPCODES["VDRAIN"] and w.node:
            out[pc] = "VDRAIN node"
        else:
            out[pc] = w.name
    return out


def roles_of(kick: Kick) -> list[str]:
    """The role of each flit of a kick, in order."""
    if kick.kind == MG:
        return [Op(decode_inst(p)["op"]).name for p in kick.payloads]
    imem = _imem_roles(imem_image(kick))
    out: list[str] = []
    for p in kick.payloads:
        op = p >> 252
        if op == 1:
            out.append(imem[(p >> 243) & 0x1FF])
        elif op == 2:
            fld = (p >> 246) & 7
            out.append("DESC base" if fld == 0 else "DESC dim 1" if fld == 1 else "DESC dims 2-4" if fld <= 4
                       else "DESC fld 5-7 (no effect)")
        elif op == 3:
            out.append("RUN")
        else:
            out.append(f"CU_INST op {op} (no effect)")
    return out


def ledger(kicks: Iterable[Kick]) -> Counter:
    """(unit kind, role) -> flits, over kicks."""
    c: Counter = Counter()
    for k in kicks:
        c.update((k.kind, r) for r in roles_of(k))
    return c


# ---------------------------------------------------------------- comparison
@dataclass(frozen=True)
class Row:
    kind: str
    role: str
    ours: int
    theirs: int

    @property
    def diff(self) -> int:
        return self.ours - self.theirs


def _order(key: tuple[str, str]) -> tuple[int, str, str]:
    return (ROLE_ORDER.index(key), "", "") if key in ROLE_ORDER else (len(ROLE_ORDER), *key)


def compare(ours: Iterable[Kick], theirs: Iterable[Kick]) -> list[Row]:
    """One row per (unit kind, role) either side has, in ROLE_ORDER."""
    a, b = ledger(ours), ledger(theirs)
    return [Row(kind, role, a[(kind, role)], b[(kind, role)]) for kind, role in sorted(set(a) | set(b), key=_order)]


def word_differences(ours: Kick, theirs: Kick) -> list[int]:
    """IMEM addresses where two vector kicks leave different words (or only one writes)."""
    a, b = imem_image(ours), imem_image(theirs)
    return sorted(addr for addr in set(a) | set(b) if a.get(addr) != b.get(addr))


# ---------------------------------------------------------------- the seed case, explained
REASONS: Mapping[str, str] = {
    "per program": ("one per vector program: the compiler runs its unfused epilogue as {theirs_programs} "
                    "program(s) over the whole output; ours runs it as the fused one, one program per cluster "
                    "instance on the paired core ({ours_programs}), so each per-program word and the RUN come "
                    "once per instance"),
    "constants": ("-log2(e) of SiLU: ours keeps it in a scalar register (a VSETI and its immediate) in both "
                  "forms; the compiler's unfused form reads its constants from {const_arrays} broadcast "
                  "array(s) in DRAM instead"),
    "fills": ("ours fills one temp per program; the compiler's program fills the temp and its {const_arrays} "
              "broadcast constant array(s)"),
    "loads": ("each of the compiler's unfused chunks also loads its {const_arrays} broadcast constant(s); ours "
              "load the accumulator only"),
    "dims": ("ours writes every field an instruction reads: a VFILL or VDRAIN walk to memory reads all four dims "
             "(bounds make the walk total, strides the addresses) and DESC fields persist across RUNs, so a dim "
             "left by an earlier program would change the walk; the compiler writes only the fields its walks "
             "use (here base and dim 1) and relies on the others still holding their reset value (bound 1)"),
}
WHY: Mapping[str, str] = {  # role -> the REASONS key that explains a difference in it
    "VSETI VL": "per program", "VSETI constant": "constants", "VSETVL": "per program", "VSETMODE": "per program",
    "VFILL": "fills", "VBAR": "per program", "VLD": "loads", "VDRAIN": "per program", "VHALT": "per program",
    "DESC dims 2-4": "dims", "RUN": "per program",
}


def seed_kicks(desc_writes: str = "minimal") -> dict[str, tuple[list[Kick], list[Kick]]]:
    """form -> (our kicks, the compiler's kicks) of the seed case."""
    from models.machine.layouts import FUSED4
    from models.machine.planner import Acc, silu
    from models.programs import SEED_CASE, build_kernel

    out = {}
    for form, name in SEED_BUNDLES.items():
        kp = build_kernel(**SEED_CASE, epilogue=silu(Acc(0)), machine=FUSED4, form=form, desc_writes=desc_writes)
        out[form] = (kernel_kicks(kp), bundle_kicks(load_bundle(name)))
    return out


def _per_kick(kicks: Sequence[Kick]) -> str:
    return ", ".join(f"{k.name} {len(k.payloads)}" for k in kicks)


def _diff_terms(rows: Sequence[Row]) -> str:
    terms = [f"{r.role} {r.diff:+d}" for r in rows if r.diff]
    return ", ".join(terms) if terms else "none"


def seed_report() -> str:
    """The scenario-6 comparison as markdown: per unit and role, both forms, ours against the compiler's,
    the kicks, the word-level check of the fused programs, and the DESC policies' totals."""
    kicks = seed_kicks()
    rows = {form: compare(ours, theirs) for form, (ours, theirs) in kicks.items()}
    keys = sorted({(r.kind, r.role) for rs in rows.values() for r in rs}, key=_order)
    get = {form: {(r.kind, r.role): r for r in rs} for form, rs in rows.items()}
    lines = [
        "| unit | flits | fused: ours | fused: compiler | unfused: ours | unfused: compiler | why they differ |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    used: list[str] = []
    for key in keys:
        f, u = get["fused"].get(key, Row(*key, 0, 0)), get["unfused"].get(key, Row(*key, 0, 0))
        why = WHY.get(key[1], "unexplained") if (f.diff or u.diff) else ""
        used += [why] if why and why not in used else []
        lines.append(f"| {key[0]} | {key[1]} | {f.ours} | {f.theirs} | {u.ours} | {u.theirs} | {why} |")
    totals = {form: (sum(r.ours for r in rs), sum(r.theirs for r in rs)) for form, rs in rows.items()}
    lines.append(f"| all | total | {totals['fused'][0]} | {totals['fused'][1]} | {totals['unfused'][0]} | "
                 f"{totals['unfused'][1]} | |")
    lines.append("")
    unfused_bundle = load_bundle(SEED_BUNDLES["unfused"])
    facts = {"theirs_programs": sum(k.kind == VC for k in kicks["unfused"][1]),
             "ours_programs": sum(k.kind == VC for k in kicks["unfused"][0]),
             "const_arrays": sum(r["kind"] == "constant" for r in unfused_bundle["dram"]["regions"])}
    lines += [f"- *{key}*: " + REASONS.get(key, "no reason recorded in models/bundle/flit_ledger.py").format(**facts)
              for key in used]
    for form, (ours, theirs) in kicks.items():
        o, t = totals[form]
        lines.append(f"- {form}: ours {o} against the compiler's {t}, {o - t:+d}: {_diff_terms(rows[form])}. "
                     f"Kicks, ours: {_per_kick(ours)}; the compiler's ({SEED_BUNDLES[form]}): {_per_kick(theirs)}.")
    ours_vc = [k for k in kicks["fused"][0] if k.kind == VC]
    theirs_vc = [k for k in kicks["fused"][1] if k.kind == VC]
    same = [len(word_differences(a, b)) for a, b in zip(ours_vc, theirs_vc)]
    extra = sorted({f"A{ad}.{'base' if fld == 0 else f'dim {fld}'}" for a, b in zip(ours_vc, theirs_vc)
                    for ad, fld in set(desc_fields(a)) - set(desc_fields(b))})
    missing = sorted({f"A{ad}.{fld}" for a, b in zip(ours_vc, theirs_vc)
                      for ad, fld in set(desc_fields(b)) - set(desc_fields(a))})
    lines.append(f"- fused, word by word: each of our vector programs writes {len(imem_image(ours_vc[0]))} IMEM "
                 f"words, the compiler's {len(imem_image(theirs_vc[0]))}; words that differ per core: "
                 f"{', '.join(map(str, same))}. DESC fields only ours writes: {', '.join(extra) or 'none'}; "
                 f"only the compiler's: {', '.join(missing) or 'none'}.")
    full = {form: len([p for k in ours for p in k.payloads]) for form, (ours, _) in seed_kicks("full").items()}
    lines.append(f"- with every field of every descriptor written (desc_writes='full'): fused {full['fused']}, "
                 f"unfused {full['unfused']}.")
    return "\n".join(lines)


REPORT_FIRST_LINE = "| unit | flits | fused: ours"
REPORT_LAST_LINE = "desc_writes='full'): fused"
DOC_COPIES = (("docs/machine.md", ""), ("models/programs/comparison.py", "    "))  # (file, indent of the quoted block)


def write_docs(root: Path = Path(__file__).resolve().parents[2]) -> list[str]:
    """Replace the quoted report in docs/machine.md and the models/programs/comparison.py docstring with
    :func:`seed_report`; returns the files that changed."""
    report = seed_report()
    changed = []
    for name, indent in DOC_COPIES:
        path = root / name
        text = path.read_text()
        try:
            start = text.index(indent + REPORT_FIRST_LINE)
            end = text.index("\n", text.index(REPORT_LAST_LINE, start))
        except ValueError:
            raise ValueError(f"{path}: no quoted report (a block from '{REPORT_FIRST_LINE}' to the line with "
                             f"'{REPORT_LAST_LINE}'); paste `python -m models.bundle.flit_ledger` there once") from None
        block = "\n".join(indent + line if line else "" for line in report.split("\n"))
        new = text[:start] + block + text[end:]
        if new != text:
            path.write_text(new)
            changed.append(name)
    return changed


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--write"]:
        print("updated:", ", ".join(write_docs()) or "nothing (both copies are current)")
    elif sys.argv[1:]:
        sys.exit(f"usage: python -m models.bundle.flit_ledger [--write]; got {' '.join(sys.argv[1:])}")
    else:
        print(seed_report())
