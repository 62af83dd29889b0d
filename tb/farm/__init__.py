"""Regressions past one machine: bench x seed runs as tasks on Dask.

`python -m tb.farm` (`make regress`) expands a selection of benches and a list
or count of seeds into tasks of one simulator run each (`tasks`), runs them on
a Dask cluster (`engine`: a local one on this machine's cores by default, an
existing scheduler given its address) and merges what comes back into one
summary, one results.xml and one durations file (`merge`). Every task carries
the `make` command that replays it alone on one machine. The main job
(tb.run.regress, `make SIM=...`) runs on the same engine: a task per bench, on a
local cluster, in the benches' usual folders.
"""
