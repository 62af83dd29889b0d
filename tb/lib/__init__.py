"""The benches' library: Python sides of the harnesses, bench classes, stimulus, scoreboards, verdicts and
artifacts. Modules that drive a simulator import cocotb (directly or through harness.py); the scoreboard,
the stimulus builder, the random program generator (vc_rand/) and vec_timing's judge import and test
without it."""
