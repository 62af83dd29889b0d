"""NoC benches: the bench class (bench), stimulus, named traffic patterns, the end-to-end flit scoreboard, the fifo/router/mesh/checker test modules and the load sweep."""
