"""Where data lands: the Parquet lake, the DuckDB warehouse, table schemas and contracts."""
