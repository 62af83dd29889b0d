"""The compute-unit endpoint base's bench (test_cu_base)."""
