"""What is produced: Dagster assets and their checks, one module per extraction step (the
current state, the dated facts), the marts, and the lake's housekeeping."""
