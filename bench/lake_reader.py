"""A reader in another process: what an analyst or a BI tool sees while `adwh run` writes.

It polls every date partition of the lake (one DuckDB read of its Parquet files) and the DuckDB
warehouse until told to stop, and records every read that fails, every partition that differs
from the same partition of a clean run, every partition that vanishes, and every opening of the
warehouse whose tables do not have a clean run's rows. It imports only DuckDB, so it starts in
a fraction of a second.

    python -m bench.lake_reader HOME CLEAN_HOME STOP_FILE REPORT_FILE
"""

import json
import random
import sys
import time
from pathlib import Path

import duckdb

WAREHOUSE = "warehouse.duckdb"


def partition_digest(con: duckdb.DuckDBPyConnection, folder: Path) -> tuple[int, str]:
    """Rows and md5 of the sorted rows of one partition, without the fetch time."""
    return con.sql(
        "SELECT count(*), md5(coalesce(string_agg(CAST(t AS VARCHAR), chr(10) "
        "ORDER BY CAST(t AS VARCHAR)), '')) FROM (SELECT * EXCLUDE (_extracted_at) FROM "
        f"read_parquet('{folder}/**/*.parquet', hive_partitioning = true, "
        "union_by_name = true)) t"
    ).fetchall()[0]


def table_counts(path: Path) -> dict[str, int]:
    """Rows of every base table of a DuckDB file, opened read-only as an analyst would."""
    with duckdb.connect(str(path), read_only=True) as con:
        names = [
            row[0]
            for row in con.sql(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_type = 'BASE TABLE' ORDER BY 1"
            ).fetchall()
        ]
        return {n: con.sql(f'SELECT count(*) FROM "{n}"').fetchall()[0][0] for n in names}


def watch(home: Path, clean: Path, stop: Path, report: Path) -> None:
    lake, clean_lake = home / "lake", clean / "lake"
    con = duckdb.connect()
    expected: dict[Path, tuple[int, str] | None] = {}
    clean_counts = table_counts(clean / WAREHOUSE)
    seen: set[Path] = set()
    problems: list[str] = []
    reads = warehouse_reads = sweeps = 0
    rng = random.Random(0)
    report.write_text(json.dumps({"ready": True}))
    while not stop.exists():
        sweeps += 1
        present = {p.relative_to(lake) for p in lake.glob("*/date=*")}
        problems += [f"{gone}: the partition vanished" for gone in sorted(seen - present)]
        seen |= present
        for rel in rng.sample(sorted(present), min(len(present), 12)):
            if rel not in expected:
                exists = (clean_lake / rel).is_dir()
                expected[rel] = partition_digest(con, clean_lake / rel) if exists else None
            try:
                got = partition_digest(con, lake / rel)
            except (duckdb.Error, OSError) as error:
                problems.append(f"{rel}: the read failed: {str(error).splitlines()[0]}")
                continue
            reads += 1
            if got != expected[rel]:
                problems.append(f"{rel}: {got[0]} rows, a clean run has {expected[rel]}")
        if (home / WAREHOUSE).exists():
            try:
                counts = table_counts(home / WAREHOUSE)
            except (duckdb.Error, OSError) as error:
                problems.append(f"{WAREHOUSE}: could not be read: {str(error).splitlines()[0]}")
            else:
                warehouse_reads += 1
                if counts != clean_counts:
                    problems.append(f"{WAREHOUSE}: row counts differ from a clean run's")
        time.sleep(0.01)  # leave the run its CPU on a small machine
    report.write_text(
        json.dumps(
            {
                "ready": True,
                "done": True,
                "sweeps": sweeps,
                "reads": reads,
                "warehouse_reads": warehouse_reads,
                "partitions_seen": len(seen),
                "problems": problems[:50],
                "problem_count": len(problems),
            }
        )
    )


if __name__ == "__main__":
    watch(*(Path(arg) for arg in sys.argv[1:5]))
