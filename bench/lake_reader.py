"""A reader in another process: what an analyst or a BI tool sees while `adwh run` writes.

It polls the lake's tables through their Delta log (the version current at each read, as any
engine reading the table format does) and the DuckDB warehouse until told to stop, and records
every read that fails, every partition (table and day) that differs from the same partition of a
clean run, every partition that vanishes, and every opening of the warehouse whose tables do not
have a clean run's rows.

    python -m bench.lake_reader HOME CLEAN_HOME STOP_FILE REPORT_FILE
"""

import json
import random
import sys
import time
from datetime import date
from pathlib import Path

import duckdb
import pyarrow.dataset as pads

from warehouse.lake import Lake

WAREHOUSE = "warehouse.duckdb"


def partition_digests(
    con: duckdb.DuckDBPyConnection, rows: pads.Dataset, day: str | None = None
) -> list[tuple[str, int, str]]:
    """(day, rows, md5 of the sorted rows without the fetch time) per day of a table's
    dataset, or of `day` only."""
    con.register("lake_rows", rows)
    try:
        where = f"WHERE date = DATE '{day}'" if day else ""
        return con.sql(
            "SELECT d, count(*), md5(string_agg(r, chr(10) ORDER BY r)) FROM ("
            "SELECT CAST(date AS VARCHAR) AS d, CAST(t AS VARCHAR) AS r FROM ("
            f"SELECT * EXCLUDE (_extracted_at) FROM lake_rows {where}) t) GROUP BY d"
        ).fetchall()
    finally:
        con.unregister("lake_rows")


def partitions(lake: Lake) -> set[tuple[str, str]]:
    """(table, day) of every partition the lake's current versions hold."""
    found = set()
    for table in lake.tables():
        snapshot = lake.snapshot(table)
        found |= {(table, day.isoformat()) for day in snapshot.files.values()}
    return found


def digest(con: duckdb.DuckDBPyConnection, lake: Lake, table: str, day: str) -> tuple[int, str]:
    found = partition_digests(con, lake.dataset(table, days=[date.fromisoformat(day)]), day)
    return (found[0][1], found[0][2]) if found else (0, "")


def current_digest(
    con: duckdb.DuckDBPyConnection, lake: Lake, table: str, day: str
) -> tuple[int, str]:
    """A Delta reader's digest of a partition. A version read while a run commits the next
    one and vacuums (ADWH_LAKE_KEEP_HOURS=0) can lose a file mid-read: as a Delta reader
    does, read the current version again; a second failure is a problem."""
    try:
        return digest(con, lake, table, day)
    except Exception as error:
        if "not found" not in str(error):
            raise
        return digest(con, lake, table, day)


def table_counts(path: Path) -> dict[str, int]:
    """Rows of every base table of a DuckDB file, opened read-only as an analyst would; the
    build's bookkeeping (`_lake_files`, `_lake_reloads` …) says what a build did, not what the
    warehouse holds, and differs between an incremental build and a clean one."""
    with duckdb.connect(str(path), read_only=True) as con:
        names = [
            row[0]
            for row in con.sql(
                "SELECT table_name FROM information_schema.tables "
                "WHERE table_type = 'BASE TABLE' AND NOT starts_with(table_name, '_') ORDER BY 1"
            ).fetchall()
        ]
        return {n: con.sql(f'SELECT count(*) FROM "{n}"').fetchall()[0][0] for n in names}


def watch(home: Path, clean: Path, stop: Path, report: Path) -> None:
    lake, clean_lake = Lake(home / "lake"), Lake(clean / "lake")
    con = duckdb.connect()
    expected: dict[tuple[str, str], tuple[int, str]] = {}
    clean_counts = table_counts(clean / WAREHOUSE)
    seen: set[tuple[str, str]] = set()
    problems: list[str] = []
    reads = warehouse_reads = sweeps = 0
    rng = random.Random(0)
    report.write_text(json.dumps({"ready": True}))
    while not stop.exists():
        sweeps += 1
        try:
            present = partitions(lake)
        except Exception as error:
            problems.append(f"the lake's log could not be read: {str(error).splitlines()[0]}")
            continue
        problems += [f"{gone}: the partition vanished" for gone in sorted(seen - present)]
        seen |= present
        for table, day in rng.sample(sorted(present), min(len(present), 12)):
            if (table, day) not in expected:
                expected[table, day] = digest(con, clean_lake, table, day)
            try:
                got = current_digest(con, lake, table, day)
            except Exception as error:
                problems.append(f"{table}/{day}: the read failed: {str(error).splitlines()[0]}")
                continue
            reads += 1
            if got != expected[table, day]:
                problems.append(
                    f"{table}/{day}: {got[0]} rows, a clean run has {expected[table, day][0]}"
                )
        if (home / WAREHOUSE).exists():
            try:
                counts = table_counts(home / WAREHOUSE)
            except (duckdb.Error, OSError) as error:
                problems.append(f"{WAREHOUSE}: could not be read: {str(error).splitlines()[0]}")
            else:
                warehouse_reads += 1
                if counts != clean_counts:
                    problems.append(f"{WAREHOUSE}: row counts differ from a clean run's")
        # A sweep reads every table's log, a dozen partitions and the warehouse: back to back
        # they took a core for themselves (on 2 cores, half the machine the run they watch
        # needs), and every tenth of a second ~28 CPU-seconds of the crash test's ~110. Each
        # partition is replaced in one Delta commit, so what a reader could see of a write cut
        # short is what the log holds after the kill: it stays, and the next sweep meets it.
        time.sleep(0.25)
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
