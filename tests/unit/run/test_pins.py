"""One source of pins and a complete lock: requirements.in pins the direct dependencies, requirements.txt
locks every transitive package with hashes (pip-compile), the running .venv is exactly the lock, and no
other file pins a version."""

from __future__ import annotations

import re
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PIN = re.compile(r"^([A-Za-z0-9_.-]+)==([^\s\\]+)")


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _pins(path: Path) -> dict[str, str]:
    out = {}
    for line in path.read_text().splitlines():
        m = PIN.match(line.strip())
        if m:
            out[_canon(m.group(1))] = m.group(2)
    return out


def test_direct_pins_are_locked_identically() -> None:
    direct, lock = _pins(ROOT / "requirements.in"), _pins(ROOT / "requirements.txt")
    assert direct and all(lock.get(n) == v for n, v in direct.items()), (direct, lock)
    assert "scapy" not in direct  # only cocotb-bus needs it; nothing of ours imports it


def test_every_locked_package_has_a_hash() -> None:
    text = (ROOT / "requirements.txt").read_text()
    blocks = re.split(r"\n(?=[A-Za-z0-9])", text.split("\n", 6)[-1])
    entries = [b for b in blocks if PIN.match(b)]
    assert len(entries) == len(_pins(ROOT / "requirements.txt")) >= 10
    for b in entries:
        assert "--hash=sha256:" in b, b.splitlines()[0]


def test_the_environment_is_the_lock() -> None:
    for name, version in _pins(ROOT / "requirements.txt").items():
        assert metadata.version(name) == version, f"{name}: installed {metadata.version(name)}, locked {version}"


def test_no_other_file_pins_a_version_and_nothing_imports_scapy() -> None:
    assert "==" not in (ROOT / "pyproject.toml").read_text()
    for folder in ("tb", "models", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            assert not re.search(r"^\s*(import|from)\s+scapy", path.read_text(), re.M), path
