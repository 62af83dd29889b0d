"""The vector core's golden model, one module per role (models/vector_core.py re-exports them)."""
