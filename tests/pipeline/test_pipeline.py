"""The pipeline end to end on the sandbox's `small` preset, over 40 days (longer than the
31-day cap), checked against the sandbox's own answers. One extraction is shared by the
read-only tests; tests that change the warehouse work on a copy of it."""

import shutil
import subprocess
import sys
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import duckdb
import polars as pl
import pyarrow.dataset as ds
import pytest

from launcher.cli import main
from pipelines.sources import SOURCES
from sandbox.embedded import DEFAULT_PRESET, embedded_service
from tests import library, prepared
from tests.conftest import TODAY, direct, preparing, use_environment
from warehouse.build import build_warehouse
from warehouse.lake import Lake
from warehouse.schemas import TABLES, Layout

# Two weeks: every table of the contract gets rows (its windows and paging are the library's,
# tested there).
START, END = date(2026, 10, 27), date(2026, 11, 9)
FACTS = [t for t in TABLES.values() if t.layout is Layout.DAILY_FACT]
# The metrics resources with `ad_product`, each asked as one list (`group_by` answers them).
ADVERTISING_FACTS = [
    t
    for t in FACTS
    if any(c.name == "ad_product" for c in t.columns) and t.resource.endswith("-metrics")
]


def run(start: date = START, end: date = END, *extra: str) -> int:
    return main(["run", "--start", start.isoformat(), "--end", end.isoformat(), *extra])


def extract(home: Path) -> None:
    """One full extraction into `home`; the methods of the requests the sandbox received
    beside it (`methods.txt`)."""
    service = embedded_service(DEFAULT_PRESET, TODAY)
    with preparing(home):
        service.requests.clear()
        assert run() == 0
    (home.parent / "methods.txt").write_text("\n".join(r.method for r in service.requests))


@pytest.fixture(scope="module")
def extracted() -> tuple[Path, list[str]]:
    """The shared extraction (made once per suite, read only), and its requests' methods."""
    home = prepared.shared("pipeline", extract, START, END)
    return home, (home.parent / "methods.txt").read_text().split()


@pytest.fixture
def copy(extracted, tmp_path, monkeypatch) -> Path:
    """A private copy of the shared extraction, set as ADWH_HOME."""
    target = shutil.copytree(extracted[0], tmp_path / "home", symlinks=True)
    use_environment(monkeypatch, target)
    return target


def warehouse(home: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)


def snapshot_of(home: Path) -> dict[str, list[tuple]]:
    """Every table's rows, without the fetch time, sorted."""
    out = {}
    with warehouse(home) as con:
        for name, schema in TABLES.items():
            columns = ", ".join(f'"{c}"' for c in schema.column_names if c != "_extracted_at")
            out[name] = con.sql(f'SELECT {columns} FROM "{name}" ORDER BY ALL').fetchall()
    return out


def paged(service, path: str, **params) -> list[dict]:
    rows, offset = [], 0
    while True:
        page = direct(service, path, limit=1000, offset=offset, **params).json()
        rows += page["data"]
        if not page["has_more"]:
            return rows
        offset += len(page["data"])


def windows(days: int) -> list[tuple[date, date]]:
    out, first = [], START
    while first <= END:
        last = min(END, first + timedelta(days=days - 1))
        out.append((first, last))
        first = last + timedelta(days=1)
    return out


# ------------------------------------------------------------------ what one run produces
def test_every_contract_table_is_present_and_not_empty(extracted):
    """Every table a source feeds has rows after one run; `restatements` is there, and empty:
    a first fetch restates nothing."""
    home, _ = extracted
    fed = {name: schema for name, schema in TABLES.items() if name != "restatements"}
    with warehouse(home) as con:
        for name in fed:
            assert con.sql(f'SELECT count(*) FROM "{name}"').fetchall()[0][0] > 0, name
        assert con.sql("SELECT count(*) FROM restatements").fetchall() == [(0,)]
    for name, schema in fed.items():
        files = list((home / "lake" / name).glob("date=*/**/*.parquet"))
        assert files, name
        if schema.layout is Layout.DAILY_FACT:
            assert all(f.parent.name.startswith("currency=") for f in files), name


def test_natural_keys_are_unique(extracted):
    home, _ = extracted
    with warehouse(home) as con:
        for name, schema in TABLES.items():
            key = ", ".join(f'"{c}"' for c in schema.natural_key)
            dupes = con.sql(
                f'SELECT count(*) FROM (SELECT {key} FROM "{name}" GROUP BY ALL '
                "HAVING count(*) > 1)"
            ).fetchall()[0][0]
            assert dupes == 0, name


def test_money_is_decimal_and_dates_are_dates(extracted):
    home, _ = extracted
    with warehouse(home) as con:
        types = {r[0]: r[1] for r in con.sql("DESCRIBE campaign_metrics").fetchall()}
    assert types["cost"].startswith("DECIMAL") and types["date"] == "DATE"
    assert types["ctr"] == "DOUBLE" and types["clicks"] == "BIGINT"


@pytest.mark.parametrize("schema", ADVERTISING_FACTS, ids=lambda s: s.name)
def test_sums_per_day_currency_and_ad_product_equal_the_sandbox(extracted, schema):
    home, _ = extracted
    service = embedded_service(DEFAULT_PRESET, TODAY)
    cap = 31 if schema.name in ("target_metrics", "search_term_metrics") else 92
    expected = {}
    for first, last in windows(cap):
        for row in paged(
            service,
            f"/v1/{schema.resource}",
            start_date=first,
            end_date=last,
            granularity="daily",
            group_by="account",
        ):
            expected[(row["date"], row["currency"], row["ad_product"])] = (
                Decimal(row["cost"]),
                Decimal(row["sales"]),
                row["clicks"],
                row["impressions"],
                row["orders"],
            )
    with warehouse(home) as con:
        got = {
            (str(d), c, p): (cost, sales, clicks, impressions, orders)
            for d, c, p, cost, sales, clicks, impressions, orders in con.sql(
                f"SELECT date, currency, ad_product, sum(cost), sum(sales), sum(clicks), "
                f'sum(impressions), sum(orders) FROM "{schema.name}" GROUP BY ALL'
            ).fetchall()
        }
    assert got == expected


def test_seller_sums_and_null_counts_equal_the_sandbox(extracted):
    home, _ = extracted
    service = embedded_service(DEFAULT_PRESET, TODAY)
    rows = []
    for first, last in windows(92):
        rows += paged(
            service,
            "/v1/seller-product-metrics",
            start_date=first,
            end_date=last,
            granularity="daily",
        )
    nullable = (
        "sessions",
        "page_views",
        "buy_box_percentage",
        "conversion_rate",
        "rank",
        "net_sales",
        "referral_fee",
        "days_of_coverage",
    )
    with warehouse(home) as con:
        got = con.sql(
            "SELECT count(*), sum(sales), sum(units), "
            + ", ".join(f"count(*) - count({c})" for c in nullable)
            + " FROM seller_product_metrics"
        ).fetchall()[0]
    expected = (
        len(rows),
        sum(Decimal(r["sales"]) for r in rows),
        sum(r["units"] for r in rows),
        *(sum(r[c] is None for r in rows) for c in nullable),
    )
    assert got == expected
    assert got[3] > 0  # traffic that was not reported stays NULL, never 0


def test_null_and_zero_survive_every_layer(extracted):
    home, _ = extracted
    with warehouse(home) as con:
        sp = con.sql(
            "SELECT count(*), count(new_to_brand_sales) FROM campaign_metrics "
            "WHERE ad_product = 'SP'"
        ).fetchall()[0]
        no_clicks = con.sql(
            "SELECT count(*), count(cpc), count(conversion_rate) "
            "FROM target_metrics WHERE clicks = 0"
        ).fetchall()[0]
        zero_cost = con.sql("SELECT count(*) FROM target_metrics WHERE cost = 0").fetchall()[0]
    assert sp[0] > 0 and sp[1] == 0
    assert no_clicks[0] > 0 and no_clicks[1] == 0 and no_clicks[2] == 0
    assert zero_cost[0] > 0
    lake = pl.scan_parquet(
        str(home / "lake" / "campaign_metrics" / "**" / "*.parquet"), hive_partitioning=True
    ).collect()
    sp_lake = lake.filter(pl.col("ad_product") == "SP")
    assert sp_lake["new_to_brand_sales"].null_count() == sp_lake.height == sp[0]


@pytest.mark.parametrize("schema", FACTS, ids=lambda s: s.name)
def test_lake_reads_as_one_dataset_in_three_engines_and_agrees(extracted, schema):
    home, _ = extracted
    root = home / "lake" / schema.name
    money = next(c.name for c in schema.columns if c.kind == "money")
    with warehouse(home) as con:
        table = con.sql(f'SELECT count(*), sum("{money}") FROM "{schema.name}"').fetchall()[0]
        lake = con.sql(
            f'SELECT count(*), sum("{money}") FROM read_parquet('
            f"'{root}/**/*.parquet', hive_partitioning=true)"
        ).fetchall()[0]
    assert lake == table
    frame = pl.scan_parquet(str(root / "**" / "*.parquet"), hive_partitioning=True).collect()
    assert frame.height == table[0] and frame[money].sum() == table[1]
    assert frame.schema["date"] == pl.Date
    dataset = ds.dataset(str(root), format="parquet", partitioning="hive")
    assert dataset.count_rows() == table[0]
    assert str(dataset.schema.field(money).type).startswith("decimal128")


def test_change_log_actors_are_pseudonyms_never_addresses(extracted):
    home, _ = extracted
    with warehouse(home) as con:
        actors = [
            r[0] for r in con.sql("SELECT DISTINCT actor FROM advertising_changes").fetchall()
        ]
    assert any(a.startswith("person:") for a in actors)
    assert not any("@" in a for a in actors if a)
    hits = [
        p
        for p in home.rglob("*")
        if p.is_file() and b"@example." in p.read_bytes() and "raw" not in p.parts
    ]
    assert hits == []


def test_the_run_sent_nothing_but_get(extracted):
    _, methods = extracted
    assert methods and set(methods) == {"GET"}


# ------------------------------------------------------------------ runs that change things
def partition_files(home: Path) -> list[Path]:
    """The folder of every data file in the lake: one per partition, no leftovers."""
    return sorted(p.parent.relative_to(home) for p in (home / "lake").glob("*/date=*/**/*.parquet"))


def build(home: Path) -> None:
    """The warehouse build a run's last step makes, from the lake (with its housekeeping)."""
    build_warehouse(home, Lake(home / "lake"), TABLES.values(), tidy=True)


def test_running_again_gives_an_identical_warehouse(copy):
    """The library's extraction of the whole range again, and the build: the same rows in
    every table, and the same partitions."""
    before = snapshot_of(copy)
    files = partition_files(copy)
    outcomes = library.extract(copy, START, END)
    assert not [error for error in outcomes.values() if isinstance(error, BaseException)]
    build(copy)
    assert snapshot_of(copy) == before
    assert partition_files(copy) == files


def test_a_narrower_rerun_replaces_exactly_its_partitions(copy):
    before = snapshot_of(copy)
    assert run(date(2026, 11, 1), date(2026, 11, 3), "--tables", "campaign_metrics") == 0
    assert snapshot_of(copy) == before


def test_rebuild_from_raw_is_identical(copy):
    """The library's rebuild of every source from the raw pages alone, the lake and the
    warehouse gone (that `adwh rebuild` sends no request: tests/pipeline/test_dagster_record.py)."""
    before = snapshot_of(copy)
    shutil.rmtree(copy / "lake")
    (copy / "warehouse.duckdb").unlink()
    library.succeeded(library.rebuild(copy, START, TODAY))
    build(copy)
    assert snapshot_of(copy) == before


def test_the_daily_job_turns_pending_economics_into_available(home):
    """The daily job asks again the days whose economics were pending (the library's plan,
    `pipelines/catch_up.py`), and they arrive."""
    today, first_day = date(2026, 11, 12), date(2026, 11, 5)
    table = ["seller_product_metrics"]
    home_from = {"ADWH_START_DATE": first_day.isoformat()}
    library.succeeded(
        library.extract(home, first_day, date(2026, 11, 11), table, ADWH_TODAY=today, **home_from)
    )
    pending = lake_rows(home, "seller_product_metrics").filter(
        pl.col("economics_status") == "pending"
    )
    assert sorted(pending["date"].unique()) == [date(2026, 11, 10), date(2026, 11, 11)]
    library.succeeded(library.daily(home, table, ADWH_TODAY=today + timedelta(days=3), **home_from))
    days = lake_rows(home, "seller_product_metrics").filter(
        pl.col("date").is_in([date(2026, 11, 10), date(2026, 11, 11)])
    )
    status = dict(days.group_by("date").agg(pl.col("economics_status").unique()).iter_rows())
    assert set(status) == {date(2026, 11, 10), date(2026, 11, 11)}
    for statuses in status.values():  # some older product-days never get economics: missing
        assert "pending" not in statuses and "available" in statuses


def lake_rows(home: Path, table: str) -> pl.DataFrame:
    """A table's rows as the lake holds them now."""
    return library.lake(home).scan(table).collect()


def restate(service, monkeypatch: pytest.MonkeyPatch, day: str) -> None:
    """The service restates `day`: every campaign's cost on it is now twice what it was, in
    its daily rows and in the totals of any span holding it (the reconciliation asks those)."""
    original = service.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path != "/v1/campaign-metrics" or not body or "data" not in body:
            return status, body, extra
        asked = dict(query)
        restated: dict[tuple, Decimal] = {}
        total = asked.get("granularity", "total") == "total"
        if total and asked["start_date"] <= day <= asked["end_date"]:
            dated = [(k, v) for k, v in query if k not in ("start_date", "end_date", "offset")]
            dated += [("start_date", day), ("end_date", day)]
            _, same_day, _ = original(method, path, dated, headers)
            restated = {_cost_key(r): Decimal(r["cost"]) for r in same_day["data"] if r["cost"]}
        rows = [
            {**row, "cost": str(Decimal(row["cost"]) * 2)}
            if row.get("date") == day and row.get("cost") is not None
            else {**row, "cost": str(Decimal(row["cost"]) + restated[_cost_key(row)])}
            if _cost_key(row) in restated
            else row
            for row in body["data"]
        ]
        return status, {**body, "data": rows}, extra

    monkeypatch.setattr(service, "handle", handle)


def _cost_key(row: dict) -> tuple:
    return row.get("campaign"), row["currency"], row["ad_product"]


def cost_on(home: Path, day: date) -> Decimal:
    return lake_rows(home, "campaign_metrics").filter(pl.col("date") == day)["cost"].sum()


def test_a_day_restated_within_the_lookback_is_replaced(home, embedded, monkeypatch):
    """The daily job re-reads ADWH_LOOKBACK_DAYS days up to yesterday (the library's plan): a
    restatement six days back is missed by the default three and replaced by a lookback of
    seven."""
    restated = TODAY - timedelta(days=6)
    first = {"ADWH_START_DATE": restated.isoformat()}  # no gap before it to catch up
    yesterday = TODAY - timedelta(days=1)
    library.succeeded(library.extract(home, restated, yesterday, ["campaign_metrics"], **first))
    before = cost_on(home, restated)
    assert before > 0
    restate(embedded, monkeypatch, restated.isoformat())
    library.succeeded(library.daily(home, ["campaign_metrics"], **first))
    assert cost_on(home, restated) == before
    library.succeeded(library.daily(home, ["campaign_metrics"], ADWH_LOOKBACK_DAYS=7, **first))
    assert cost_on(home, restated) == 2 * before


def test_a_lookback_out_of_bounds_is_refused_naming_it(home, monkeypatch, capsys):
    for days in ("0", "367", "a week"):
        monkeypatch.setenv("ADWH_LOOKBACK_DAYS", days)
        assert main(["run", "--tables", "campaign_metrics"]) != 0
        assert "ADWH_LOOKBACK_DAYS" in capsys.readouterr().err


HOLDER = """
import sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
print(con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0], flush=True)
sys.stdin.readline()
print(con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0], flush=True)
"""


def test_an_analyst_holding_the_warehouse_open_does_not_block_the_run(copy):
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(copy / "warehouse.duckdb")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        seen = int(holder.stdout.readline())
        assert run(date(2026, 11, 1), date(2026, 11, 3), "--tables", "campaign_metrics") == 0
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert int(holder.stdout.readline()) == seen  # the old file, still whole
    finally:
        holder.kill()
        holder.wait()
    with warehouse(copy) as con:
        assert con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0] == seen


def test_every_source_is_an_asset_and_every_table_is_fed():
    """Every table but what the runs record themselves (`restatements`) is a source's."""
    assert {o.schema.name for s in SOURCES for o in s.outputs} == set(TABLES) - {"restatements"}


def test_accounts_holds_each_extracted_account_once_with_its_name(extracted):
    home, _ = extracted
    with warehouse(home) as con:
        rows = con.sql("SELECT account_id, id, name FROM accounts").fetchall()
    service = embedded_service(DEFAULT_PRESET, TODAY)
    assert rows == [(service.main_account.id, service.main_account.id, "Acme Retail")]
