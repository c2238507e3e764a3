"""What is produced: Dagster assets and their checks, one module per source family."""
