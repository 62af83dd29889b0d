"""Reading a bundle's .npz archive member by member, refusing before allocating anything it cannot hold.

Why: ``numpy.load`` trusts the archive. A member that is not an ``.npy``
comes back as bytes; an object array needs pickle; an encrypted member or an
exotic compression method raises from zipfile; an ``.npy`` header may declare
2^40 elements and numpy tries to allocate them; a name given twice is read
once, and which copy wins depends on the reader. Here the zip directory is
read first (names, flags, compression method, sizes), then each member's
``.npy`` header (numpy.lib.format's public readers), and only a member that
declares a plain dtype and a size its own bytes can hold is read. Every
refusal is a :class:`BundleError` naming the file and the member.
"""

from __future__ import annotations

import math
import zipfile
import zlib
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format

from models.bundle.files import NPZ_MAX_BYTES, regular_file, shown_name
from models.bundle.schema import BundleError

EXPORT_AGAIN = "export the bundle again (the format: clients/README.md)"
FILES = "a bundle folder holds bundle.json, dram_in.npz, expected.npz and optionally expected_rtl.npz"
ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a zip's first entry, or an empty zip's end record
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}  # what numpy.savez(_compressed) writes
PLAIN_KINDS = "biufU"  # bool, integers, floats, fixed-width text (a layout name): nothing that needs pickle


def read_npz(path: Path) -> dict[str, np.ndarray]:
    """Every array of the archive at `path`, or BundleError naming the file (and member) and why."""
    file = shown_name(path.name)
    regular_file(path, f"{FILES}; {EXPORT_AGAIN}", NPZ_MAX_BYTES)
    try:
        with path.open("rb") as f:
            head = f.read(4)
    except OSError as exc:
        raise BundleError(f"{file}: cannot be read ({type(exc).__name__}: {exc.strerror}); {EXPORT_AGAIN}") from None
    if head not in ZIP_MAGIC:  # np.load would try it as a .npy array or a pickle instead
        raise BundleError(f"{file}: not an .npz archive (it starts {head!r}, a zip archive starts "
                          f"b'PK\\x03\\x04'); {EXPORT_AGAIN}")
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            _check_directory(file, infos)
            return {info.filename[:-4]: _member(file, archive, info) for info in infos}
    except BundleError:
        raise
    except (OSError, ValueError, EOFError, zipfile.BadZipFile, zlib.error, NotImplementedError,
            RuntimeError) as exc:
        why = str(exc).splitlines()[0] if str(exc) else "no detail"
        raise BundleError(f"{file}: not a readable .npz archive ({type(exc).__name__}: {why}); it may be truncated "
                          f"or corrupt; {EXPORT_AGAIN}") from None


def _check_directory(file: str, infos: list[zipfile.ZipInfo]) -> None:
    """Names, flags and methods from the zip's directory: nothing of the members read yet."""
    seen: set[str] = set()
    for info in infos:
        name = shown_name(info.filename)
        if not info.filename.endswith(".npy"):
            raise BundleError(f"{file} member {name}: not an .npy array (an .npz holds only <name>.npy members); "
                              f"{EXPORT_AGAIN}")
        if info.filename in seen:
            raise BundleError(f"{file} member {name}: given twice (readers disagree on which copy counts); "
                              f"{EXPORT_AGAIN}")
        seen.add(info.filename)
        if info.flag_bits & 0x1:
            raise BundleError(f"{file} member {name}: encrypted (a bundle's arrays are plain); {EXPORT_AGAIN}")
        if info.compress_type not in METHODS:
            raise BundleError(f"{file} member {name}: compression method {info.compress_type}, expected "
                              f"{' or '.join(f'{k} ({v})' for k, v in METHODS.items())} as numpy.savez writes; "
                              f"{EXPORT_AGAIN}")


def _member(file: str, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> np.ndarray:
    """One member: its .npy header checked (plain dtype, a size its bytes hold) before its data is read."""
    name = shown_name(info.filename)
    with archive.open(info) as f:
        try:
            version = npy_format.read_magic(f)
            if version == (1, 0):
                shape, _, dtype = npy_format.read_array_header_1_0(f)
            elif version in ((2, 0), (3, 0)):
                shape, _, dtype = npy_format.read_array_header_2_0(f)
            else:
                raise ValueError(f"format version {version}")
        except ValueError as exc:
            why = str(exc).splitlines()[0]
            raise BundleError(f"{file} member {name}: not an .npy array ({why}); {EXPORT_AGAIN}") from None
        if dtype.hasobject or dtype.kind not in PLAIN_KINDS or dtype.fields is not None:
            raise BundleError(f"{file} member {name}: dtype {dtype}, expected plain numbers (bool, integer, float) "
                              f"or text; object arrays are never unpickled; {EXPORT_AGAIN}")
        nbytes = math.prod(shape) * dtype.itemsize
        if nbytes > info.file_size:
            raise BundleError(f"{file} member {name}: its header declares shape {shape} of {dtype} "
                              f"({nbytes} bytes), the member holds {info.file_size} bytes; {EXPORT_AGAIN}")
    with archive.open(info) as f:
        return npy_format.read_array(f, allow_pickle=False)


__all__ = ["EXPORT_AGAIN", "FILES", "read_npz"]
