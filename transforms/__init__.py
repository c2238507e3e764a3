"""Pure Polars transforms: service rows to typed frames, and the service's meaning kept.

No I/O and no Dagster here, so every rule can be tested with a three-row frame.
"""
