"""A build writes the generation of the file before the current one and swaps it in, and has dbt
build what the days it read again change: the warehouse it gives equals a build from nothing, a
failing test still keeps the old file, readers keep what they opened."""

import os
import shutil
import subprocess
import sys
import textwrap
from datetime import timedelta
from pathlib import Path

import duckdb
import orjson
import pytest

from tests import prepared
from tests.warehouse.test_lake import CAMPAIGN_METRICS, D1, days, metrics
from tests.warehouse.test_marts import a_row_without_account, as_another_projects
from tests.warehouse.test_warehouse_load import contents, from_nothing
from warehouse.build import (
    PREVIOUS_FILE,
    STORAGE_TAG,
    UNUSED_SHARE,
    WAREHOUSE_FILE,
    build_warehouse,
)
from warehouse.dbt_project import models_in_order, prepared_manifest, project_digest
from warehouse.lake import Lake
from warehouse.marts import EVERY_ROW, MartError, Plan, build_marts
from warehouse.schemas import TABLES

ACCOUNTS = ("a", "b")
# Two days: the fixture's two builds wrote both generations, so each of these starts from
# the file two builds behind.
NEXT_DAYS = days(2, D1 + timedelta(5))


def build_twice(root: Path) -> None:
    """A lake of five days and a home built twice: both generations of the file hold the
    models this project built, so the next builds build what changed."""
    lake, home = Lake(root / "lake"), root / "home"
    home.mkdir(parents=True)
    for account in ACCOUNTS:
        lake.publish(CAMPAIGN_METRICS, metrics(account, days(5)), days(5), [account])
    build_warehouse(home, lake, TABLES.values())
    third = days(5)[2:3]
    lake.publish(CAMPAIGN_METRICS, metrics("a", third, clicks=2), third, ["a"])
    build_warehouse(home, lake, TABLES.values())


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """The test's own copy of the home built twice (`build_twice`, made once per suite)."""
    return prepared.copy_of(tmp_path / "root", "generations-built-twice", build_twice)


def a_day(root: Path, day, account: str = "a", clicks: int = 3) -> None:
    Lake(root / "lake").publish(CAMPAIGN_METRICS, metrics(account, [day], clicks), [day], [account])


def build(root: Path, run_id: str = "build"):
    return build_warehouse(root / "home", Lake(root / "lake"), TABLES.values(), run_id=run_id)


def node_names(resource_type: str) -> list[str]:
    """The names of the project's models, or tests…, from its manifest."""
    nodes = orjson.loads(prepared_manifest().read_bytes())["nodes"].values()
    return sorted(node["name"] for node in nodes if node["resource_type"] == resource_type)


def model_order() -> list[str]:
    return list(models_in_order(project_digest()))


def in_every_generation(home: Path, sql: str) -> None:
    for generation in (home / WAREHOUSE_FILE, home / PREVIOUS_FILE):
        with duckdb.connect(str(generation)) as con:
            con.execute(sql)


def test_a_build_of_what_changed_equals_a_build_from_nothing(root, tmp_path):
    """Day after day, dbt builds what the days read again change (no model over
    campaign_metrics is incremental: every view is kept) and runs every test."""
    for day in NEXT_DAYS:
        a_day(root, day)
        built = build(root)
        assert built.by_dbt
        models = [r for r in built.results if r.resource_type == "model"]
        assert [r.name for r in models] == model_order()
        assert {r.status for r in models} == {"kept"}
        tests = [r for r in built.results if r.resource_type == "test"]
        assert len(tests) == len(node_names("test")) and all(r.status == "pass" for r in tests)
        assert contents(root / "home") == from_nothing(Lake(root / "lake"), tmp_path)
    with duckdb.connect(str(root / "home" / WAREHOUSE_FILE), read_only=True) as con:
        got = con.sql("SELECT sum(clicks) FROM mart_account_daily WHERE account_id = 'a'")
        assert got.fetchall() == [(2 * (2 + 4 * 1 + 2 * 3),)]  # two currencies a day


def test_each_model_comes_after_the_models_it_reads():
    """The order a multi-asset must report its assets in (Dagster refuses another)."""
    order = model_order()
    assert sorted(order) == node_names("model")
    nodes = orjson.loads(prepared_manifest().read_bytes())["nodes"].values()
    for node in (n for n in nodes if n["resource_type"] == "model"):
        for parent in node["depends_on"]["nodes"]:
            if parent.startswith("model."):
                assert order.index(parent.split(".")[-1]) < order.index(node["name"])
    assert order.index("int_product_daily") < order.index("mart_product_daily")


def test_a_build_that_read_nothing_again_runs_no_dbt(root):
    """The second build since the last change (the first brings the previous generation up)."""
    build(root)
    built = build(root)
    assert not built.by_dbt and not any(table.days or table.whole for table in built.loaded)
    assert {r.status for r in built.results} == {"kept"}
    assert [r.name for r in built.results] == model_order()


def catalog(home: Path) -> list[tuple]:
    """Every table, view and column of the warehouse with its type and comment."""
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        return con.sql(
            "SELECT table_name, column_name, data_type, comment, "
            "(SELECT comment FROM duckdb_tables() t WHERE t.table_name = c.table_name "
            " UNION ALL "
            " SELECT comment FROM duckdb_views() v WHERE v.view_name = c.table_name) "
            "FROM duckdb_columns() c WHERE NOT internal ORDER BY table_name, column_index"
        ).fetchall()


def test_a_build_of_what_changed_keeps_dbts_catalog(root, tmp_path):
    """The views it kept still carry the comments dbt's persist_docs wrote: the tables, views,
    columns, types and comments are those of a build from nothing."""
    a_day(root, NEXT_DAYS[0])
    build(root)
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    build_warehouse(fresh, Lake(root / "lake"), TABLES.values())
    assert catalog(fresh) == catalog(root / "home")


def test_a_failing_test_of_what_changed_keeps_the_warehouse_and_names_the_test(root):
    before = (root / "home" / WAREHOUSE_FILE).read_bytes()
    a_row_without_account(root)  # in the lake at `root / "lake"`
    with pytest.raises(MartError, match="grain_mart_account_daily: fail") as failed:
        build(root, run_id="failing")
    assert (root / "home" / WAREHOUSE_FILE).read_bytes() == before
    assert {r.name for r in failed.value.results if r.failed} >= {"grain_mart_account_daily"}
    assert not list((root / "home").glob(f"{WAREHOUSE_FILE}.building-*"))


def test_tests_of_what_changed_read_the_days_read_again_and_a_full_build_every_day(root):
    """A broken row on a day before any the build read again (D1: the builds read the third day
    and the next) is not a daily build's to find; the next build of every model (its project
    changed) tests every row and finds it."""
    home = root / "home"
    in_every_generation(home, f"UPDATE campaign_metrics SET account_id = NULL WHERE date = '{D1}'")
    a_day(root, NEXT_DAYS[0])
    build(root)
    as_another_projects(home)
    with pytest.raises(MartError, match=r"dbt build.*grain_mart_account_daily"):
        build(root)


READER = textwrap.dedent(
    """
    import sys, duckdb
    con = duckdb.connect(sys.argv[1], read_only=True)
    for _ in sys.stdin:
        print(con.sql("SELECT sum(clicks) FROM campaign_metrics").fetchall()[0][0], flush=True)
    """
)


def test_a_reader_keeps_the_generation_it_opened_while_builds_go_on(root, tmp_path):
    """A reader holds the current file; two builds later it is the previous generation, which
    the third build cannot write: it starts from a copy, and the reader reads on."""
    home = root / "home"
    reader = subprocess.Popen(
        [sys.executable, "-c", READER, str(home / WAREHOUSE_FILE)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )

    def read() -> int:
        reader.stdin.write("\n")
        reader.stdin.flush()
        return int(reader.stdout.readline())

    try:
        held = read()
        for day in NEXT_DAYS:
            a_day(root, day)
            build(root)
            assert read() == held
    finally:
        reader.stdin.close()
        reader.wait(timeout=30)
    assert contents(home) == from_nothing(Lake(root / "lake"), tmp_path)


def test_a_build_stopped_between_its_link_and_its_swap_leaves_the_current_file_alone(root):
    """The previous generation's name then links the current file: writing it would write the
    file analysts read."""
    home = root / "home"
    (home / PREVIOUS_FILE).unlink()
    os.link(home / WAREHOUSE_FILE, home / PREVIOUS_FILE)
    inode = (home / WAREHOUSE_FILE).stat().st_ino
    before = (home / WAREHOUSE_FILE).read_bytes()
    a_day(root, NEXT_DAYS[0])
    build(root)
    assert (home / PREVIOUS_FILE).stat().st_ino == inode
    assert (home / PREVIOUS_FILE).read_bytes() == before


def storage_tag(path: Path) -> str:
    with duckdb.connect(str(path), read_only=True) as con:
        query = "SELECT tags['storage_version'] FROM duckdb_databases() WHERE NOT internal"
        return con.execute(query + " AND database_name = current_database()").fetchone()[0]


def in_duckdbs_newest_format(path: Path) -> None:
    """`path` rewritten as DuckDB 2.0 writes a file unless told otherwise (as the project did
    before it chose a format 1.x clients read)."""
    newest = path.with_name(path.name + ".newest")
    with duckdb.connect() as con:
        con.execute(f"ATTACH '{path}' AS old (READ_ONLY)")
        con.execute(f"ATTACH '{newest}' AS new (STORAGE_VERSION 'latest')")
        con.execute("COPY FROM DATABASE old TO new")
    os.replace(newest, path)
    assert storage_tag(path) != STORAGE_TAG


@pytest.mark.parametrize("generations", ["both", "current only"])
def test_a_warehouse_in_duckdbs_newest_format_is_written_anew_in_the_older_one(
    root, tmp_path, generations
):
    """Both generations in the newest format (a reader holding the previous one makes the build
    start from a copy of the current: the same conversion)."""
    home = root / "home"
    in_duckdbs_newest_format(home / WAREHOUSE_FILE)
    if generations == "both":
        (home / PREVIOUS_FILE).unlink()
        shutil.copyfile(home / WAREHOUSE_FILE, home / PREVIOUS_FILE)
    else:
        (home / PREVIOUS_FILE).unlink()
    a_day(root, NEXT_DAYS[0])
    build(root)  # written anew
    assert storage_tag(home / WAREHOUSE_FILE) == STORAGE_TAG
    assert contents(home) == from_nothing(Lake(root / "lake"), tmp_path)


def unused_share(path: Path) -> float:
    """The share of the file's bytes in blocks DuckDB no longer uses."""
    with duckdb.connect(str(path), read_only=True) as con:
        used, block = con.execute(
            "SELECT used_blocks, block_size FROM pragma_database_size() "
            "WHERE database_name = current_database()"
        ).fetchall()[0]
    return 1 - used * block / path.stat().st_size


def test_a_warehouse_rewritten_build_after_build_stays_the_size_of_its_data(root):
    """Each build here reads every row again (every day of both accounts replaced): DuckDB
    writes the new row groups before it frees the old ones, which left the file twice its
    data; past a quarter unused, the build copies it afresh."""
    sizes = []
    for clicks in range(4, 8):
        for account in ACCOUNTS:
            lake = Lake(root / "lake")
            lake.publish(CAMPAIGN_METRICS, metrics(account, days(5), clicks), days(5), [account])
        build(root)
        warehouse = root / "home" / WAREHOUSE_FILE
        assert unused_share(warehouse) < UNUSED_SHARE, clicks
        sizes.append(warehouse.stat().st_size)
    # Growth, not shrinking: the first build from nothing was once 6.5 MB under the suite's
    # load and its copies 3.7 MB, each under a quarter unused (likely DuckDB's row groups per
    # thread, which the load varies).
    assert max(sizes[1:]) < 1.5 * sizes[0], sizes


def test_the_tests_of_a_build_read_the_rows_of_the_days_read_again(root, tmp_path):
    """dbt's tests read the rows from the first day the build read again (the dbt var
    `adwh_tested_since`): a row broken on an older day, which the build neither read nor
    changed, is not read again, while a test over every row finds it."""
    first = days(5)[0].isoformat()  # a row twice: mart_campaign_daily's grain broken
    twice = f"SELECT * FROM campaign_metrics WHERE date = '{first}' LIMIT 1"
    in_every_generation(root / "home", f"INSERT INTO campaign_metrics {twice}")
    a_day(root, NEXT_DAYS[0])
    built = build(root)
    tests = [r for r in built.results if r.resource_type == "test"]
    assert tests and all(r.status == "pass" for r in tests)
    every_row = Plan(project_digest(), ("resource_type:test",), False, tested_since=EVERY_ROW)
    building = tmp_path / WAREHOUSE_FILE  # dbt's parse names the models' catalog after it
    shutil.copy(root / "home" / WAREHOUSE_FILE, building)
    with pytest.raises(MartError) as failed:
        build_marts(building, tmp_path / "dbt", every_row)
    assert "grain_mart_campaign_daily" in {r.name for r in failed.value.results if r.failed}
