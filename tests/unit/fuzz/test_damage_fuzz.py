"""The damage fuzz, seeded, over three small real bundles: no traceback, no hang, no silent pass, every refusal
one line naming its file; and the classifier itself catches each kind of defect it exists to find.

The full corpus is ``make fuzz`` (every bundle of clients/); here a few hundred cases, one seed, on the models.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from models.bundle.reader import BUNDLES
from tb.fuzz.__main__ import fuzz, table
from tb.fuzz.damage import HARMLESS, NOT_PASS, REFUSE, Damage, damages
from tb.fuzz.outcome import classify, run_here

SMALL = ("matmul_m32k64n32", "mlp_silu_m32k64f64n32", "rmsnorm_m32n64")  # an MG kernel, a relayout, a VC kernel


def test_a_seeded_damage_fuzz_finds_no_defect(tmp_path: Path) -> None:
    outcomes = fuzz([BUNDLES / n for n in SMALL], seed=1, families=("json", "npz", "filesystem", "meaning"))
    bad = [o.to_row() for o in outcomes if o.defect]
    assert not bad, "\n".join(bad)
    assert len(outcomes) >= 300
    kinds = Counter(o.kind for o in outcomes)
    # every class of outcome is exercised: refusals, verdicts (FAIL and NOT JUDGED), documented-harmless passes
    assert kinds["refused"] > 200 and kinds["failed"] >= 6 and kinds["not judged"] >= 6 and kinds["passed"] >= 40
    assert {o.damage.family for o in outcomes} == {"json", "npz", "filesystem", "meaning"}
    assert table(outcomes).splitlines()[-1].split()[-1] == "0"  # the 'all' row's defect column


def test_the_damages_are_replayed_by_their_seed() -> None:
    src = BUNDLES / SMALL[1]
    names = [d.name for d in damages(src, 7)]
    assert names == [d.name for d in damages(src, 7)]
    assert names != [d.name for d in damages(src, 8)]  # the random choices (fields, offsets) follow the seed


DAMAGE = {kind: Damage("test", kind, lambda folder: None, kind) for kind in (REFUSE, NOT_PASS, HARMLESS)}
ONE_LINE = "refused: /x/b: bundle.json plan[0]: no field 'steps'; fix it\n"


@pytest.mark.parametrize("expect, ended, code, out, err, defect", [
    (REFUSE, "exit", 2, "", ONE_LINE, ""),
    (REFUSE, "exit", 2, "", ONE_LINE + "more\n", "a refusal not on one line"),
    (REFUSE, "exit", 2, "", "refused: /x/b: something is wrong\n", "a refusal naming no file"),
    (REFUSE, "exit", 1, "  FAILED: output y\n", "", "expected a refusal, got failed"),
    (NOT_PASS, "exit", 0, "PASS b\n", "", "a silent pass on a change of meaning"),
    (NOT_PASS, "exit", 1, "  FAILED: NOT JUDGED: output y\n", "", ""),
    (NOT_PASS, "traceback", None, "", "Traceback ...\nKeyError: 'x'\n", "a traceback"),
    (NOT_PASS, "hang", None, "", "", "a hang"),
    (HARMLESS, "exit", 1, "  FAILED: output y\n", "", "a documented-harmless change failed"),
    (HARMLESS, "exit", 0, "=== b\x1b[31m\n", "", "output a terminal cannot show"),
    (HARMLESS, "exit", 0, "PASS b\n", "", ""),
])
def test_the_classifier_names_each_defect(expect: str, ended: str, code: int | None, out: str, err: str,
                                          defect: str) -> None:
    got = classify("b", DAMAGE[expect], Path("/x/b"), ended, code, out, err)
    assert got.defect == defect


def test_a_run_past_its_backstop_is_a_hang_not_a_stuck_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import tb.client

    def spin(argv: list[str]) -> int:
        while True:
            pass

    monkeypatch.setattr(tb.client, "main", spin)
    ended, code, _, _ = run_here(tmp_path, tmp_path / "build", hang_s=0.2)
    assert (ended, code) == ("hang", None)


def test_the_normative_reference_follows_the_run_not_the_folder_name(tmp_path: Path) -> None:
    """select_lt_m32n64 meets hazard H1 on any folder name; judged by expected.npz, it passes renamed."""
    from tb.fuzz.outcome import make_copy

    damage = Damage("filesystem", "renamed", lambda folder: None, HARMLESS, folder_name="renamed select")
    folder = make_copy(BUNDLES / "select_lt_m32n64", damage, tmp_path)
    ended, code, out, err = run_here(folder, tmp_path / "build")
    assert (ended, code) == ("exit", 0), out + err
