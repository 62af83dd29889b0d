"""Per-test artifacts of the system benches: one `artifacts.npz` per build folder.

A system test writes what it fed the machine, what it read back and the counts
it saw, so a run can be re-checked (or re-judged against a newer model) outside
the simulator: ``python -m tb.lib.artifacts sim_build/<bench>`` finds every
artifacts.npz below the folder (one per test folder after a WAVES=1 run),
lists every test and re-checks it (see :func:`recheck`).

File format
-----------
A plain ``numpy.savez_compressed`` archive (``np.load(path)`` needs no
pickle). Every key is ``<test>/<name>``: ``<test>`` is the cocotb test name
with ``/`` replaced by ``.`` (``test_granules_and_acks.tiles=9``), ``<name>``
matches ``[a-z0-9_]+``. All tests of one simulator process (one bench run)
land in one file, merged; the first save of a process starts the file afresh,
so it never mixes two runs. With WAVES=1 each test has its own folder and
file.

Keys every test has:

===================  ======  =======  ===============================================
name                 dtype   shape    meaning
===================  ======  =======  ===============================================
``meta``             <U      ()       JSON object: bench, test, machine, seed,
                                      run_seed, verdict (PASS/FAIL), checks, cycles,
                                      failures (first 20)
``seed``             int64   ()       the test's seed (replay: ``run_seed``)
``run_seed``         int64   ()       COCOTB_RANDOM_SEED of the run
===================  ======  =======  ===============================================

Conventions for the rest (what :func:`recheck` relies on):

* ``exp_<x>`` / ``obs_<x>``: an expected array (from the Python models) and the
  one observed on the machine, same dtype and shape; re-checked for equality.
  256-bit DRAM/L1 words are stored as **uint16 (n, 16)**: row = word, column
  i = bits [16i+15:16i] (FP16 lane i).
* ``n_<x>_exp`` / ``n_<x>_seen``: an expected and a seen count, int64 ``()``;
  re-checked for equality (``n_<x>`` alone is informational).
* ``node_status``: uint64 (k, 2) of ``[packed {y,x}, NODE_STATUS word]`` rows
  read at the end of the test (``{code[63:56], arg[55:24], count[23:8],
  valid[0]}``).
* ``fault_<x>``: int64 ``()``, a fault code the unit reported (0 = none).
* ``error_<x>``: <U ``()``, the text of a named failure the test provoked.

Inputs of the matmul scenarios (``test_granules_and_acks.*``,
``test_reference_epilogue``, fault tests (a), (b), (d)):

=============  =====  ==============  ============================================
``a``          int8   (4gm, 32nk)     int7 A operand (rows x K)
``b``          int8   (32nk, 4gn)     int7 B operand (K x columns)
``scale_a``    uint8  (4gm, nk)       E5M3 scale of each A row per K block
``scale_b``    uint8  (nk, 4gn)       E5M3 scale of each B column per K block
``shape``      int64  (4,)            gm, gn, nk, anchor
``peer_word``  int64  ()              first vector-core L1 word the drain targets
=============  =====  ==============  ============================================

Per test of tb/system/test_mm_mesh_sys.py (P = gm*gn; words as uint16 (n, 16)):

* ``test_granules_and_acks.tiles=P``: inputs above; ``obs_tile``/``exp_tile``
  (P, 16) the tile read back from DRAM after VDRAIN / the models' tile;
  ``obs_after``/``exp_after`` (8, 16) the L1 sentinel after the tile;
  ``n_granules_*`` (granules that replaced the sentinel), ``n_acks_*`` (count
  delta on the vector core's NODE_STATUS), ``n_tile_words_matched_*``,
  ``n_sig_done_*``; ``node_status`` rows for (1,0) and (2,1).
* ``test_fault_cudata_buf``: inputs; ``error_await`` (the AwaitError text);
  ``n_acks_awaited`` (2, what the host waited for), ``n_acks_exp`` (0, the
  model) / ``n_acks_seen``; ``fault_run`` (9 = F_CUDATA); ``obs_l1``/``exp_l1``
  (9, 16) L1 after the rejected bursts (the sentinel); ``node_status``.
* ``test_fault_dack_zero``: inputs; ``error_plan`` (the PlanRefused text),
  ``error_await``; ``obs_tile``/``exp_tile`` (9, 16); ``n_acks_on_receiver_*``
  (0), ``n_cluster_signals_*`` (2); ``node_status``.
* ``test_fault_walk_len``: ``fault_0``, ``fault_1`` (5 = F_LEN) and
  ``error_0``, ``error_1`` (UnitFaultError texts); ``obs_guard``/``exp_guard``
  (8, 16) DRAM under the faulted walks; ``obs_walk256``/``exp_walk256``
  (256, 16); ``node_status``.
* ``test_fault_l1_range``: inputs (``peer_word`` 500); ``error_await``;
  ``n_acks_awaited`` (2), ``n_acks_exp`` (1) / ``n_acks_seen``; ``fault_run``
  (9); ``obs_l1_low``/``exp_l1_low`` (8, 16) L1 words 0..7;
  ``obs_l1_high``/``exp_l1_high`` (12, 16) L1 words 500..511; ``node_status``.
* ``test_fp16_saturation``: ``in_words`` (2, 16) the DRAM input;
  ``obs_doubled`` (2, 16), ``exp_doubled`` (2, 16) uint16; ``n_windows_*``;
  ``node_status``.
* ``test_reference_epilogue``: inputs; ``obs_tile``/``exp_tile`` (9, 16) the
  VDRAIN at 0x8000; ``obs_doubled``/``exp_doubled`` (9, 16) the epilogue at
  0x8800; ``n_acks_*`` (2), ``n_sig_done_*``; ``node_status``.
* every test: ``history_json`` (<U ()): the host's programs in order (unit,
  flits, instructions, windows, baseline, final count/code/arg, cycles).

Per test of tb/bundle/test_clients.py (``test_bundle.bundle=<name>``, one
compiled bundle of clients/bundles): per output region ``<port>``,
``obs_<port>`` (the RTL's FP16 slots read back, uint16, flat) and
``exp_<port>`` (the bit-exact reference: upstream RTL's ``dram_final``,
upstream models' for select_lt_m32n64); ``n_lanes_vs_models_<port>`` (lanes
that differ from upstream's Python models, informational);
``n_signals_<x>_<y>_exp``/``_seen`` (signals the plan awaits of node (x,y)
over the run, and the count the RTL reached).

Re-checks registered by the wings. Besides the pairs above, a test's archive names the re-derivations
its wing registered (``Artifacts.recheck_with``), in ``rechecks`` (<U (n,): ``module:function`` under
models/), and :func:`recheck` runs each on the test's arrays; this module knows no wing's re-check, and
an archive names only model functions (anything else is refused, not imported):

* ``models.cluster.archive:recheck_tile`` (the matmul scenarios with ``obs_tile``): the tile recomputed
  from ``a``, ``b``, ``scale_a``, ``scale_b`` and ``shape`` with the cluster model (GEMM, then OP_EMIT,
  bit exact) against ``obs_tile`` (uint16 (gm*gn, 16): sub-tile t = g*gn + h, lane 4r+c = element (r, c));
* ``models.vector.archive:recheck_doubled`` (``test_reference_epilogue``, ``test_fp16_saturation``):
  ``obs_doubled`` (what the machine stored) lane by lane against "FP16 doubled, saturating at +-65504" of
  the input lanes
  (``obs_tile`` / ``in_words``);
* ``models.ahbm.archive:recheck_launch`` (every AHBM launch): O recomputed from the archived Q, K, V
  with the reference kernel (docs/ahbm.md §11).
"""

from __future__ import annotations

import importlib
import json
import os
import re
import shutil
import sys
import zipfile
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from models.vector.lanes import u16_to_word, words_to_u16

FILE_NAME = "artifacts.npz"
RECHECKS_KEY = "rechecks"
MODEL_PACKAGE = "models"
Recheck = Callable[[Mapping[str, np.ndarray]], list[str]]  # a test's arrays -> one line per mismatch
_NAME_RE = re.compile(r"^[a-z0-9_]+$")
_started: set[Path] = set()  # files this process has already (re)started
_keys: dict[Path, set[str]] = {}  # the keys this process wrote to each of them (no re-reading of the archive)


def test_key(test: str) -> str:
    """The key prefix of a test: its name with '/' made '.'."""
    return test.replace("/", ".")


def words_to_lanes(words: Sequence[int]) -> np.ndarray:
    """256-bit words -> uint16 (n, 16), lane i = bits [16i+15:16i]."""
    return words_to_u16(words)


def lanes_to_words(lanes: np.ndarray) -> list[int]:
    """Inverse of words_to_lanes."""
    return [u16_to_word(row) for row in np.asarray(lanes, dtype=np.uint16).reshape(-1, 16)]


class Artifacts:
    """The artifacts of one test, saved (merged) into `<dir>/artifacts.npz`."""

    def __init__(self, test: str, directory: Path | None = None) -> None:
        self.test = test
        self.prefix = test_key(test)
        self.path = Path(directory or os.getcwd()) / FILE_NAME
        self.arrays: dict[str, np.ndarray] = {}

    def add(self, name: str, value: Any, dtype: Any = None) -> None:
        """One array (or scalar) under `name`; object arrays are refused (no pickle in the file)."""
        if not _NAME_RE.match(name):
            raise ValueError(f"artifact name '{name}' must match [a-z0-9_]+")
        arr = np.asarray(value, dtype=dtype)
        if arr.dtype == object:
            raise ValueError(f"artifact '{name}' would need pickle (object dtype); give a numeric or str dtype")
        self.arrays[name] = arr

    def words(self, name: str, words: Sequence[int]) -> None:
        """256-bit words as uint16 (n, 16) lanes."""
        self.add(name, words_to_lanes(words))

    def recheck_with(self, check: Recheck) -> None:
        """Register a wing's re-check of this test: its name goes into the archive (`rechecks`), and
        :func:`recheck` runs it on the test's arrays, however long after the run."""
        names = recheck_names(self.arrays)
        name = recheck_name(check)
        if name not in names:
            self.add(RECHECKS_KEY, np.array(names + [name], dtype=str))

    def count(self, name: str, expected: int | None = None, seen: int | None = None) -> None:
        """`n_<name>_exp` and/or `n_<name>_seen` (int64 scalars)."""
        if expected is not None:
            self.add(f"n_{name}_exp", int(expected), np.int64)
        if seen is not None:
            self.add(f"n_{name}_seen", int(seen), np.int64)

    def save(self, meta: Mapping[str, Any]) -> Path:
        """Merge this test's arrays (plus meta/seed/run_seed) into the file; returns its path."""
        self.add("meta", json.dumps(dict(meta), sort_keys=True, default=str))
        for k in ("seed", "run_seed"):
            if k in meta:
                self.add(k, int(meta[k]), np.int64)
        mine = {f"{self.prefix}/{k}": v for k, v in self.arrays.items()}
        tmp = self.path.with_name(self.path.name + ".tmp.npz")
        if self.path in _started and self.path.exists():
            if not any(k.startswith(self.prefix + "/") for k in _keys.get(self.path, ())):
                # the usual case, a test not saved before in this run: its arrays are appended to a copy (the
                # others are not decompressed and compressed again at every test, which made a bench's saves
                # quadratic in its tests: ahbm's 33 spent 7 % of the simulator process's CPU in zlib)
                shutil.copyfile(self.path, tmp)
                _append_npz(tmp, mine)
                os.replace(tmp, self.path)
                _keys.setdefault(self.path, set()).update(mine)
                return self.path
        merged: dict[str, np.ndarray] = {}
        if self.path in _started and self.path.exists():
            with np.load(self.path, allow_pickle=False) as old:
                merged = {k: old[k] for k in old.files if not k.startswith(self.prefix + "/")}
        _started.add(self.path)
        merged.update(mine)
        np.savez_compressed(tmp, **merged)
        os.replace(tmp, self.path)
        _keys[self.path] = set(merged)
        return self.path


def _append_npz(path: Path, arrays: Mapping[str, np.ndarray]) -> None:
    """Add `arrays` to the savez_compressed archive at `path` as numpy.savez_compressed writes its members
    (`<key>.npy`, deflated, no pickle), so np.load reads the file as one archive, old keys first."""
    with zipfile.ZipFile(path, mode="a", compression=zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        for key, value in arrays.items():
            with zf.open(key + ".npy", mode="w", force_zip64=True) as member:
                np.lib.format.write_array(member, np.asanyarray(value), allow_pickle=False)


def load(path: str | Path) -> dict[str, dict[str, np.ndarray]]:
    """The file as {test: {name: array}}."""
    out: dict[str, dict[str, np.ndarray]] = {}
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            test, _, name = key.partition("/")
            out.setdefault(test, {})[name] = z[key]
    return out


# ---------------------------------------------------------------- re-check outside the simulator
def recheck(path: str | Path) -> tuple[int, list[str]]:
    """(checks, errors) over every test in the file: exp/obs pairs, count pairs, model re-derivations."""
    checks, errors = 0, []
    for test, arrays in sorted(load(path).items()):
        for name in sorted(arrays):
            if name.startswith("exp_") and "obs_" + name[4:] in arrays:
                e, o = arrays[name], arrays["obs_" + name[4:]]
                checks += 1
                if e.shape != o.shape or not np.array_equal(e, o):
                    bad = int(np.sum(e != o)) if e.shape == o.shape else "shape"
                    errors.append(f"{test}: {name} vs obs_{name[4:]} differ ({bad})")
            if name.startswith("n_") and name.endswith("_exp"):
                seen = name[:-4] + "_seen"
                if seen in arrays:
                    checks += 1
                    if int(arrays[name]) != int(arrays[seen]):
                        errors.append(f"{test}: {name}={int(arrays[name])} but {seen}={int(arrays[seen])}")
        for name in recheck_names(arrays):
            checks += 1
            try:
                errors.extend(f"{test}: {e}" for e in resolve_recheck(name)(arrays))
            except (ValueError, ImportError, AttributeError) as exc:
                errors.append(f"{test}: re-check {name}: {exc}")
    return checks, errors


def recheck_names(arrays: Mapping[str, np.ndarray]) -> list[str]:
    """The re-checks a test's arrays name (none when it registered none)."""
    return [str(n) for n in np.atleast_1d(arrays.get(RECHECKS_KEY, np.array([], dtype=str)))]


def _is_model_function(module: str, function: str) -> bool:
    """A re-check is a model's re-derivation: a module-level function of a module under models/, so
    re-checking a file imports the models alone."""
    return module.startswith(MODEL_PACKAGE + ".") and function.isidentifier()


def recheck_name(check: Recheck) -> str:
    """How a re-check is named in an archive: `module:function`."""
    module, qualname = getattr(check, "__module__", ""), getattr(check, "__qualname__", "")
    name = f"{module}:{qualname}"
    if not _is_model_function(module, qualname):
        raise ValueError(f"re-check {name}: a re-check is a module-level function of {MODEL_PACKAGE}/ "
                         f"(e.g. models.ahbm.archive:recheck_launch)")
    return name


def resolve_recheck(name: str) -> Recheck:
    """The function an archive names (`module:function` under models/); anything else is refused."""
    module, _, function = name.partition(":")
    if not _is_model_function(module, function):
        raise ValueError(f"names no function of {MODEL_PACKAGE}/ (module:function); not imported")
    return getattr(importlib.import_module(module), function)


def find_files(path: str | Path) -> list[Path]:
    """The artifacts files `path` names: the file itself, or every artifacts.npz below a folder (a run with
    WAVES=1 writes one per test folder), or below the folder of a named file that is not there."""
    p = Path(path)
    if p.is_file():
        return [p]
    folder = p if p.is_dir() else (p.parent if p.name == FILE_NAME else None)
    return sorted(folder.rglob(FILE_NAME)) if folder is not None and folder.is_dir() else []


def main(argv: Iterable[str]) -> int:
    """``python -m tb.lib.artifacts [FILE or FOLDER ...]``: list and re-check every test's artifacts."""
    args = list(argv) or [str(Path("sim_build/mm_mesh_sys"))]
    paths = [f for a in args for f in find_files(a)]
    if not paths:
        print(f"no {FILE_NAME} at or below {', '.join(args)}: a bench run writes one into its build folder "
              f"(sim_build/<bench>/, or sim_build/<bench>/<test>/ with WAVES=1)", file=sys.stderr)
        return 2
    total, errors = 0, []
    for path in paths:
        print(f"{path}:")
        for test, arrays in sorted(load(path).items()):
            meta = json.loads(str(arrays["meta"])) if "meta" in arrays else {}
            print(f"  {test}: {meta.get('verdict', '?')} seed={meta.get('seed', '?')} keys={len(arrays)}")
        checks, errs = recheck(path)
        total += checks
        errors += [f"{path}: {e}" for e in errs]
    for e in errors:
        print("MISMATCH", e)
    print(f"re-checked {total} in {len(paths)} file(s), {len(errors)} mismatch(es)")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
