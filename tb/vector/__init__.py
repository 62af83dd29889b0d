"""The vector core's benches: bench class (bench), random programs (vc_rand/), the upstream-timing comparison (vec_timing/), directed programs and the test modules."""
