"""One digest of a set of files, their names and texts, and a few words: the key a kept result is stored under.

Why: a result computed from files (a golden run of a bundle, a lint verdict)
can be reused exactly while those files are unchanged, as a build is; a key
that names every input, byte for byte, makes the reuse safe and any change a
new key. Paths inside the project are taken relative to it, so another clone
of the same files gives the same key.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Iterable

from tb.run.benches import ROOT


def files_digest(files: Iterable[Path], *words: str) -> str:
    """sha256 hex digest of `words` and of each file's path (relative to the project when inside it) and bytes,
    the files in sorted order so the digest does not depend on the order they were listed in."""
    h = hashlib.sha256()
    for word in words:
        h.update(word.encode() + b"\0")
    for path in sorted(set(files)):
        h.update(str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path).encode() + b"\0")
        h.update(path.read_bytes())
    return h.hexdigest()


__all__ = ["files_digest"]
