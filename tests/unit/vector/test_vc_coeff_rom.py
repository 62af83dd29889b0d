"""rtl/vector/vc_coeff_rom.v is what tools/gen_vc_coeff_rom.py generates from the table.

The coefficient table of units.md V.6.4 is normative data
(models/numerics/vec_tables.csv, a verbatim copy of the spec's vec_tables.csv).
The ROM is generated from it, never edited by hand: this test fails when the
committed Verilog and the script's output drift apart (regenerate with
`python tools/gen_vc_coeff_rom.py`). It also checks the ROM's entries against
the model's independent reading of the same CSV (models.numerics.e8m15_transcendental.COEFFS)
and that the generator refuses a table V.6.4 does not describe.
"""

from __future__ import annotations

import hashlib
import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

from models.numerics.e8m15_transcendental import COEFFS

ROOT = Path(__file__).resolve().parents[3]
# sha256 of the spec's vec_tables.csv (units.md V.6.4: normative data), taken from the spec's own file:
# the repository copy must be that file, byte for byte
SPEC_CSV_SHA256 = "fb2d797acdb810ff585a86369408aa8ea8a57956620fb88e52000f13070010e7"


def _gen():
    spec = importlib.util.spec_from_file_location("gen_vc_coeff_rom", ROOT / "tools" / "gen_vc_coeff_rom.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


GEN = _gen()


def test_committed_rom_is_generated():
    want = GEN.render(GEN.CSV_PATH.read_text())
    assert GEN.ROM_PATH.read_text() == want, (
        "rtl/vector/vc_coeff_rom.v differs from tools/gen_vc_coeff_rom.py's output; regenerate it")
    assert GEN.main(["--check"]) == 0


def test_rom_entries_match_the_model_table():
    rom = np.zeros((256, 3), dtype=np.int64)
    pat = re.compile(r"8'd(\d+)\s*:\s*begin c0 =\s*(-?)22'sd(\d+); c1 =\s*(-?)22'sd(\d+); c2 =\s*(-?)22'sd(\d+);")
    rows = pat.findall(GEN.ROM_PATH.read_text())
    assert len(rows) == 160
    for key, *parts in rows:
        rom[int(key)] = [int(parts[i + 1]) * (-1 if parts[i] else 1) for i in (0, 2, 4)]
    assert np.array_equal(rom, np.asarray(COEFFS, dtype=np.int64))


def test_table_is_the_spec_copy():
    assert hashlib.sha256(GEN.CSV_PATH.read_bytes()).hexdigest() == SPEC_CSV_SHA256


@pytest.mark.parametrize("bad", [
    "fsel,idx,c1,c0,c2\n",  # header
    "fsel,idx,c0,c1,c2\n0,0,1,2,3\n",  # too few rows
    "fsel,idx,c0,c1,c2\n" + "".join(f"{f},{i},0,0,0\n" for f, n in ((0, 32), (1, 32), (2, 32), (3, 64))
                                    for i in range(n)).replace("3,63,0,0,0", "3,63,2097152,0,0"),  # range
    "fsel,idx,c0,c1,c2\n" + "".join(f"{f},{i},0,0,0\n" for f, n in ((0, 32), (1, 32), (2, 32), (3, 64))
                                    for i in range(n)).replace("2,31,", "2,32,"),  # no such key
])
def test_generator_refuses_a_wrong_table(bad):
    with pytest.raises(ValueError):
        GEN.render(bad)
