"""The compiled bundle corpus as tasks: one `clients` bench run per bundle (`BUNDLES=all` or folders).

Each task runs the bench's `test_bundle` for one bundle: the program through
the host's loader on fused4, outputs bit exact to upstream's RTL and to the
machine model, each round's cycles beside upstream's (tb/bundle/test_clients.py).
A bundle of clients/bundles is named; a folder of one's own is passed to the
bench by its absolute path (AGSIM_CLIENT_BUNDLES), so on a cluster it must be
on a folder every worker reads.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from models.bundle.reader import BUNDLES, bundle_names
from tb.farm.tasks import BenchTask
from tb.run.options import BadInput
from tb.bundle.test_clients import CLIENT_BUNDLES_ENV as BUNDLES_ENV

BENCH = "clients"


def bundle_folders(spec: str) -> list[Path]:
    """`all` (every bundle of clients/bundles) or comma-separated bundle folders, each holding a bundle.json."""
    if spec.strip() == "all":
        return [BUNDLES / n for n in bundle_names()]
    folders = [Path(p.strip()).resolve() for p in spec.split(",") if p.strip()]
    if not folders:
        raise BadInput("BUNDLES is empty: give `all` or bundle folders separated by commas")
    for f in folders:
        if not (f / "bundle.json").is_file():
            raise BadInput(f"BUNDLES: {f} holds no bundle.json; give a folder of a compiled bundle (clients/README.md)")
    names = [f.name for f in folders]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise BadInput(f"BUNDLES: two folders are named {dup[0]}; the bench names its tests by folder name")
    return folders


def plan_bundles(folders: Sequence[Path], seeds: Sequence[int], sim: str) -> list[BenchTask]:
    """A task per bundle and seed, bundle by bundle."""
    tasks = []
    for order, folder in enumerate(folders):
        own = folder.parent.resolve() != BUNDLES.resolve()
        env = ((BUNDLES_ENV, str(folder)),) if own else ()
        for seed in seeds:
            tasks.append(BenchTask(BENCH, sim, seed, f"test_bundle/bundle={folder.name}$", env=env,
                                   tag=folder.name, order=order))
    return tasks


__all__ = ["bundle_folders", "plan_bundles"]
