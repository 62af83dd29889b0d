"""The regression farm (tb.farm) on real Dask processes and real simulators.

A local cluster and a cluster started as docs/regressions.md says (`make scheduler`, `make worker
SCHEDULER=...` and node.py run by path, from a folder outside the checkout, with no PYTHONPATH), talking over
TCP on localhost, must give, task for task, the verdicts, checks and cycles a sequential run of the same seeds
gives on one machine; one worker killed with SIGKILL while its simulator runs must change nothing (its task
runs again and is counted once) and leave no simulator behind; a node started with plain `dask scheduler` /
`dask worker`, which cannot import the project, is refused by name before a task runs.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator

import psutil
import pytest

from models.bundle.reader import BUNDLES
from tb.run.benches import ROOT, get_bench
from tb.farm.bundles import bundle_folders, plan_bundles
from tb.farm.coverage import merged_database
from tb.farm.engine import FarmError, FarmRun, close_client, open_client, run_tasks
from tb.farm.merge import verdicts, write_report
from tb.farm.tasks import BenchTask, TaskOutcome, run_task
from tb.farm.vc_shards import plan_shards
from tb.run.runner import run_bench

BENCH = "fifo"  # 2 s a run on Icarus, three tests, thousands of checks
SEEDS = (11, 12, 13, 14)
VENV_BIN = ROOT / ".venv" / "bin"
DASK = str(VENV_BIN / "dask")  # the command docs/regressions.md once gave, which cannot import the project


@pytest.fixture(scope="module")
def builds(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One build folder for the module's runs, as a farm's shared folder: a bench is built once, by whichever
    run comes first (the builds are keyed by sources and parameters); each run keeps its own run folders."""
    return tmp_path_factory.mktemp("builds")


@pytest.fixture(scope="module")
def sequential(builds: Path) -> list[tuple]:
    """The same tasks run one after another in this process, without Dask."""
    outcomes = []
    for seed in SEEDS:
        task = BenchTask(BENCH, "icarus", seed)
        outcomes.append(TaskOutcome(task, run_bench(get_bench(BENCH), seed=seed, build_root=builds, log_to_file=True,
                                                    run_dir=builds / "sequential" / task.key)))
    assert all(o.result.tests and o.result.failed == 0 for o in outcomes)
    return verdicts(outcomes)


def _tasks() -> list[BenchTask]:
    return [BenchTask(BENCH, "icarus", s) for s in SEEDS]


def _fifo_router() -> list[BenchTask]:
    """The tasks of `make regress BENCH=fifo,router SEEDS=2`."""
    return [BenchTask(b, "icarus", s) for b in ("fifo", "router") for s in (1, 2)]


def _shards() -> list[BenchTask]:
    return plan_shards([5], 6, 3, "icarus")


@pytest.fixture(scope="module")
def cluster_run(tmp_path_factory: pytest.TempPathFactory, builds: Path) -> FarmRun:
    """One run on a local cluster of two workers of every kind of task the tests below judge: the fifo
    seeds, two shards of the vector core's differential, and a bundle folder of one's own (one cluster,
    its start paid once, the tasks sharing its two workers)."""
    root = tmp_path_factory.mktemp("cluster")
    own = root / "my_matmul"
    shutil.copytree(BUNDLES / "matmul_m32k64n32", own)
    tasks = [*_tasks(), *_fifo_router(), *_shards(), *plan_bundles(bundle_folders(str(own)), [1], "icarus")]
    client = open_client(None, 2)
    try:
        run = run_tasks(client, tasks, builds)
    finally:
        close_client(client)
    assert not run.not_run and sorted(o.task.key for o in run.outcomes) == sorted(t.key for t in tasks)
    return run


def _of(run: FarmRun, kind: list[BenchTask]) -> list[TaskOutcome]:
    keys = {t.key for t in kind}
    return [o for o in run.outcomes if o.task.key in keys]


def test_a_local_cluster_gives_what_a_sequential_run_gives(tmp_path: Path, sequential: list[tuple],
                                                           cluster_run: FarmRun) -> None:
    outcomes = _of(cluster_run, _tasks())
    assert len(outcomes) == len(SEEDS)
    assert verdicts(outcomes) == sequential
    write_report(outcomes, tmp_path / "results.xml", tmp_path / "durations.json")
    assert set(json.loads((tmp_path / "durations.json").read_text())) == {t.key for t in _tasks()}
    assert (tmp_path / "results.xml").read_text().count("<testsuite ") == len(SEEDS)


def _without_pythonpath() -> dict[str, str]:
    """This process's environment without PYTHONPATH (nor the flags of a make that started the suite): a node
    of the farm must import the project on its own, as on a machine where nobody set one."""
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MAKEFLAGS", "MFLAGS", "MAKELEVEL")}


def _start(args: list[str], cwd: Path, log: Path) -> subprocess.Popen:
    """`args` in a session of its own (make and the node it starts ended together, _stop)."""
    return subprocess.Popen(args, cwd=cwd, env=_without_pythonpath(), stdout=log.open("w"), stderr=subprocess.STDOUT,
                            start_new_session=True)


def _stop(procs: list[subprocess.Popen]) -> None:
    """The workers before their scheduler: a worker whose scheduler went first may sit out SIGTERM."""
    for p in reversed(procs):
        for sig, wait_s in ((signal.SIGTERM, 20), (signal.SIGKILL, 10)):
            try:
                os.killpg(p.pid, sig)
                p.wait(wait_s)
                break
            except ProcessLookupError:
                break
            except subprocess.TimeoutExpired:
                continue


def _address(sched_file: Path, procs: list[subprocess.Popen]) -> str:
    deadline = time.monotonic() + 120
    while not sched_file.exists() and time.monotonic() < deadline and procs[0].poll() is None:
        time.sleep(0.1)
    assert sched_file.exists(), "the scheduler wrote no scheduler file"
    return json.loads(sched_file.read_text())["address"]


def _scheduler_args(sched_file: Path) -> str:
    return f"--host 127.0.0.1 --port 0 --no-dashboard --scheduler-file {sched_file}"


@pytest.fixture(scope="module")
def documented_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A scheduler and two workers started as docs/regressions.md says, from a folder outside the checkout and
    with no PYTHONPATH: `make -C <checkout> scheduler`, one worker by `make -C <checkout> worker SCHEDULER=...`
    and one by `<checkout>/.venv/bin/python <checkout>/tb/farm/node.py worker ...` (each with the nanny Dask
    starts by default); the scheduler's address."""
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    sched_file = elsewhere / "scheduler.json"
    procs = [_start(["make", "-C", str(ROOT), "scheduler", f"DASK_ARGS={_scheduler_args(sched_file)}"], elsewhere,
                    elsewhere / "scheduler.log")]
    try:
        address = _address(sched_file, procs)
        procs.append(_start(["make", "-C", str(ROOT), "worker", f"SCHEDULER={address}", "DASK_ARGS=--no-dashboard"],
                            elsewhere, elsewhere / "worker0.log"))
        procs.append(_start([str(VENV_BIN / "python"), str(ROOT / "tb" / "farm" / "node.py"), "worker",
                             address, "--no-dashboard"], elsewhere, elsewhere / "worker1.log"))
        yield address
    finally:
        _stop(procs)


def _client_of(address: str, workers: int):  # -> distributed.Client
    client = open_client(address, 0)
    client.wait_for_workers(workers, timeout=120)
    return client


def test_a_cluster_started_as_documented_runs_what_a_local_one_runs(documented_cluster: str, builds: Path,
                                                                    cluster_run: FarmRun) -> None:
    """`make regress BENCH=fifo,router SEEDS=2 SCHEDULER=...` on the documented cluster once failed every task
    (its workers could not import the project): the same tasks give the local cluster's verdicts, checks and
    cycles, test for test."""
    client = _client_of(documented_cluster, 2)
    try:
        run = run_tasks(client, _fifo_router(), builds)
    finally:
        client.close()
    assert not run.not_run and sorted(o.task.key for o in run.outcomes) == sorted(t.key for t in _fifo_router())
    assert all(o.result.tests and o.result.failed == 0 and o.result.checks > 0 for o in run.outcomes), \
        [o.result.error for o in run.outcomes]
    assert verdicts(run.outcomes) == verdicts(_of(cluster_run, _fifo_router()))


def test_a_node_started_with_plain_dask_is_refused_by_name(tmp_path: Path) -> None:
    """A scheduler started with `.venv/bin/dask scheduler`, or a worker with `dask worker`, cannot import the
    project: `make regress SCHEDULER=...` refuses the cluster (status 2) before a task runs, naming the node
    and the command that starts it right."""
    plain_file, good_file = tmp_path / "plain.json", tmp_path / "good.json"
    plain = [_start([DASK, "scheduler", *_scheduler_args(plain_file).split()], tmp_path, tmp_path / "plain.log")]
    good = [_start(["make", "-C", str(ROOT), "scheduler", f"DASK_ARGS={_scheduler_args(good_file)}"], tmp_path,
                   tmp_path / "good.log")]
    try:
        address = _address(plain_file, plain)
        cmd = [str(VENV_BIN / "python"), "-m", "tb.farm", "--bench", BENCH, "--seeds", "1",
               "--scheduler", address, "--root", str(tmp_path / "farm"), "--results", str(tmp_path / "r.xml")]
        out = subprocess.run(cmd, cwd=ROOT, env=_without_pythonpath(), capture_output=True, text=True, timeout=300)
        assert out.returncode == 2, out.stdout + out.stderr
        assert f"the scheduler at {address} cannot import this project" in out.stderr and "make scheduler" in \
            out.stderr, out.stderr
        assert not (tmp_path / "r.xml").exists()
        good_address = _address(good_file, good)
        good.append(_start([DASK, "worker", good_address, "--nthreads", "1", "--no-dashboard"], tmp_path,
                           tmp_path / "plain_worker.log"))
        from distributed import Client

        with Client(good_address, timeout="30s") as probe:
            probe.wait_for_workers(1, timeout=120)
            (worker,) = probe.scheduler_info()["workers"]
        with pytest.raises(FarmError, match=f"1 worker\\(s\\) of {good_address} cannot import this project .*: "
                                            f"{worker}; start them with `make worker SCHEDULER={good_address}`"):
            open_client(good_address, 0)
    finally:
        _stop(good)
        _stop(plain)


def _simulators_below(pid: int) -> list[psutil.Process]:
    try:
        return [p for p in psutil.Process(pid).children(recursive=True) if p.name() == "vvp"]
    except psutil.NoSuchProcess:
        return []


def test_a_worker_killed_mid_run_changes_nothing(builds: Path, sequential: list[tuple],
                                                 documented_cluster: str) -> None:
    """One worker process of the documented cluster killed with SIGKILL while its simulator runs: its task
    runs again (on the other worker, or the one its nanny starts in its place) and is counted once, the
    verdicts are the sequential run's, and its simulator dies with it."""
    client = _client_of(documented_cluster, 2)
    try:
        address_of = {pid: addr for addr, pid in client.run(os.getpid).items()}
        victim: dict[str, object] = {}

        def killer() -> None:  # SIGKILL the first worker process seen running a simulator, while it runs
            end = time.monotonic() + 120
            while time.monotonic() < end:
                for pid in address_of:
                    sims = _simulators_below(pid)
                    if sims:
                        victim["sims"] = sims
                        victim["worker"] = pid
                        os.kill(pid, signal.SIGKILL)
                        return
                time.sleep(0.02)

        t = threading.Thread(target=killer, daemon=True)
        t.start()
        run = run_tasks(client, _tasks(), builds)
        t.join(10)
    finally:
        client.close()
    assert "worker" in victim, "no worker was seen running a simulator"
    assert not run.not_run and len(run.outcomes) == len(SEEDS)
    assert sorted(o.task.key for o in run.outcomes) == sorted(t.key for t in _tasks())  # each once
    assert verdicts(run.outcomes) == sequential
    killed = address_of[victim["worker"]]
    assert all(o.worker and o.worker != killed for o in run.outcomes), "an outcome came from the killed worker"
    for sim in victim["sims"]:  # the killed worker's simulator died with it
        try:
            sim.wait(timeout=60)
        except psutil.TimeoutExpired:
            sim.kill()
            raise AssertionError("a simulator outlived its killed worker") from None


def test_ctrl_c_keeps_what_finished_and_names_what_did_not_run(tmp_path: Path, builds: Path) -> None:
    """SIGINT to `python -m tb.farm` after its first task: status 130, the finished task reported, the others
    named as not run, and no simulator left running."""
    cmd = [sys.executable, "-m", "tb.farm", "--bench", BENCH, "--seeds", "21..26", "--workers", "1",
           "--root", str(builds), "--results", str(tmp_path / "results.xml")]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=_without_pythonpath())
    lines: list[str] = []
    assert proc.stdout is not None
    for line in proc.stdout:
        lines.append(line)
        if line.startswith("[1/6]"):
            proc.send_signal(signal.SIGINT)
            break
    rest, _ = proc.communicate(timeout=120)
    text = "".join(lines) + rest
    assert proc.returncode == 130, text
    assert "did not run" in text and "NOT RUN (interrupted):" in text, text
    not_run = text.split("NOT RUN (interrupted):", 1)[1].splitlines()[0].split(",")
    assert len(not_run) >= 4, text  # at most one more finished while the first was being reported
    assert "fifo@21" in text or "fifo@22" in text, text
    left = [p for p in psutil.process_iter(["name", "cmdline"])
            if p.info["name"] == "vvp" and str(builds) in " ".join(p.info["cmdline"] or [])]
    for p in left:
        try:
            p.wait(timeout=30)
        except psutil.TimeoutExpired:
            p.kill()
            raise AssertionError("a simulator of the interrupted run is still running") from None


def test_differential_shards_on_a_cluster_give_what_they_give_alone(tmp_path: Path, builds: Path,
                                                                     cluster_run: FarmRun) -> None:
    """Two shards of the vector core's random differential (3 programs each) on the cluster: the same
    verdicts, checks and cycles as the same shards run here one after the other; each shard's coverage
    database comes back, and their union is the same file either way."""
    alone = [run_task(t, str(builds)) for t in _shards()]  # after the cluster's: their run folders are free
    assert all(o.result.tests and o.result.failed == 0 for o in alone), [o.result.error for o in alone]
    on_cluster = _of(cluster_run, _shards())
    assert verdicts(on_cluster) == verdicts(alone)
    assert all(o.coverage_xml for o in on_cluster)
    database, merged = merged_database(on_cluster, tmp_path / "farm")
    _, merged_alone = merged_database(alone, tmp_path / "alone")
    assert database is not None and merged is not None and merged_alone is not None
    assert merged.read_bytes() == merged_alone.read_bytes()
    assert sum(n for _, n in next(i for i in database.items if i.name == "vector.opcode").bins) > 0


def test_a_bundle_of_ones_own_runs_as_a_task(cluster_run: FarmRun) -> None:
    """A bundle folder outside clients/bundles reaches the `clients` bench on a worker through the task's
    environment and runs there: one test, passed, with its checks."""
    (outcome,) = [o for o in cluster_run.outcomes if o.task.bench == "clients"]
    assert [t.name for t in outcome.result.tests] == ["test_bundle/bundle=my_matmul"], outcome.result.error
    assert outcome.result.failed == 0 and outcome.result.checks > 0
