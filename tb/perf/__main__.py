"""`python -m tb.perf` (make bench): the benchmarks, each figure beside its target.

1. Runs 200,000 flits of uniform random traffic on the mesh_4x4 bench under
   cocotb and then, on the same stimulus, under rtl/bench/mesh_pure_tb.v;
   prints both wall times, simulated cycles per second and the ratio
   cocotb/pure against the target (tb/perf/compare.py), on Icarus and then
   on Verilator.
2. The NoC latency-throughput sweep (tb/noc/sweep.py): uniform,
   transpose and hotspot traffic made in Verilog at offered loads 0.05..1.0 on
   the 4x4 mesh (Verilator), zero-load latency per hop, saturation throughput,
   per-source fairness, sim_build/perf/noc_sweep.png.
3. The AHBM decode sweep (tb/ahbm/decode_sweep.py, Verilator, one build):
   PREFETCH 1..4 x tile 32/64/128 on the d=128 CUBE at DMA_LAT 100, then
   PREFETCH 1..4 at tile 32 and DMA_LAT 400 (--quick: the first table at tile
   64 only), every run scored; cycles per tile against the DMA roofline.
4. The AHBM launch sweep (tb/ahbm/launch_sweep.py, Verilator, one build per IPCQ link width): whole
   decode launches for B = 1, 4, 8 requests of 4096 tokens at 64/256/512-bit links against the
   whole launch's roofline, the reduction's share of the launch, the two targets, a prefill sweep
   (query chunk x tile), and the pictures: per-PE timelines and the roofline plot (--quick: B 1 and 8
   at 256 bits, prefill tile 64).
4b. One Llama3-70B layer's AHBM decode attention at 32k tokens (tb/ahbm/layer.py, Verilator): a CUBE
   launch per KV head, each a task on a local Dask cluster (or SCHEDULER's), merged into the layer report;
   the larger contexts are `make layer CONTEXT=...` of their own.
5. Simulation speed on both simulators (tb/perf/targets.py): the bundle
   corpus (whole run and per bundle), the fused4 machine idle and busy
   (flash_attention_l64d64), the saturated 4x4 mesh (stage 1's run), the AHBM
   benches ahbm and ahbm_llama on Icarus, and the Python share of a
   flash_attention_l64d64 run by package.
6. The judge against the machine (tb/perf/judge_speed.py): every bundle of
   clients/ (bundles, scale/, model/) on the golden models (tb.client --models)
   and on the RTL on Verilator (builds and golden results warm): seconds each,
   their ratio beside the target (the models at least 10x faster).
6b. The timed golden models against the RTL (tb/perf/timed_matrix.py): the corpus
   on the RTL on Verilator and on the timed models, at upstream's timing and
   under one override of each fact family: rounds within 1 %, the ratio's range.
7. The Python models' speed (tb/perf/model_speed.py): the flit scoreboard on
   20,000 flits and an E8M15 ALU op on 128 lanes (figures the suite does not
   assert: a test's verdict may not depend on the machine).
8. The vector core's long differential run (tb/perf/vc_random.py): 5,000
   constrained-random programs, RTL = model after every RUN (--quick: 1,000).
9. The vector core on upstream's timing corpus (tb/perf/vec_timing.py, Icarus): all
   909 programs of clients/vec_timing/, functional verdict and one timing line per
   set against its target.
10. The regression engine's scaling (tb/perf/farm_scaling.py, Icarus): the vector
   core's differential in shards on 1 and then 2 local Dask workers, the
   throughput ratio and the engine's per-task overhead against their targets
   (--quick: 200 programs in shards of 50; else 400 in shards of 100).

Given a Dask scheduler (--scheduler, default the SCHEDULER variable: `make bench
SCHEDULER=tcp://host:8786`, the variable `make regress` takes), the points of
stages 2, 3 and 4 run as one task each on that cluster (tb/perf/points.py,
tb/farm/calls.py), the builds they need made by the first point that needs
them on each build folder; the workers must run from a checkout of the same
sources (a point run on other sources fails by name). Everything else runs
here as without a scheduler, and the tables, pictures and history are made
here from the points' records: the same figures (the simulations are
deterministic) but the wall times.

Exits non-zero only if a run failed its checks (a missed speed target is
reported, not failed). COCOTB_RANDOM_SEED picks the seed (default 1).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

from tb.perf import farm_scaling, judge_speed, model_speed, targets, timed_matrix, vc_random, vec_timing
from tb.ahbm import launch_sweep as ahbm_launch
from tb.ahbm import layer as ahbm_layer
from tb.ahbm import decode_sweep as ahbm_sweep
from tb.noc import sweep as noc_sweep
from tb.perf.compare import HISTORY, append_history, compare, format_report, seed_from_env
from tb.run.progress import Progress
from tb.run.simulators import SIMULATORS


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tb.perf", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, default=None, help="run seed (default: COCOTB_RANDOM_SEED or 1)")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="show the simulators' output instead of keeping it in the build folder's logs")
    ap.add_argument("--quick", action="store_true", help="AHBM sweep at tile 64 only (PREFETCH 1..4)")
    ap.add_argument("--no-sweep", action="store_true", help="the cocotb/pure comparison only")
    ap.add_argument("--speed", action="store_true",
                    help="the cocotb/pure comparison and the simulation speed stage only (make bench SPEED=1)")
    ap.add_argument("--scheduler", default=os.environ.get("SCHEDULER") or None,
                    help="a Dask scheduler's address (default: SCHEDULER): the sweeps' points as tasks there")
    args = ap.parse_args(argv)
    scheduler = args.scheduler or None
    seed = args.seed if args.seed is not None else seed_from_env()
    steps = ["cocotb vs pure Verilog"]
    if args.speed:
        steps += ["simulation speed"]
    elif not args.no_sweep:
        steps += ["NoC latency-throughput sweep", "AHBM decode sweep"]
        steps += [] if args.quick else ["AHBM decode sweep, DMA_LAT 400"]
        steps += ["AHBM launch sweep", "AHBM layer, 32k tokens", "simulation speed", "the judge against the machine", "Python model speed",
                  "vector core differential run", "vector core timing corpus", "regression engine scaling"]
    progress = Progress("bench-quick" if args.quick else "bench", steps, record=not (args.no_sweep or args.speed))
    t = time.monotonic()

    def step_done(name: str) -> None:
        nonlocal t
        print(progress.done(name, time.monotonic() - t), flush=True)
        t = time.monotonic()

    rc = 0
    mesh = []
    for sim in SIMULATORS:
        result = compare(seed, sim=sim, verbose=args.verbose)
        mesh.append(result)
        print(format_report(result))
        append_history(result)
        rc |= 0 if result.passed else 1
    print(f"(appended to {HISTORY})")
    step_done(steps[0])
    if args.speed:
        print("", flush=True)
        rc |= targets.targets_main(seed=seed, verbose=args.verbose, mesh=mesh)
        step_done("simulation speed")
        return rc
    if args.no_sweep:
        progress.save()
        return rc
    print("", flush=True)
    rc |= noc_sweep.sweep_main(seed=seed, scheduler=scheduler)
    step_done("NoC latency-throughput sweep")
    print("", flush=True)
    sweep_t0 = time.monotonic()
    rc |= 1 if ahbm_sweep.sweep_main(quick=args.quick, seed=seed, verbose=args.verbose,
                                     scheduler=scheduler) != 0 else 0
    step_done("AHBM decode sweep")
    if not args.quick:
        # the same decode where the DMA latency is comparable to a tile's transfer: there the
        # prefetch depth shows (at DMA_LAT 100 every depth measures the same)
        print("", flush=True)
        rc |= 1 if ahbm_sweep.sweep_main(seed=seed, verbose=args.verbose, tiles=ahbm_sweep.LATENCY_TILES,
                                         dma_lat=ahbm_sweep.LONG_DMA_LAT, scheduler=scheduler) != 0 else 0
        step_done("AHBM decode sweep, DMA_LAT 400")
        both = time.monotonic() - sweep_t0
        verdict = "met" if both <= ahbm_sweep.SWEEP_TARGET_S else "NOT met"
        print(f"decode sweep, both tables on Verilator: {both:.0f} s (target <= {ahbm_sweep.SWEEP_TARGET_S} s: "
              f"{verdict})", flush=True)
    print("", flush=True)
    rc |= 1 if ahbm_launch.launch_main(quick=args.quick, seed=seed, verbose=args.verbose,
                                       scheduler=scheduler) != 0 else 0
    step_done("AHBM launch sweep")
    print("", flush=True)
    rc |= 1 if ahbm_layer.main(["--context", str(ahbm_layer.BENCH_CONTEXT), "--seed", str(seed),
                                "--jobs", str(os.cpu_count() or 1)]
                               + (["--scheduler", scheduler] if scheduler else [])) != 0 else 0
    step_done("AHBM layer, 32k tokens")
    print("", flush=True)
    rc |= targets.targets_main(seed=seed, verbose=args.verbose, mesh=mesh)
    step_done("simulation speed")
    print("", flush=True)
    rc |= judge_speed.judge_speed_main(seed=seed)
    step_done("the judge against the machine")
    print("", flush=True)
    rc |= timed_matrix.timed_matrix_main(seed=seed)
    step_done("the timed models against the RTL")
    print("", flush=True)
    rc |= model_speed.model_speed_main()
    step_done("Python model speed")
    print("", flush=True)
    if vc_random.run(1000 if args.quick else vc_random.DEFAULT_PROGRAMS, seed=seed, verbose=args.verbose) != 0:
        rc = 1
    step_done("vector core differential run")
    print("", flush=True)
    if vec_timing.run(seed=seed, verbose=args.verbose) != 0:
        rc = 1
    step_done("vector core timing corpus")
    print("", flush=True)
    if farm_scaling.run(*((200, 50) if args.quick else (400, 100)), seed=seed) != 0:
        rc = 1
    step_done("regression engine scaling")
    progress.save()
    return rc


if __name__ == "__main__":
    sys.exit(main())
