"""What we write, read by readers we did not build: the lake's Parquet glob and its Delta tables
by the DuckDB 1.x shell `make` installs, by PyArrow and by Polars, with the same rows and sums
as the warehouse; and the warehouse file held open by that shell while a build goes on.

The lake and warehouse are those of the run tests/warehouse/test_marts.py makes (shared within
a session), read from the folder holding `data/`, as docs/analysts.md writes the paths.
"""

import shutil
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as pads
import pytest
from deltalake import DeltaTable

from tests.warehouse.test_marts import shared_run
from warehouse.build import WAREHOUSE_FILE, build_warehouse
from warehouse.lake import Lake
from warehouse.schemas import TABLES

SHELL = Path(sys.executable).parent / "duckdb"
# Each table with a money column and a count to sum, per currency.
FIGURES = {
    "campaign_metrics": ("cost", "clicks"),
    "product_ad_metrics": ("sales", "orders"),
    "seller_product_metrics": ("sales", "units"),
}
Figures = dict[str, tuple[int, Decimal, int]]  # currency -> rows, money, count


@pytest.fixture(scope="module")
def data(request) -> Path:
    home = shared_run(request)
    assert home.name == "data"
    return home


def glob(table: str) -> str:
    """The docs' plain Parquet glob of a lake table (from the partitions down)."""
    return f"data/lake/{table}/date=*/**/*.parquet"


def in_the_warehouse(data: Path, table: str) -> Figures:
    money, count = FIGURES[table]
    with duckdb.connect(str(data / WAREHOUSE_FILE), read_only=True) as con:
        rows = con.execute(
            f"SELECT currency, count(*), sum({money}), sum({count}) FROM {table} GROUP BY ALL"
        ).fetchall()
    return {currency: (n, Decimal(m), int(c)) for currency, n, m, c in rows}


def in_the_shell(data: Path, table: str) -> Figures:
    """The DuckDB 1.x shell over the Parquet glob, as docs/analysts.md writes it."""
    money, count = FIGURES[table]
    query = (
        f"SELECT currency, count(*), sum({money})::VARCHAR, sum({count}) "
        f"FROM read_parquet('{glob(table)}', hive_partitioning = true) GROUP BY ALL"
    )
    out = subprocess.run(
        [SHELL, "-csv", "-noheader", "-c", query],
        cwd=data.parent,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    lines = [line.split(",") for line in out.splitlines()]
    return {currency: (int(n), Decimal(m), int(c)) for currency, n, m, c in lines}


def of_arrow(rows, table: str) -> Figures:
    money, count = FIGURES[table]
    grouped = rows.group_by("currency").aggregate(
        [(money, "count"), (money, "sum"), (count, "sum")]
    )
    return {
        row["currency"]: (row[f"{money}_count"], Decimal(row[f"{money}_sum"]), row[f"{count}_sum"])
        for row in grouped.to_pylist()
    }


def of_polars(frame: pl.LazyFrame, table: str) -> Figures:
    money, count = FIGURES[table]
    grouped = frame.group_by("currency").agg(
        pl.len().alias("rows"), pl.col(money).sum().alias("money"), pl.col(count).sum()
    )
    return {
        row["currency"]: (row["rows"], Decimal(row["money"]), row[count])
        for row in grouped.collect().to_dicts()
    }


def by_every_reader(data: Path, table: str) -> dict[str, Figures]:
    lake = data / "lake" / table
    parquet = pads.dataset(lake, format="parquet", partitioning="hive")  # skips _delta_log/
    return {
        "DuckDB 1.x shell, Parquet glob": in_the_shell(data, table),
        "PyArrow, Parquet files": of_arrow(parquet.to_table(), table),
        "PyArrow, Delta table": of_arrow(DeltaTable(str(lake)).to_pyarrow_table(), table),
        "Polars, Parquet glob": of_polars(
            pl.scan_parquet(str(data.parent / glob(table)), hive_partitioning=True), table
        ),
        "Polars, Delta table": of_polars(pl.scan_delta(str(lake)), table),
    }


@pytest.mark.parametrize("table", FIGURES)
def test_every_reader_of_the_lake_counts_and_sums_as_the_warehouse(data, table):
    expected = in_the_warehouse(data, table)
    assert expected and all(rows for rows, _, _ in expected.values())
    for reader, figures in by_every_reader(data, table).items():
        assert figures == expected, reader


def test_a_warehouse_held_open_by_the_1x_shell_while_a_build_goes_on(data, tmp_path):
    """The shell keeps the file it opened, unchanged, through a build; the build swaps in a
    new file, which the shell opens next time and which equals the lake."""
    home = tmp_path / "data"
    shutil.copytree(data, home)
    (home / ".warehouse.duckdb.previous").unlink(missing_ok=True)
    query = "SELECT count(*) FROM campaign_metrics;\n"
    shell = subprocess.Popen(
        [SHELL, "-readonly", "-csv", "-noheader", str(home / WAREHOUSE_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        shell.stdin.write(query)
        shell.stdin.flush()
        before = shell.stdout.readline().strip()
        with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
            con.execute("SELECT 1")  # another reader beside the shell
        lake = Lake(home / "lake")
        day_rows = lake.dataset("campaign_metrics").to_table().slice(0, 1)
        kept = int(before)
        lake.publish(
            TABLES["campaign_metrics"],
            pl.from_arrow(day_rows),
            [day_rows["date"][0].as_py()],
            [day_rows["account_id"][0].as_py()],
        )
        build_warehouse(home, lake, TABLES.values())
        shell.stdin.write(query)
        shell.stdin.flush()
        during = shell.stdout.readline().strip()
    finally:
        shell.stdin.close()
        shell.wait(30)
    assert shell.returncode == 0, shell.stderr.read()
    assert int(during) == kept  # the shell's file is as it opened it
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        now = con.execute("SELECT count(*) FROM campaign_metrics").fetchone()[0]
    assert now == lake.dataset("campaign_metrics").count_rows() != kept
