"""Scenario 6 flit by flit: the compiler's counts read from its bundles, ours from our programs, the report in sync."""

from __future__ import annotations

from pathlib import Path

import pytest

import models.programs.comparison as comparison
from models import vector
from models.bundle.flit_ledger import (
    BUNDLE_DIR, MG, SEED_BUNDLES, VC, WHY, Kick, bundle_kicks, compare, desc_fields, imem_image, ledger,
    load_bundle, roles_of, seed_kicks, seed_report, word_differences,
)
from models.programs import SEED_OURS, UPSTREAM_FLITS

ROOT = Path(__file__).resolve().parents[3]
@pytest.mark.parametrize("form", ["fused", "unfused"])
def test_the_compilers_flits_per_unit(form: str) -> None:
    """94 and 107 (protocol §9) are what the bundles' kicks stage, per stage and unit as bundle.json says."""
    b = load_bundle(SEED_BUNDLES[form])
    kicks = bundle_kicks(b)
    assert sum(len(k.payloads) for k in kicks) == b["flits"]["total"] == UPSTREAM_FLITS[form]
    for stage in b["flits"]["per_stage"]:
        assert sum(len(k.payloads) for k in kicks if k.kind == stage["unit"]) == stage["flits"]
    assert sum(ledger(kicks).values()) == UPSTREAM_FLITS[form]
    for k in kicks:  # every flit of a kick decodes to a known role
        assert "no effect" not in " ".join(roles_of(k)), k.name


def test_fused_programs_are_the_compilers_word_for_word() -> None:
    ours, theirs = seed_kicks()["fused"]
    o_vc, t_vc = [k for k in ours if k.kind == VC], [k for k in theirs if k.kind == VC]
    assert [k.unit for k in o_vc] == [k.unit for k in t_vc] == [(1, 0), (2, 0)]  # same pairing, same cores
    for a, b in zip(o_vc, t_vc):
        assert word_differences(a, b) == []
        assert len(imem_image(a)) == 36
        assert set(desc_fields(a)) - set(desc_fields(b)) == {(2, 2), (2, 3), (2, 4)}
        assert set(desc_fields(b)) <= set(desc_fields(a))
    o_mg, t_mg = [k for k in ours if k.kind == MG], [k for k in theirs if k.kind == MG]
    assert [roles_of(k) for k in o_mg] == [roles_of(k) for k in t_mg] == [["FILL", "FILL", "GEMM", "DRAIN"]] * 2


def test_every_difference_is_explained() -> None:
    for form, (ours, theirs) in seed_kicks().items():
        rows = compare(ours, theirs)
        assert sum(r.ours for r in rows) == SEED_OURS["minimal"][form]
        assert sum(r.theirs for r in rows) == UPSTREAM_FLITS[form]
        for r in rows:
            assert not r.diff or r.role in WHY, f"{form}: {r.role} differs by {r.diff:+d} without a reason"
    fused = {r.role: r.diff for r in compare(*seed_kicks()["fused"]) if r.diff}
    assert fused == {"DESC dims 2-4": 6}
    unfused = {r.role: r.diff for r in compare(*seed_kicks()["unfused"]) if r.diff}
    assert unfused == {"VSETI VL": 2, "VSETI constant": 4, "VSETVL": 1, "VSETMODE": 1, "VFILL": -1, "VBAR": 1,
                       "VLD": -16, "VDRAIN": 1, "VHALT": 1, "DESC dims 2-4": 12, "RUN": 1}
    full = {form: sum(len(k.payloads) for k in ours) for form, (ours, _) in seed_kicks("full").items()}
    assert full == SEED_OURS["full"]


def test_report_is_quoted_verbatim_in_the_machine_doc_and_the_comparison_docstring() -> None:
    report = seed_report()
    fix = "run `python -m models.bundle.flit_ledger --write`"
    assert report in (ROOT / "docs/machine.md").read_text(), f"docs/machine.md quotes another report: {fix}"
    indented = "\n".join(("    " + line) if line else "" for line in report.split("\n"))
    assert indented in comparison.__doc__, f"models/programs/comparison.py's docstring quotes another report: {fix}"


def test_roles_are_read_from_the_flits() -> None:
    words = vector.assemble(["VSETI s3, 16", "VSETI s5, 1.5", "VSETI k3, 2", "VSETVL s3",
                             "VDRAIN A1, 0, node=(1,0), buf=0, sig", "VHALT"])
    payloads = [vector.imem_payload(i, w) for i, w in enumerate(words)]
    payloads += [vector.desc_payload(1, f, 0) for f in (0, 1, 2, 4, 5)] + [vector.run_payload(0)]
    roles = roles_of(Kick((1, 0), VC, tuple(payloads)))
    assert roles == ["VSETI VL"] * 2 + ["VSETI constant"] * 4 + ["VSETVL", "VDRAIN node", "VHALT", "DESC base",
                                                                "DESC dim 1", "DESC dims 2-4", "DESC dims 2-4",
                                                                "DESC fld 5-7 (no effect)", "RUN"]
    with pytest.raises(ValueError, match="do not cover 0..1 contiguously"):
        roles_of(Kick((1, 0), VC, (vector.imem_payload(0, words[0]), vector.imem_payload(5, 0))))
    with pytest.raises(FileNotFoundError, match="no bundle .nope.*known: .*linear_silu_fused"):
        load_bundle("nope")


def test_the_compilers_broadcast_constants_are_what_programs_reports() -> None:
    """UPSTREAM_BROADCAST_BYTES (reported apart, never charged to ours) is the unfused bundle's constant regions."""
    from models.programs import UPSTREAM_BROADCAST_BYTES

    regions = load_bundle(SEED_BUNDLES["unfused"])["dram"]["regions"]
    assert sum(r["nbytes"] for r in regions if r["kind"] == "constant") == UPSTREAM_BROADCAST_BYTES
    assert not [r for r in load_bundle(SEED_BUNDLES["fused"])["dram"]["regions"] if r["kind"] == "constant"]


def test_write_docs_repairs_a_stale_copy(tmp_path) -> None:
    from models.bundle.flit_ledger import write_docs

    for name in ("docs/machine.md", "models/programs/comparison.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text((ROOT / name).read_text().replace("| all | total | ", "| all | total | 9"))
    assert write_docs(tmp_path) == ["docs/machine.md", "models/programs/comparison.py"]
    assert seed_report() in (tmp_path / "docs/machine.md").read_text()
    assert write_docs(tmp_path) == []
    (tmp_path / "docs/machine.md").write_text("no report here")
    with pytest.raises(ValueError, match="docs/machine.md: no quoted report.*paste `python -m models.bundle.flit_ledger`"):
        write_docs(tmp_path)
