"""Compiled bundles (clients/): the reader and its schemas, the host's loader and executor, the judge, the error bound (bound/, lane_bound), the report and the timing comparison with upstream."""
