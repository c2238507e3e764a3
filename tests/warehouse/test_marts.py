"""The analysts' marts (dbt models, warehouse/dbt/models/marts) keep the service's meaning.

Two kinds of evidence: a small lake written by the real writer (`Lake.publish`) and built by the
real `build_warehouse`, whose every mart value is worked out by hand below (null versus zero,
half-even cpc, cluster overlap, economics completeness, TACOS); and one pipeline run on the
embedded sandbox, whose marts must equal the sandbox's own grouped answers (`group_by` account
and cluster, every `granularity`) and add up to the tables they come from.
"""

import hashlib
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path

import dagster as dg
import duckdb
import polars as pl
import pytest
from deltalake import write_deltalake

from assets.marts import MANIFEST
from launcher.cli import main
from launcher.execute import open_instance
from sandbox.embedded import DEFAULT_PRESET, embedded_service
from sandbox.periods import period_start, periods
from tests import docs, library, prepared
from tests.conftest import TODAY, direct, preparing
from warehouse import schemas as s
from warehouse.build import PREVIOUS_FILE, WAREHOUSE_FILE, build_warehouse
from warehouse.dbt_project import DBT_PROJECT, project_digest
from warehouse.lake import Lake, lake_columns
from warehouse.marts import EVERY_ROW, PROJECT_TABLE, MartError, Plan, build_marts
from warehouse.spec import ECONOMICS_FIELDS

MODELS = DBT_PROJECT / "models"
MARTS = {path.stem for path in (MODELS / "marts").glob("mart_*.sql")}
HISTORIES = {path.stem for path in (MODELS / "history").glob("history_*.sql")}
D = Decimal


def ident(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()[:24]


def connect(home: Path) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)


def records(con: duckdb.DuckDBPyConnection, query: str) -> list[dict]:
    relation = con.sql(query)
    names = relation.columns
    return [dict(zip(names, row, strict=True)) for row in relation.fetchall()]


def views(con: duckdb.DuckDBPyConnection) -> dict[str, str | None]:
    return dict(
        con.sql("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall()
    )


# ====================================================================== a lake worked by hand
ACCOUNT = ident("account")
US, JP = ident("country US"), ident("country JP")
SELLER, ADVERTISING = ident("seller connection"), ident("advertising connection")
C1, C2 = ident("campaign 1"), ident("campaign 2")
G1 = ident("ad group 1")
T1, T2 = ident("target 1"), ident("target 2")
P1, P2, P3, P4 = (ident(f"product {i}") for i in range(1, 5))
PA1, PA2, PA3, PA4, PA5 = (ident(f"product ad {i}") for i in range(1, 6))
ALPHA, BETA = ident("cluster alpha"), ident("cluster beta")
D1, D2 = date(2026, 10, 31), date(2026, 11, 2)  # a Saturday and the Monday after it
EXTRACTED = datetime(2026, 11, 23, 2, 0, tzinfo=UTC).replace(tzinfo=None)

SNAPSHOTS = {
    s.COUNTRIES: [
        {"id": US, "code": "US", "name": "United States"},
        {"id": JP, "code": "JP", "name": "Japan"},
    ],
    s.CONNECTIONS: [
        {"id": SELLER, "type": "seller", "name": "Seller US"},
        {"id": ADVERTISING, "type": "adv-profile", "name": "Ads US"},
    ],
    s.CAMPAIGNS: [
        {
            "id": C1,
            "ad_product": "SP",
            "name": "Shoes exact",
            "state": "ENABLED",
            "country": US,
            "budget_currency": "USD",
            "optimization_config_objective_type": "ACOS",
            "optimization_config_objective_value": 0.25,
            "optimization_config_objective_max_acos_pct": 35.0,
        },
        {"id": C2, "ad_product": "SB", "name": "Brand JP", "country": JP, "budget_currency": "JPY"},
    ],
    s.ADGROUPS: [{"id": G1, "name": "Shoes · exact", "campaign": C1}],
    s.TARGETS: [
        {"id": T1, "campaign": C1, "ad_group": G1, "expression": 'keyword="running shoes"'},
        {"id": T2, "campaign": C2, "expression": "theme"},
    ],
    s.PRODUCTS: [
        {"id": P1, "asin": "B000000001", "sku": "SKU-1", "type": "seller", "country": US},
        {"id": P2, "asin": "B000000002", "sku": "SKU-2", "type": "seller", "country": US},
        {"id": P3, "asin": "B000000003", "sku": "SKU-3", "type": "seller", "country": US},
        {"id": P4, "asin": "B000000004", "type": "vendor", "country": US},
    ],
    s.PRODUCT_ADS: [{"id": PA1, "product": P1, "asin": "B000000001", "sku": "SKU-1"}],
    s.CLUSTERS: [{"id": ALPHA, "name": "Alpha"}, {"id": BETA, "name": "Beta"}],
    # P1 sits in both clusters, P2 in Alpha only, P3 and P4 in none
    s.CLUSTER_PRODUCTS: [
        {"cluster": ALPHA, "product": P1},
        {"cluster": ALPHA, "product": P2},
        {"cluster": BETA, "product": P1},
    ],
}


def campaign_day(campaign, day, currency, ad_product, **measures) -> dict:
    base = {
        "campaign": campaign,
        "connection": ADVERTISING,
        "country": US if currency == "USD" else JP,
        "date": day,
        "currency": currency,
        "ad_product": ad_product,
    }
    return base | measures


def seller_day(product, day, status, **measures) -> dict:
    number = "123"[[P1, P2, P3].index(product)]
    base = {
        "product": product,
        "asin": f"B00000000{number}",
        "sku": f"SKU-{number}",
        "connection": SELLER,
        "country": US,
        "date": day,
        "currency": "USD",
        "economics_status": status,
    }
    return base | measures


def economics(net: str, fees: str, margin: str, storage: str = "0.00") -> dict:
    return {
        "net_sales": D(net),
        "amazon_fees": D(fees),
        "margin_before_ads": D(margin),
        "storage_fee": D(storage),
        "refunded_sales": D("0.00"),
    }


def ad_day(product_ad, product, ad_product, day, cost, clicks, sales="0.00", **more) -> dict:
    return {
        "product_ad": product_ad,
        "product": product,
        "ad_product": ad_product,
        "date": day,
        "currency": "USD",
        "campaign": C1,
        "connection": ADVERTISING,
        "country": US,
        "cost": D(cost),
        "clicks": clicks,
        "sales": D(sales),
        "impressions": 10 * clicks,
        "orders": 0,
        "units": 0,
    } | more


FACTS = {
    s.CAMPAIGN_METRICS: [
        campaign_day(
            C1,
            D1,
            "USD",
            "SP",
            impressions=100,
            clicks=4,
            orders=0,
            units=0,
            cost=D("0.10"),
            sales=D("0.00"),
            top_of_search_is=0.2,
        ),
        campaign_day(
            C1,
            D2,
            "USD",
            "SP",
            impressions=50,
            clicks=0,
            orders=0,
            units=0,
            cost=D("0.00"),
            sales=D("0.00"),
        ),
        campaign_day(
            C2,
            D1,
            "JPY",
            "SB",
            impressions=10,
            clicks=2,
            orders=1,
            units=1,
            cost=D("5"),
            sales=D("300"),
            new_to_brand_sales=D("300"),
        ),
        campaign_day(
            C2,
            D2,
            "JPY",
            "SB",
            impressions=0,
            clicks=0,
            orders=0,
            units=0,
            cost=D("0"),
            sales=D("0"),
        ),
    ],
    s.SELLER_PRODUCT_METRICS: [
        seller_day(
            P1,
            D1,
            "missing",
            sales=D("10.00"),
            units=1,
            orders=1,
            sessions=10,
            page_views=20,
            buy_box_percentage=0.5,
            stock=30,
        ),
        seller_day(
            P2,
            D1,
            "available",
            sales=D("20.00"),
            units=2,
            orders=2,
            stock=5,
            **economics("19.00", "4.00", "15.00"),
        ),
        seller_day(
            P3,
            D1,
            "available",
            sales=D("5.00"),
            units=1,
            orders=1,
            sessions=4,
            page_views=8,
            buy_box_percentage=1.0,
            stock=7,
            **economics("5.00", "1.00", "4.00"),
        ),
        seller_day(
            P2,
            date(2026, 10, 1),
            "available",
            sales=D("0.00"),
            units=0,
            orders=0,
            sessions=3,
            page_views=3,
            buy_box_percentage=0.0,
            stock=5,
            **economics("0.00", "0.00", "0.00"),
        ),
        seller_day(
            P2,
            date(2026, 10, 7),
            "available",
            sales=D("0.00"),
            units=0,
            orders=0,
            stock=5,
            **economics("0.00", "3.00", "-3.00", storage="3.00"),
        ),
        seller_day(
            P1,
            date(2026, 10, 15),
            "available",
            sales=D("30.00"),
            units=3,
            orders=3,
            stock=31,
            **economics("29.00", "6.00", "23.00"),
        ),
        seller_day(
            P1,
            D2,
            "pending",
            sales=D("12.00"),
            units=1,
            orders=1,
            sessions=6,
            page_views=6,
            buy_box_percentage=1.0,
            stock=25,
        ),
        seller_day(
            P3,
            date(2026, 11, 1),
            "available",
            sales=D("0.00"),
            units=0,
            orders=0,
            stock=7,
            **economics("0.00", "0.00", "0.00"),
        ),
        # an ASIN the catalog does not know: no product, so no cluster and no product's ads
        seller_day(P1, D1, "pending", sales=D("1.00"))
        | {"product": None, "asin": "B000000009", "sku": "SKU-9"},
    ],
    s.PRODUCT_AD_METRICS: [
        ad_day(PA1, P1, "SP", D1, "1.00", 2, sales="10.00", orders=1, units=1),
        ad_day(PA2, P1, "SD", D1, "0.50", 1),
        ad_day(PA3, P3, "SP", D1, "0.25", 1),
        ad_day(PA4, P4, "SP", D1, "2.00", 1),
        ad_day(PA5, None, "SP", D1, "0.40", 1),  # a product ad of no catalog product
        ad_day(PA1, P1, "SP", D2, "0.00", 0),
    ],
    s.OPTIMIZATION_HISTORY: [
        {
            "campaign": C1,
            "date": D1,
            "id": T1,
            "entity_type": "target",
            "adgroup": G1,
            "first_bid": D("1.00"),
            "last_bid": D("1.25"),
            "net_change": D("0.25"),
            "direction": "raised",
            "change_count": 1,
        },
        {
            "campaign": C2,
            "date": D1,
            "id": T2,
            "entity_type": "target",
            "first_bid": D("0"),
            "last_bid": D("0"),
            "net_change": D("0"),
            "direction": "unchanged",
            "change_count": 2,
        },
    ],
    s.ADVERTISING_CHANGES: [
        {
            "id": ident("change 1"),
            "date": D1,
            "changed_at": datetime(2026, 10, 31, 3, 0),
            "entity_type": "target",
            "entity_id": T1,
            "campaign": C1,
            "adgroup": G1,
            "connection": ADVERTISING,
            "country": US,
            "field": "bid",
            "old_value": "1.00",
            "new_value": "1.25",
            "source": "workflow",
            "actor": "workflow:" + ident("workflow"),
            "result": "applied",
            "correlation_id": "run-1",
        },
        {
            "id": ident("change 2"),
            "date": D1,
            "changed_at": datetime(2026, 10, 31, 9, 30),
            "entity_type": "campaign",
            "entity_id": C1,
            "campaign": C1,
            "field": "dailyBudget",
            "old_value": "10.00",
            "new_value": "12.50",
            "source": "front",
            "actor": "person:0123456789abcdef0123",
            "result": "failed",
            "error": "Budget above the portfolio cap",
        },
        {
            "id": ident("change 3"),
            "date": D2,
            "changed_at": datetime(2026, 11, 2, 3, 0),
            "entity_type": "adgroup",
            "entity_id": G1,
            "campaign": C1,
            "adgroup": G1,
            "field": "keyword",
            "new_value": "running shoes",
            "source": "workflow",
            "actor": "workflow:" + ident("workflow"),
            "result": "applied",
        },
    ],
}


def typed(schema: s.TableSchema, rows: list[dict]) -> pl.DataFrame:
    common = {"account_id": ACCOUNT, "_extracted_at": EXTRACTED}
    return pl.DataFrame([common | row for row in rows], schema=schema.polars_schema)


def write_lake(home: Path, snapshots: dict, facts: dict) -> None:
    """Every table through the real writer; the warehouse through the real build."""
    lake = Lake(home / "lake")
    for schema, rows in snapshots.items():
        frame = typed(schema, rows).with_columns(date=pl.lit(TODAY))
        lake.publish(schema, frame, [TODAY], [ACCOUNT])
    for schema, rows in facts.items():
        frame = typed(schema, rows)
        lake.publish(schema, frame, frame["date"].unique().to_list(), [ACCOUNT])
    build_warehouse(home, lake, s.TABLES.values())


@pytest.fixture(scope="module")
def known_home() -> Path:
    """The lake of SNAPSHOTS and FACTS and its warehouse (made once per suite; read only)."""
    return prepared.shared("marts-known", partial(write_lake, snapshots=SNAPSHOTS, facts=FACTS))


@pytest.fixture(scope="module")
def known(known_home):
    with connect(known_home) as con:
        yield con


def one(con, query: str) -> dict:
    rows = records(con, query)
    assert len(rows) == 1, rows
    return rows[0]


def test_every_mart_and_each_of_its_columns_is_commented_and_works_on_an_empty_warehouse(
    tmp_path,
):
    build_warehouse(tmp_path, Lake(tmp_path / "lake"), s.TABLES.values())
    with connect(tmp_path) as con:
        found = views(con)
        for name in MARTS | HISTORIES:
            assert con.sql(f"SELECT count(*) FROM {name}").fetchall() == [(0,)], name
        held = con.sql("SELECT table_name, kind, rows FROM warehouse_tables").fetchall()
        commented = con.sql(
            "SELECT table_name, column_name, comment FROM duckdb_columns() "
            "WHERE table_name IN (SELECT view_name FROM duckdb_views() WHERE NOT internal) "
            "OR table_name = 'int_product_daily' ORDER BY table_name, column_index"
        ).fetchall()
    assert set(found) == MARTS | HISTORIES | {"warehouse_tables"} and len(MARTS) >= 9
    assert all(comment and len(comment) > 80 for comment in found.values()), found
    assert sorted(held) == sorted(
        (name, "current state" if t.layout is s.Layout.SNAPSHOT else "dated", 0)
        for name, t in s.TABLES.items()
    )
    documented = {
        (node["name"], column["name"]): column["description"]
        for node in MANIFEST["nodes"].values()
        if node["resource_type"] == "model"
        for column in node["columns"].values()
    }
    # Each model's columns are documented in its own order, no more and no fewer (dbt itself
    # lets a yml column outlive a renamed one), and DuckDB's comment is the rendered doc.
    order = list(documented)
    assert [(table, column) for table, column, _ in commented] == sorted(
        documented, key=lambda key: (key[0], order.index(key))
    )
    for table, column, comment in commented:
        assert comment == documented[table, column] and "doc(" not in comment, (table, column)
        assert len(comment) > 20, (table, column)


def test_the_dbt_sources_are_the_registrys_tables():
    """Every table the pipeline loads is a dbt source (so a mart may read it, and lineage runs
    table -> mart) and is read by `warehouse_tables` (so its update refreshes the warehouse)."""
    sources = re.findall(r"- name: (\w+)", (MODELS / "sources.yml").read_text())
    assert sources[0] == "lake" and sorted(sources[1:]) == sorted(s.TABLES)
    lists = re.findall(
        r"\{% set \w+ = \[(.*?)\] %\}", (MODELS / "warehouse_tables.sql").read_text(), re.S
    )
    listed = re.findall(r"'(\w+)'", "".join(lists))
    assert sorted(listed) == sorted(s.TABLES)


def test_a_relative_home_keeps_dbt_out_of_the_project_and_the_build_no_handle_on_the_file(
    tmp_path, monkeypatch
):
    """ADWH_HOME is `data` by default: dbt must not read it against its own project folder.
    dbt runs in process; once the build is done another process (an analyst, the next run) can
    still open the file for writing, which DuckDB refuses while any process holds it."""
    before = sorted(DBT_PROJECT.iterdir())
    monkeypatch.chdir(tmp_path)
    Path("data").mkdir()
    build_warehouse(Path("data"), Lake(Path("data") / "lake"), s.TABLES.values())
    assert (tmp_path / "data" / "warehouse.duckdb").exists()
    files = sorted(p.name for p in (tmp_path / "data").iterdir() if not p.name.startswith("."))
    assert files == ["warehouse.duckdb"]  # the build's lock file aside
    assert sorted(DBT_PROJECT.iterdir()) == before
    write = "import duckdb, sys; duckdb.connect(sys.argv[1]).execute('CHECKPOINT')"
    target = str(tmp_path / "data" / "warehouse.duckdb")
    opened = subprocess.run([sys.executable, "-c", write, target], capture_output=True, text=True)
    assert opened.returncode == 0, opened.stderr


PARTITIONS = ["date", "currency"]


def a_row_without_account(home: Path) -> None:
    """A campaign_metrics row with no account_id, written past the contracts (which refuse it),
    as a lake edited by hand or another writer might hold: the marts' grain tests fail."""
    bad = typed(s.CAMPAIGN_METRICS, [campaign_day(ident("c1"), D1, "USD", "SP", clicks=1)])
    bad = bad.with_columns(pl.lit(None, pl.String).alias("account_id"))
    rows = bad.select(list(lake_columns(s.CAMPAIGN_METRICS))).to_arrow()
    table = str(home / "lake" / "campaign_metrics")
    write_deltalake(table, rows, mode="append", partition_by=PARTITIONS)


def as_another_projects(home: Path) -> None:
    """Every generation of the warehouse in `home` marked as built by another dbt project (an
    edited model, say): the next build is dbt's, every model and test."""
    for name in (WAREHOUSE_FILE, PREVIOUS_FILE):
        if (home / name).exists():
            with duckdb.connect(str(home / name)) as con:
                con.execute(f"UPDATE {PROJECT_TABLE} SET digest = 'an older project'")


def test_a_failing_mart_test_keeps_the_warehouse_in_place_and_names_the_test(tmp_path):
    """The failed build leaves dbt's log naming the failure, and shows that the build started
    from the project as parsed when the definitions loaded: the building file's path changes
    dbt's vars and profile, which would make dbt drop its partial parse and parse again."""
    build_warehouse(tmp_path, Lake(tmp_path / "lake"), s.TABLES.values())
    as_another_projects(tmp_path)
    before = (tmp_path / "warehouse.duckdb").read_bytes()
    a_row_without_account(tmp_path)
    with pytest.raises(MartError, match="grain_mart_account_daily") as failed:
        build_warehouse(tmp_path, Lake(tmp_path / "lake"), s.TABLES.values(), run_id="failing")
    assert (tmp_path / "warehouse.duckdb").read_bytes() == before
    assert not list(tmp_path.glob("warehouse.duckdb.building-*"))
    artifacts = tmp_path / "dbt" / "failing"
    assert "dbt.log" in str(failed.value)
    assert "Failure in test" in (artifacts / "dbt.log").read_text()
    assert not (artifacts / "partial_parse.msgpack").exists()  # dbt writes it when it parses


BROKEN_MODELS = [
    # a repeated key: every row of the mart twice
    "ALTER VIEW mart_campaign_daily RENAME TO campaign_daily_once",
    "CREATE VIEW mart_campaign_daily AS "
    "SELECT * FROM campaign_daily_once UNION ALL SELECT * FROM campaign_daily_once",
    # a ratio over a zero denominator (D2 in USD had no clicks): a cost per click of 1
    "ALTER VIEW mart_account_daily RENAME TO account_daily_right",
    "CREATE VIEW mart_account_daily AS "
    "SELECT * REPLACE (coalesce(cpc, 1) AS cpc) FROM account_daily_right",
    # a NULL in a column outside the key that is never NULL
    "ALTER VIEW warehouse_tables RENAME TO tables_right",
    "CREATE VIEW warehouse_tables AS SELECT * REPLACE (CAST(NULL AS BIGINT) AS rows) "
    "FROM tables_right",
    # a NULL in a model with no key to state, on one row
    "UPDATE int_product_daily SET currency = NULL "
    "WHERE rowid = (SELECT min(rowid) FROM int_product_daily)",
]


def test_each_of_the_projects_tests_fails_on_what_it_forbids(known_home, tmp_path):
    """The project's own generic tests (`macros/`: a mart's grain with the key columns never
    NULL, its ratios NULL on a zero denominator, columns never NULL), each run by dbt over a
    model broken the way it forbids, and only those failing: the marts' models themselves
    never make such rows, so no lake can show it."""
    building = tmp_path / WAREHOUSE_FILE  # dbt's parse names the models' catalog after it
    shutil.copy(known_home / WAREHOUSE_FILE, building)
    with duckdb.connect(str(building)) as con:
        for statement in BROKEN_MODELS:
            con.execute(statement)
    tests = Plan(project_digest(), ("resource_type:test",), False, tested_since=EVERY_ROW)
    with pytest.raises(MartError) as failed:
        build_marts(building, tmp_path / "dbt", tests)
    assert {r.name for r in failed.value.results if r.failed} == {
        "grain_mart_campaign_daily",
        "null_on_zero_denominators_mart_account_daily",
        "grain_warehouse_tables",
        "not_null_columns_int_product_daily",
    }
    assert len(failed.value.results) == sum(n.startswith("test.") for n in MANIFEST["nodes"])


def test_a_run_whose_mart_test_fails_exits_1_naming_it_and_dagster_records_the_check(
    home, embedded, capsys
):
    metrics = ["--tables", "campaign_metrics"]  # what the failing marts read
    assert main(["run", "--start", D1.isoformat(), "--end", D1.isoformat(), *metrics]) == 0
    before = (home / "warehouse.duckdb").read_bytes()
    a_row_without_account(home)
    assert main(["run", "--start", D2.isoformat(), "--end", D2.isoformat(), *metrics]) == 1
    err = capsys.readouterr().err
    # every mart reading campaign_metrics fails its test; the line names the first reported
    assert re.fullmatch(r"adwh: (mart_\w+): dbt test grain_\1 failed\n", err), err
    assert (home / "warehouse.duckdb").read_bytes() == before
    with open_instance() as instance:
        key = dg.AssetCheckKey(dg.AssetKey("mart_account_daily"), "grain_mart_account_daily")
        (latest,) = instance.event_log_storage.get_asset_check_execution_history(key, 1)
    assert latest.status.value == "FAILED"


def test_account_daily_keeps_null_zero_and_rounds_cpc_half_even(known):
    rows = {
        (r["date"], r["currency"]): r for r in records(known, "SELECT * FROM mart_account_daily")
    }
    usd = rows[D1, "USD"]
    assert usd["spend"] == D("0.10") and usd["cpc"] == D("0.02")  # 0.025 → 0.02, half even
    assert usd["acos"] is None and usd["roas"] == 0.0 and usd["ctr"] == 0.04
    assert usd["new_to_brand_sales"] is None  # SP does not report it: NULL, not 0
    jpy = rows[D1, "JPY"]
    assert jpy["cpc"] == D("2") and jpy["acos"] == pytest.approx(5 / 300)  # ¥2.5 → ¥2
    assert jpy["new_to_brand_sales"] == D("300")
    quiet = rows[D2, "USD"]
    assert quiet["cpc"] is None and quiet["roas"] is None and quiet["ctr"] == 0.0
    assert quiet["clicks"] == 0 and quiet["spend"] == D("0.00")  # real zeros stay zeros
    empty_jpy = rows[D2, "JPY"]
    assert empty_jpy["ctr"] is None and empty_jpy["new_to_brand_sales"] is None


def test_account_periods_label_the_service_way_and_flag_partial_edges(known):
    rows = records(
        known,
        "SELECT grain, date, first_day, last_day, days, partial, spend, clicks, cpc, "
        "new_to_brand_sales FROM mart_account_periods WHERE currency = 'USD' "
        "ORDER BY grain, date",
    )
    weeks = [r for r in rows if r["grain"] == "weekly"]
    assert [r["date"] for r in weeks] == [date(2026, 10, 26), date(2026, 11, 2)]  # Mondays
    assert [(r["first_day"], r["last_day"], r["days"]) for r in weeks] == [
        (D1, date(2026, 11, 1), 2),  # the warehouse holds 31 Oct .. 2 Nov
        (D2, D2, 1),
    ]
    quarter = next(r for r in rows if r["grain"] == "quarterly")
    assert quarter["date"] == date(2026, 10, 1) and quarter["partial"]
    assert quarter["spend"] == D("0.10") and quarter["clicks"] == 4 and quarter["cpc"] == D("0.02")
    year = next(r for r in rows if r["grain"] == "yearly")
    assert year["date"] == date(2026, 1, 1) and year["days"] == 3
    jpy = one(
        known,
        "SELECT new_to_brand_sales FROM mart_account_periods "
        "WHERE currency = 'JPY' AND grain = 'monthly' AND date = '2026-10-01'",
    )
    assert jpy["new_to_brand_sales"] == D("300")


def test_campaign_daily_names_campaigns_and_keeps_their_ratios(known):
    row = one(known, f"SELECT * FROM mart_campaign_daily WHERE campaign = '{C1}' AND date = '{D1}'")
    assert row["campaign_name"] == "Shoes exact" and row["country_code"] == "US"
    assert row["cpc"] == D("0.02") and row["acos"] is None and row["top_of_search_is"] == 0.2
    assert known.sql("SELECT count(*) FROM mart_campaign_daily").fetchall() == [(4,)]


def test_product_daily_puts_ads_beside_sales_with_tacos(known):
    rows = {
        (r["product"], r["date"]): r for r in records(known, "SELECT * FROM mart_product_daily")
    }
    p1 = rows[P1, D1]
    assert (p1["sales"], p1["ad_spend"], p1["ad_clicks"]) == (D("10.00"), D("1.50"), 3)
    assert p1["tacos"] == pytest.approx(0.15) and p1["cpc"] == D("0.50")
    assert p1["product_ad_rows"] == 2 and p1["seller_rows"] == 1
    assert p1["conversion_rate"] == 0.1 and p1["buy_box_percentage"] == 0.5 and p1["stock"] == 30
    assert p1["conversion_rate_reported_traffic"] == 0.1  # one row with traffic: the same
    p2 = rows[P2, D1]  # sold, no ads that day, traffic not reported
    assert p2["ad_spend"] is None and p2["tacos"] is None and p2["product_ad_rows"] == 0
    assert p2["sessions"] is None and p2["conversion_rate"] is None
    assert p2["conversion_rate_reported_traffic"] is None
    assert rows[P3, D1]["tacos"] == pytest.approx(0.05)
    p4 = rows[P4, D1]  # advertised, no seller row: NULL sales, not 0
    assert p4["seller_rows"] == 0 and p4["sales"] is None and p4["ad_spend"] == D("2.00")
    assert p4["tacos"] is None and p4["asin"] == "B000000004"
    later = rows[P1, D2]
    assert later["ad_spend"] == D("0.00") and later["tacos"] == 0.0  # a real zero of spend
    unknown = rows[None, D1]  # sold, no catalog product: never beside PA5, an unknown's ad
    assert (unknown["sales"], unknown["seller_rows"], unknown["asin"]) == (
        D("1.00"),
        1,
        "B000000009",
    )
    assert unknown["ad_spend"] is None and unknown["product_ad_rows"] == 0


def test_economics_months_say_how_complete_they_are(known):
    rows = {
        (r["product"], r["month"]): r
        for r in records(known, "SELECT * FROM mart_product_economics_monthly")
    }
    october, november = date(2026, 10, 1), date(2026, 11, 1)
    p1 = rows[P1, october]
    assert (p1["days_available"], p1["days_missing"], p1["days_pending"]) == (1, 1, 0)
    assert p1["completeness"] == "missing days" and p1["whole_month"]
    assert (p1["net_sales"], p1["fees"], p1["margin_before_ads"]) == (
        D("29.00"),
        D("6.00"),
        D("23.00"),
    )
    p2 = rows[P2, october]
    assert p2["completeness"] == "complete" and p2["days_available"] == 3
    assert p2["storage_fee"] == D("3.00") and p2["storage_fee_days"] == 1
    assert p2["margin_before_ads"] == D("12.00") and p2["fees"] == D("7.00")
    assert p2["margin_rate"] == pytest.approx(12 / 19)
    pending = rows[P1, november]
    assert pending["completeness"] == "pending" and pending["days_pending"] == 1
    assert pending["net_sales"] is None and pending["sales"] == D("12.00")  # not reported yet
    partial = rows[P3, november]
    assert partial["completeness"] == "partial month" and not partial["whole_month"]
    assert partial["net_sales"] == D("0.00")  # a real zero
    assert (partial["first_day"], partial["last_day"]) == (date(2026, 11, 1), D2)


def test_every_field_of_the_economics_block_is_summed_by_month(known):
    """The mart spells its sums out (its columns' names and order are what analysts query);
    a field the spec adds to the block must be one of them (`amazon_fees` shown as `fees`)."""
    columns = set(records(known, "SELECT * FROM mart_product_economics_monthly LIMIT 1")[0])
    shown = {"amazon_fees": "fees"}
    assert {shown.get(field, field) for field in ECONOMICS_FIELDS} <= columns


def test_clusters_count_a_shared_product_in_full_in_each(known):
    rows = {
        (r["cluster_name"], r["date"]): r
        for r in records(known, "SELECT * FROM mart_cluster_daily")
    }
    alpha, beta = rows["Alpha", D1], rows["Beta", D1]
    assert (alpha["sales"], alpha["units"], alpha["sessions"]) == (D("30.00"), 3, 10)
    # P1: 1 order, 10 sessions; P2: 2 orders, traffic not reported
    assert alpha["conversion_rate"] == pytest.approx(0.3)  # the service's: orders / sessions
    assert alpha["conversion_rate_reported_traffic"] == 0.1  # orders of rows with traffic only
    assert alpha["buy_box_percentage"] == 0.5 and alpha["seller_products"] == 2
    assert (alpha["ad_spend"], alpha["ad_clicks"]) == (D("1.50"), 3)
    assert alpha["tacos"] == pytest.approx(0.05)
    assert (beta["sales"], beta["ad_spend"]) == (D("10.00"), D("1.50"))  # P1 again, in full
    assert rows["Beta", D2]["ad_spend"] == D("0.00")


def test_clustered_and_unclustered_add_up_to_the_account_exactly(known):
    rows = {
        r["scope"]: r
        for r in records(known, f"SELECT * FROM mart_cluster_coverage_daily WHERE date = '{D1}'")
    }
    clustered, rest = rows["clustered, de-duplicated"], rows["unclustered"]
    assert (clustered["sales"], clustered["ad_spend"]) == (D("30.00"), D("1.50"))
    # the rest: P3, P4 and the rows of no catalog product (counted in rows, not products)
    assert (rest["sales"], rest["ad_spend"], rest["advertised_products"]) == (
        D("6.00"),
        D("2.65"),
        2,
    )
    assert (rest["seller_products"], rest["seller_rows"], rest["product_ad_rows"]) == (1, 2, 3)
    assert clustered["sales"] + rest["sales"] == D("36.00")  # every seller row of the day
    assert clustered["conversion_rate"] == pytest.approx(0.3)  # (1 + 2) orders / 10 sessions
    assert clustered["conversion_rate_reported_traffic"] == 0.1  # P2 had no traffic
    assert rest["conversion_rate"] == rest["conversion_rate_reported_traffic"] == 0.25
    assert clustered["ad_spend"] + rest["ad_spend"] == D("4.15")  # every product ad of the day
    overlapping = known.sql(
        f"SELECT sum(sales) FROM mart_cluster_daily WHERE date = '{D1}'"
    ).fetchall()[0][0]
    assert overlapping == D("40.00") > clustered["sales"]  # P1 counted in both clusters


def test_bid_changes_sit_beside_the_campaign_objective(known):
    rows = {r["target"]: r for r in records(known, "SELECT * FROM mart_bid_changes")}
    raised = rows[T1]
    assert (raised["campaign_name"], raised["objective_type"], raised["objective_value"]) == (
        "Shoes exact",
        "ACOS",
        0.25,
    )
    assert raised["objective_max_acos"] == pytest.approx(0.35) and raised["currency"] == "USD"
    assert raised["net_change_ratio"] == 0.25 and raised["adgroup_name"] == "Shoes · exact"
    assert raised["target_expression"] == 'keyword="running shoes"'
    flat = rows[T2]
    assert flat["objective_type"] is None and flat["net_change_ratio"] is None  # bid was 0


def test_change_log_is_readable(known):
    rows = {r["field"]: r for r in records(known, "SELECT * FROM mart_change_log")}
    bid = rows["bid"]
    assert (bid["entity_name"], bid["field_label"], bid["change"]) == (
        'keyword="running shoes"',
        "bid",
        "1.00 → 1.25",
    )
    assert bid["amount_change"] == D("0.25") and bid["currency"] == "USD" and bid["applied"]
    assert bid["source_label"] == "optimizer workflow" and bid["country_code"] == "US"
    budget = rows["dailyBudget"]
    assert budget["entity_name"] == "Shoes exact" and budget["field_label"] == "daily budget"
    assert budget["applied"] is False and budget["actor_kind"] == "person"
    assert budget["amount_change"] == D("2.50") and budget["error"]
    keyword = rows["keyword"]
    assert (
        keyword["entity_name"] == "Shoes · exact" and keyword["change"] == "(none) → running shoes"
    )
    assert keyword["amount_change"] is None


# ====================================================================== one pipeline run
RUN_START, RUN_END = date(2026, 10, 1), date(2026, 11, 22)
# Fetched the morning before too, while the service revised its latest days (extract_and_build).
RESTATED_TABLES = ("campaign_metrics", "seller_product_metrics")
# Snapshotted a week before too, for their history (tests/warehouse/test_history.py): the
# sandbox's campaigns and ad groups change every few days, as their change log says.
HISTORY_TABLES = ("campaigns", "adgroups")
HISTORY_SINCE = TODAY - timedelta(days=7)
RUN_TABLES = (
    "campaign_metrics",
    "product_ad_metrics",
    "seller_product_metrics",
    "campaigns",
    "adgroups",
    "targets",
    "product_ads",
    "products",
    "clusters",
    "cluster_products",
    "countries",
    "connections",
    "optimization_history",
    "advertising_changes",
    "workflows",
    "workflow_performance",
    "tasks",
    "task_items",
)


def shared_run(request: pytest.FixtureRequest) -> Path:
    """`ADWH_HOME` (named `data`) holding the tables the marts read over RUN_START..RUN_END,
    extracted by the library and built with a run's housekeeping, made once per suite
    (tests/prepared.py) for every module that asks (tests/warehouse/test_readme_queries.py
    too); read only."""
    return prepared.shared("marts-run", extract_and_build, RUN_TABLES, folder_name="data")


def extract_and_build(home: Path) -> None:
    """What a run of RUN_TABLES over RUN_START..RUN_END leaves in `home`'s lake and warehouse,
    against the embedded sandbox as it is (whatever the asking test set); before it, the
    morning before's run of RESTATED_TABLES' latest days, while the service still revised them,
    so that the run restates them (`restatements`, mart_restatements); and a week before, a
    snapshot of HISTORY_TABLES (their history: a week of changes between two snapshots). What
    the lake then
    holds is the service's answer of TODAY, as the tests compare it."""
    with preparing(home) as patch:
        patch.setenv("ADWH_SANDBOX_RESTATE_DAYS", "3")
        day_before = TODAY - timedelta(days=1)
        latest = (day_before - timedelta(days=3), day_before - timedelta(days=1))
        restating = {"ADWH_TODAY": day_before.isoformat()}
        week_before = {"ADWH_TODAY": HISTORY_SINCE.isoformat()}
        library.succeeded(library.extract(home, *latest, HISTORY_TABLES, **week_before))
        library.succeeded(library.extract(home, *latest, RESTATED_TABLES, **restating))
        patch.delenv("ADWH_SANDBOX_RESTATE_DAYS")
        library.succeeded(library.extract(home, RUN_START, RUN_END, RUN_TABLES))
        build_warehouse(home, library.lake(home), s.TABLES.values(), tidy=True)


@pytest.fixture(scope="module")
def run(request):
    with connect(shared_run(request)) as con:
        yield con


SERVICE = embedded_service(DEFAULT_PRESET, TODAY)


def answer(resource: str, **params) -> list[dict]:
    rows: list[dict] = []
    window = {"start_date": RUN_START, "end_date": RUN_END}
    while True:
        response = direct(
            SERVICE, f"/v1/{resource}", limit=1000, offset=len(rows), **window, **params
        )
        assert response.status_code == 200, response.json()
        rows += response.json()["data"]
        if not response.json()["has_more"]:
            return rows


def amount(value):
    return Decimal(value) if isinstance(value, str) else value


def close(got, expected, rel: float = 1e-12, abs_: float = 0.0) -> bool:
    """Equal ratios: both NULL, or within float noise (the service divides integers)."""
    if got is None or expected is None:
        return got is None and expected is None
    return got == pytest.approx(expected, rel=rel, abs=abs_)


def test_account_marts_equal_the_services_grouped_answers(run):
    for grain in ("daily", "weekly", "monthly", "quarterly", "yearly"):
        expected = {
            (date.fromisoformat(r["date"]), r["currency"], r["ad_product"]): r
            for r in answer("campaign-metrics", granularity=grain, group_by="account")
        }
        if grain == "daily":
            query = "SELECT * FROM mart_account_daily"
        else:
            query = f"SELECT * FROM mart_account_periods WHERE grain = '{grain}'"
        got = {(r["date"], r["currency"], r["ad_product"]): r for r in records(run, query)}
        assert got.keys() == expected.keys(), grain
        for key, row in expected.items():
            mine = got[key]
            assert mine["spend"] == Decimal(row["cost"]) and mine["sales"] == Decimal(row["sales"])
            for name in ("impressions", "clicks", "orders", "units", "new_to_brand_purchases"):
                assert mine[name] == row[name], (grain, key, name)
            assert mine["new_to_brand_sales"] == amount(row["new_to_brand_sales"])
            assert mine["cpc"] == amount(row["cpc"]), (grain, key)
            for name in ("acos", "roas", "ctr", "conversion_rate"):
                assert close(mine[name], row[name]), (grain, key, name, mine[name], row[name])
        if grain != "daily":
            partial = {
                label: first != label or period_start(last + timedelta(days=1), grain) == label
                for label, first, last in periods(RUN_START, RUN_END, grain)
            }
            assert all(r["partial"] == partial[r["date"]] for r in got.values())


def test_campaign_daily_recomputes_the_services_own_daily_ratios(run):
    rows = records(
        run,
        "SELECT d.*, m.cpc AS served_cpc, m.acos AS served_acos, m.ctr AS served_ctr, "
        "m.roas AS served_roas, m.conversion_rate AS served_conversion_rate "
        "FROM mart_campaign_daily d JOIN campaign_metrics m USING (account_id, campaign, date, "
        "currency, ad_product)",
    )
    assert len(rows) == run.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0]
    for row in rows:
        assert row["cpc"] == row["served_cpc"] and row["campaign_name"]
        for name in ("acos", "roas", "ctr", "conversion_rate"):
            assert close(row[name], row[f"served_{name}"]), (name, row)


def test_cluster_mart_equals_the_services_group_by_cluster(run):
    seller = {
        (r["cluster"], date.fromisoformat(r["date"]), r["currency"]): r
        for r in answer("seller-product-metrics", granularity="daily", group_by="cluster")
    }
    ads: dict = defaultdict(lambda: defaultdict(int))
    for r in answer("product-ad-metrics", granularity="daily", group_by="cluster"):
        totals = ads[r["cluster"], date.fromisoformat(r["date"]), r["currency"]]
        for name in ("cost", "sales", "clicks", "impressions", "orders"):
            totals[name] += amount(r[name])
    got = {
        (r["cluster"], r["date"], r["currency"]): r
        for r in records(run, "SELECT * FROM mart_cluster_daily")
    }
    assert got.keys() == seller.keys() | ads.keys()
    for key, row in seller.items():
        mine = got[key]
        assert (
            mine["sales"] == Decimal(row["sales"]) and mine["cluster_name"] == row["cluster_name"]
        )
        for name in ("units", "orders", "sessions", "page_views"):
            assert mine[name] == row[name], (key, name)
        assert close(mine["conversion_rate"], row["conversion_rate"]), key
        assert close(mine["buy_box_percentage"], row["buy_box_percentage"], abs_=1.01e-4), key
    for key, totals in ads.items():
        mine = got[key]
        assert (mine["ad_spend"], mine["ad_sales"], mine["ad_clicks"]) == (
            totals["cost"],
            totals["sales"],
            totals["clicks"],
        )


def test_cluster_coverage_adds_up_to_the_account_exactly(run):
    coverage = records(
        run,
        "SELECT date, currency, sum(sales) AS sales, sum(units) AS units, "
        "sum(sessions) AS sessions, sum(ad_spend) AS ad_spend, sum(ad_clicks) AS ad_clicks, "
        "sum(seller_rows) AS seller_rows, sum(product_ad_rows) AS product_ad_rows "
        "FROM mart_cluster_coverage_daily GROUP BY ALL ORDER BY ALL",
    )
    account = records(
        run,
        "WITH s AS (SELECT date, currency, sum(sales) AS sales, sum(units) AS units, "
        "sum(sessions) AS sessions, count(*) AS seller_rows FROM seller_product_metrics "
        "GROUP BY ALL), a AS (SELECT date, currency, sum(cost) AS ad_spend, "
        "sum(clicks) AS ad_clicks, count(*) AS product_ad_rows FROM product_ad_metrics "
        "GROUP BY ALL) SELECT coalesce(s.date, a.date) AS date, "
        "coalesce(s.currency, a.currency) AS currency, sales, units, sessions, ad_spend, "
        "ad_clicks, coalesce(seller_rows, 0) AS seller_rows, "
        "coalesce(product_ad_rows, 0) AS product_ad_rows "
        "FROM s FULL JOIN a ON s.date = a.date AND s.currency = a.currency ORDER BY ALL",
    )
    assert coverage == account and len(account) > 100
    overlap = run.sql(
        "SELECT count(*) FROM (SELECT date, currency, sum(sales) AS s FROM mart_cluster_daily "
        "GROUP BY ALL) c JOIN mart_cluster_coverage_daily v USING (date, currency) "
        "WHERE v.scope = 'clustered, de-duplicated' AND c.s > v.sales"
    ).fetchall()[0][0]
    assert overlap > 0  # products in two clusters: the per-cluster rows overlap


def test_product_daily_adds_up_to_its_two_sources(run):
    mart = dict(
        (
            (c, (s_, a))
            for c, s_, a in run.sql(
                "SELECT currency, sum(sales), sum(ad_spend) FROM mart_product_daily GROUP BY ALL"
            ).fetchall()
        )
    )
    sales = dict(
        run.sql("SELECT currency, sum(sales) FROM seller_product_metrics GROUP BY ALL").fetchall()
    )
    spend = dict(
        run.sql("SELECT currency, sum(cost) FROM product_ad_metrics GROUP BY ALL").fetchall()
    )
    assert mart == {c: (sales.get(c), spend.get(c)) for c in sales.keys() | spend.keys()}
    wrong = run.sql(
        "SELECT count(*) FROM mart_product_daily WHERE tacos IS DISTINCT FROM "
        "CASE WHEN sales <> 0 THEN CAST(ad_spend AS DOUBLE) / CAST(sales AS DOUBLE) END"
    ).fetchall()[0][0]
    assert wrong == 0


def test_product_conversion_rolled_up_by_month_is_the_services_monthly_answer(run):
    expected = {
        (r["product"], date.fromisoformat(r["date"]), r["currency"]): r
        for r in answer("seller-product-metrics", granularity="monthly")
    }
    got = {
        (r["product"], r["month"], r["currency"]): r
        for r in records(
            run,
            "SELECT product, currency, CAST(date_trunc('month', date) AS DATE) AS month, "
            "safe_ratio(sum(orders), sum(sessions)) AS conversion_rate, "
            "safe_ratio(sum(orders_with_traffic), sum(sessions)) AS reported_traffic "
            "FROM mart_product_daily WHERE seller_rows > 0 GROUP BY ALL",
        )
    }
    assert got.keys() == expected.keys()
    for key, row in expected.items():
        assert close(got[key]["conversion_rate"], row["conversion_rate"]), key  # spec 2.9
    differ = [k for k, r in got.items() if not close(r["reported_traffic"], r["conversion_rate"])]
    assert differ  # months mixing days with and without traffic: the two readings differ


def test_economics_months_count_every_status(run):
    statuses = dict(
        run.sql(
            "SELECT economics_status, count(*) FROM seller_product_metrics GROUP BY ALL"
        ).fetchall()
    )
    mart = one(
        run,
        "SELECT sum(days_available) AS available, sum(days_pending) AS pending, "
        "sum(days_missing) AS missing, sum(net_sales) AS net_sales "
        "FROM mart_product_economics_monthly",
    )
    assert (mart["available"], mart["pending"], mart["missing"]) == (
        statuses["available"],
        statuses["pending"],
        statuses["missing"],
    )
    assert (
        mart["net_sales"]
        == run.sql("SELECT sum(net_sales) FROM seller_product_metrics").fetchall()[0][0]
    )
    kinds = dict(
        run.sql(
            "SELECT month, list(DISTINCT completeness ORDER BY completeness) "
            "FROM mart_product_economics_monthly GROUP BY ALL"
        ).fetchall()
    )
    assert "pending" in kinds[date(2026, 11, 1)]  # the last days are under 72 hours old
    assert (
        "pending" not in kinds[date(2026, 10, 1)]
        and "partial month" not in kinds[date(2026, 10, 1)]
    )


def test_history_and_change_log_marts_keep_every_row(run):
    for mart, table in (
        ("mart_bid_changes", "optimization_history"),
        ("mart_change_log", "advertising_changes"),
    ):
        counts = run.sql(f"SELECT (SELECT count(*) FROM {mart}), (SELECT count(*) FROM {table})")
        got, expected = counts.fetchall()[0]
        assert got == expected > 0, mart
    objectives = run.sql(
        "SELECT count(*) FROM mart_bid_changes b JOIN campaigns c ON c.id = b.campaign "
        "WHERE b.objective_type IS DISTINCT FROM c.optimization_config_objective_type"
    ).fetchall()[0][0]
    assert objectives == 0
    actors = [a for (a,) in run.sql("SELECT DISTINCT actor FROM mart_change_log").fetchall()]
    assert any(a.startswith("person:") for a in actors) and not any("@" in a for a in actors)
    assert run.sql(
        "SELECT count(*) FROM mart_change_log WHERE entity_name IS NULL OR field_label IS NULL"
    ).fetchall() == [(0,)]


def test_the_readme_documents_every_mart_with_a_query():
    """docs/analysts.md's Marts section (the README links to it)."""
    section = docs.section(docs.ANALYSTS, "## Marts")
    queries = "\n".join(re.findall(r"```sql\n(.*?)```", section, flags=re.S))
    for name in MARTS:
        assert f"`{name}`" in section and name in queries, name
