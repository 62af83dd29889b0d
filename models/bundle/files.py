"""Reading a bundle's files as a user may have left them: regular files only, every failure one line.

Why: a bundle folder is a user's export, copied, linked and permissioned by
hand. Opening a named pipe nobody writes blocks forever; a symlink loop or a
symlink to itself makes ``Path.exists()`` answer False, so an optional file
that is there but broken would be taken as absent; a folder or file the user
may not read raises PermissionError from wherever it is first touched; a
folder name holding a newline splits a one-line refusal in two, and one that
UTF-8 cannot encode (bytes decoded with surrogate escapes) raises
UnicodeEncodeError when printed or written. Here each file is looked at with
``lstat``/``stat`` before it is opened: it must be a regular file (after
following its links), readable, and no larger than a stated limit; every
other state is a :class:`BundleError` naming the file and what to do. Names
are shown through :func:`shown_name`, printable and on one line.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from models.bundle.schema import BundleError

# bundle.json and timing_rtl.json: the largest real one is well under 1 MB; a text file past this is not a bundle
JSON_MAX_BYTES = 256 << 20
# a .npz archive: the image and references of a program; past this, refuse before reading (--max-bytes has no
# knob: a bundle this large is not a program the machine's DRAM window holds)
NPZ_MAX_BYTES = 4 << 30


def shown_name(name: str | os.PathLike[str]) -> str:
    """A path or name as one printable line: control characters, and characters UTF-8 cannot encode
    (undecodable bytes kept as surrogates), escaped as ``\\n``, ``\\x1b``, ``\\udcff``."""
    text = os.fspath(name)
    out = []
    for ch in text:
        if ch.isprintable() and not 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(ch)
        else:
            out.append(ch.encode("unicode_escape", "backslashreplace").decode("ascii"))
    return "".join(out)


def present(path: Path) -> bool:
    """Whether anything is at `path` (a dangling or looping symlink is something): an optional file that is
    there but cannot be read is then refused by :func:`regular_file`, not taken as absent."""
    try:
        os.lstat(path)
    except FileNotFoundError:
        return False
    except NotADirectoryError:
        return False
    except OSError as exc:
        raise BundleError(f"{shown_name(path.name)}: cannot be looked at ({_why(exc)}); {_fix(exc)}") from None
    return True


def regular_file(path: Path, fix: str, limit: int) -> int:
    """Refuse unless `path` is a readable regular file (after its links) of at most `limit` bytes; its size."""
    name = shown_name(path.name)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if os.path.islink(path):
            raise BundleError(f"{name}: a symlink to nothing ({shown_name(os.readlink(path))}); {fix}") from None
        raise BundleError(f"{name} missing; {fix}") from None
    except OSError as exc:
        raise BundleError(f"{name}: cannot be looked at ({_why(exc)}); {_fix(exc, fix)}") from None
    if not stat.S_ISREG(st.st_mode):
        raise BundleError(f"{name}: not a regular file (a {_kind(st.st_mode)}); a bundle's files are plain files, "
                          f"{fix}")
    if st.st_size > limit:
        raise BundleError(f"{name}: {st.st_size} bytes, at most {limit} expected; {fix}")
    if not os.access(path, os.R_OK):
        raise BundleError(f"{name}: not readable by this user (mode {stat.filemode(st.st_mode)}); give read "
                          f"permission (chmod u+r) or run as its owner")
    return st.st_size


def read_bytes(path: Path, fix: str, limit: int) -> bytes:
    """The whole of a regular file, checked by :func:`regular_file` first (never blocks on a pipe)."""
    regular_file(path, fix, limit)
    try:
        with open(path, "rb") as f:
            data = f.read(limit + 1)
    except OSError as exc:
        raise BundleError(f"{shown_name(path.name)}: cannot be read ({_why(exc)}); {_fix(exc, fix)}") from None
    if len(data) > limit:
        raise BundleError(f"{shown_name(path.name)}: more than {limit} bytes; {fix}")
    return data


def folder_problem(path: Path) -> str | None:
    """Why `path` cannot be a bundle folder (one line), or None."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return "no such directory; give a bundle folder (one holding bundle.json)"
    except OSError as exc:
        return f"cannot be looked at ({_why(exc)}); {_fix(exc)}"
    if not stat.S_ISDIR(st.st_mode):
        return f"not a directory (a {_kind(st.st_mode)}); give a bundle folder (one holding bundle.json)"
    if not os.access(path, os.R_OK | os.X_OK):
        return (f"a folder this user may not read (mode {stat.filemode(st.st_mode)}); give read and search "
                f"permission (chmod u+rx) or run as its owner")
    return None


def _kind(mode: int) -> str:
    for test, kind in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "named pipe"), (stat.S_ISSOCK, "socket"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device")):
        if test(mode):
            return kind
    return "special file"


def _why(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "a symlink loop"
    return f"{type(exc).__name__}: {exc.strerror or exc}"


def _fix(exc: OSError, fix: str = "") -> str:
    if isinstance(exc, PermissionError):
        return "give read permission (chmod u+r, and u+x on its folders) or run as its owner"
    if exc.errno == errno.ELOOP:
        return "point the link at the real file"
    return fix or "check the path"


__all__ = ["JSON_MAX_BYTES", "NPZ_MAX_BYTES", "folder_problem", "present", "read_bytes", "regular_file",
           "shown_name"]
