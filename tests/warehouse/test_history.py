"""Entity history: each record's values with the interval they held, from the dated snapshots
the lake keeps, built by the real loader and dbt in a real DuckDB file from snapshots written by
the real `Lake` (the change log typed from a service's rows by the pipeline's own output, its
entity under each name a service may give it). Against the sandbox (whose campaigns change on
the days its change log says), the README's queries run on the marts' shared run
(tests/warehouse/test_readme_queries.py) and the change log's agreement is tested there too
(`test_history_of_the_shared_run…`)."""

import json
from datetime import date, datetime, timedelta
from pathlib import Path

import duckdb
import orjson
import polars as pl
import pytest

from pipelines.client.paging import Page
from pipelines.shaping import Context
from pipelines.sources import SOURCES
from tests.conftest import TODAY
from tests.warehouse.test_marts import HISTORY_SINCE, records, shared_run
from tests.warehouse.test_warehouse_load import read_days
from warehouse.build import WAREHOUSE_FILE, build_warehouse
from warehouse.history_models import attributes_of, expected_files, key_of
from warehouse.lake import Lake
from warehouse.schemas import TABLES, TableSchema

CAMPAIGNS = TABLES["campaigns"]
CHANGES = TABLES["advertising_changes"]
CHANGE_LOG = next(o for source in SOURCES for o in source.outputs if o.schema is CHANGES)
D = [date(2026, 11, 18) + timedelta(days=i) for i in range(6)]
FETCHED = datetime(2026, 11, 23, 3)


def take(
    lake: Lake, day: date, account: str, rows: list[dict], table: TableSchema = CAMPAIGNS
) -> None:
    """What a run publishes of an account's campaigns (or `table`'s records) on `day`
    (pipelines/stages/publish.py)."""
    frame = pl.DataFrame(
        [{"account_id": account, "_extracted_at": FETCHED, **row} for row in rows],
        schema=table.polars_schema,
    ).with_columns(date=pl.lit(day))
    lake.publish(table, frame, [day], [account])
    lake.publish_current(table, frame, day, [account])


def log(lake: Lake, rows: list[dict]) -> None:
    """Account a's change log as a service sends it, typed as a run types it, published."""
    content = orjson.dumps({"object": "list", "data": rows, "has_more": False})
    days = sorted(row["changed_at"][:10] for row in rows)
    asked = {"start_date": days[0], "end_date": days[-1]}
    page = Page("/v1/advertising-changes", asked, orjson.loads(content), content)
    frame = CHANGE_LOG.frame([("log", page)], "a", FETCHED, Context(TODAY, b"k" * 32))
    lake.publish(CHANGES, frame, sorted(set(frame["date"])), ["a"])


def history(home: Path) -> list[dict]:
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        return records(
            con,
            "SELECT id, valid_from, valid_to, is_current, previous_snapshot, snapshots, "
            "changed_columns, state, budget_amount, delivery_reasons, logged_changes, "
            "logged_fields, change_ids FROM history_campaigns ORDER BY account_id, id, valid_from",
        )


def interval(id_, start, end, previous, seen, changed, state, budget=None, reasons=None, **log):
    return {
        "id": id_,
        "valid_from": start,
        "valid_to": end,
        "is_current": end is None,
        "previous_snapshot": previous,
        "snapshots": seen,
        "changed_columns": changed,
        "state": state,
        "budget_amount": budget,
        "delivery_reasons": reasons,
        "logged_changes": log.get("logged", 0),
        "logged_fields": log.get("fields"),
        "change_ids": log.get("ids"),
    }


def test_the_history_models_are_the_registrys_current_state_tables_as_written():
    """Each current-state table has its model, key and attributes from the registry; the files
    on disk are what `python -m warehouse.history_models` writes (run it after a registry
    change)."""
    for path, text in expected_files().items():
        assert path.exists() and path.read_text() == text, f"stale: {path.name}"
    assert key_of(TABLES["cluster_keywords"]) == ["cluster", "polarity", "keyword"]
    assert "_extracted_at" not in attributes_of(CAMPAIGNS)
    assert {"id", "date"}.isdisjoint(attributes_of(CAMPAIGNS))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Lake]:
    """Account a's campaigns over five snapshots, account b's over two, with a's change log;
    the warehouse built after the fourth of a's snapshots, then again after the fifth."""
    root = tmp_path_factory.mktemp("history")
    home, lake = root / "home", Lake(root / "lake")
    home.mkdir()
    c1 = {"id": "c1", "state": "ENABLED", "budget_amount": 10, "delivery_reasons": []}
    c2 = {"id": "c2", "state": "PAUSED", "delivery_reasons": ["CAMPAIGN_PAUSED"]}
    take(lake, D[0], "a", [c1, c2])
    take(lake, D[1], "a", [c1, c2])
    take(lake, D[2], "a", [{**c1, "state": "PAUSED"}])  # c2 absent from this snapshot
    take(lake, D[3], "a", [{**c1, "state": "PAUSED", "budget_amount": 12}, c2])
    take(lake, D[1], "b", [c1])  # same id, other account: its own history
    take(lake, D[3], "b", [c1])
    # The changed entity's field is not named by the spec (4.8 names the filter `entity`):
    # the rows name it each way a service may.
    log(
        lake,
        [
            # Applied on the day before D[2]'s snapshot: made D[2]'s state.
            {"id": "x1", "changed_at": "2026-11-19T10:00:00Z", "entity": "c1",
             "field": "state", "result": "applied", "source": "front"},
            # Refused by the marketplace: changed nothing.
            {"id": "x2", "changed_at": "2026-11-19T11:00:00Z", "entity_id": "c1",
             "field": "state", "result": "failed", "source": "front"},
            # Another campaign's change.
            {"id": "x3", "changed_at": "2026-11-20T09:00:00Z", "entity_id": "c9",
             "field": "state", "result": "applied", "source": "front"},
            # On D[2] itself, after its snapshot: made D[3]'s budget.
            {"id": "x4", "changed_at": "2026-11-20T14:00:00Z", "entityId": "c1",
             "field": "dailyBudget", "result": "applied", "source": "public-api"},
        ],
    )  # fmt: skip
    build_warehouse(home, lake, TABLES.values())
    return home, lake


def test_an_interval_per_change_absence_closes_one_and_the_log_says_which_change(built):
    home, _ = built
    assert history(home) == [
        interval("c1", D[0], D[2], None, 2, None, "ENABLED", 10, []),
        interval("c1", D[2], D[3], D[1], 1, ["state"], "PAUSED", 10, [], logged=1,
                 fields=["state"], ids=["x1"]),
        interval("c1", D[3], None, D[2], 1, ["budget_amount"], "PAUSED", 12, [], logged=1,
                 fields=["dailyBudget"], ids=["x4"]),
        interval("c2", D[0], D[2], None, 2, None, "PAUSED", None, ["CAMPAIGN_PAUSED"]),
        interval("c2", D[3], None, D[2], 1, [], "PAUSED", None, ["CAMPAIGN_PAUSED"]),
        interval("c1", D[1], None, None, 2, None, "ENABLED", 10, []),
    ]  # fmt: skip


def test_a_new_snapshot_is_read_by_its_day_and_ends_what_it_no_longer_holds(built, tmp_path):
    """The next build reads only the new day of the snapshots, and gives the history a build
    from nothing gives; a list column's change (delivery reasons) starts an interval."""
    home, lake = built
    paused = {"id": "c1", "state": "PAUSED", "budget_amount": 12}
    take(lake, D[4], "a", [{**paused, "delivery_reasons": ["CAMPAIGN_PAUSED"]}])
    again = build_warehouse(home, lake, TABLES.values())
    assert read_days(again)["campaigns_snapshots"] == 1
    rows = history(home)
    assert [(r["id"], r["valid_from"], r["valid_to"]) for r in rows if r["id"] == "c1"][1:4] == [
        ("c1", D[2], D[3]),
        ("c1", D[3], D[4]),
        ("c1", D[4], None),
    ]
    assert rows[3]["changed_columns"] == ["delivery_reasons"]
    assert [r for r in rows if r["id"] == "c2"][-1]["valid_to"] == D[4]  # absent on D[4]
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    build_warehouse(fresh, lake, TABLES.values())
    assert history(fresh) == rows


def optimized(day: date, budget: int) -> dict:
    """A campaign the optimizer manages, as the snapshot of `day` holds it: stamped with the
    date of the night's run (spec 2.2 `optimizeDate`, spec 8), whatever it changed."""
    return {
        "id": "c1",
        "state": "ENABLED",
        "budget_amount": budget,
        "optimization_config_ai_enabled": True,
        "optimization_config_objective_type": "ACOS",
        "optimization_config_optimize_date": str(day - timedelta(days=1)),
        "optimization_config_optimizing_since": "2026-09-08",
    }


def test_the_optimizers_nightly_stamp_opens_no_interval_a_budget_change_does(tmp_path):
    """Four daily snapshots of a campaign the optimizer manages, each stamped with the night's
    run: one interval until its budget moves (21 to 22), one after, each showing the stamp of
    its last snapshot. The configuration a workflow's campaign carries (JSON, its own
    `optimizeDate` inside) alike: a new interval only where something else in it changed."""
    home, lake = tmp_path / "home", Lake(tmp_path / "lake")
    home.mkdir()
    for day in D[:4]:
        take(lake, day, "a", [optimized(day, 21 if day < D[2] else 22)])
        config = {
            "objective": {"type": "ACOS", "value": 0.25 if day < D[3] else 0.3},
            "optimizeDate": str(day - timedelta(days=1)),
        }
        processed = {"workflow": "w1", "campaign": "c1", "optimization_config": json.dumps(config)}
        take(lake, day, "a", [processed], TABLES["workflow_campaigns"])
    build_warehouse(home, lake, TABLES.values())
    with duckdb.connect(str(home / WAREHOUSE_FILE), read_only=True) as con:
        campaigns = con.sql(
            "SELECT valid_from, valid_to, snapshots, changed_columns, budget_amount, "
            "optimization_config_optimize_date FROM history_campaigns ORDER BY valid_from"
        ).fetchall()
        configs = con.sql(
            "SELECT valid_from, valid_to, snapshots, changed_columns, "
            "optimization_config->>'$.objective.value', optimization_config->>'$.optimizeDate' "
            "FROM history_workflow_campaigns ORDER BY valid_from"
        ).fetchall()
    assert campaigns == [
        (D[0], D[2], 2, None, 21, str(D[0])),
        (D[2], None, 2, ["budget_amount"], 22, str(D[2])),
    ]
    assert configs == [
        (D[0], D[3], 3, None, "0.25", str(D[1])),
        (D[3], None, 1, ["optimization_config"], "0.3", str(D[2])),
    ]


def test_history_of_the_shared_run_follows_the_change_log(request):
    """Against the sandbox, on the marts' shared run (its campaigns and ad groups snapshotted a
    week before too): a campaign or ad group whose record was updated between the two snapshots
    has exactly the change log's applied changes of the days between, in order, and every such
    change shows in the history. Nothing else opens an interval: the optimizer's nightly run
    date moves on every managed campaign, and its current interval shows the latest."""
    with duckdb.connect(str(shared_run(request) / WAREHOUSE_FILE), read_only=True) as con:
        for table, kind in (("campaigns", "campaign"), ("adgroups", "adgroup")):
            changed = con.sql(
                f"SELECT id, changed_columns, change_ids FROM history_{table} "
                "WHERE previous_snapshot IS NOT NULL"
            ).fetchall()
            logged = con.sql(
                "SELECT entity_id, list(id ORDER BY changed_at, id) FROM advertising_changes "
                "WHERE entity_type = ? AND result = 'applied' AND date >= ? AND date < ? "
                "GROUP BY entity_id",
                params=[kind, HISTORY_SINCE, TODAY],
            ).fetchall()
            updated = {id_: ids for id_, columns, ids in changed if "updated_at" in columns}
            assert updated and updated == dict(logged), table
            assert [c for _, c, _ in changed if "updated_at" not in c] == [], table
        [(states,)] = con.sql(
            "SELECT count(*) FROM history_campaigns WHERE list_contains(changed_columns, 'state')"
        ).fetchall()
        assert states >= 1
        stamps = con.sql(
            "SELECT DISTINCT optimization_config_optimize_date FROM history_campaigns "
            "WHERE is_current AND optimization_config_optimize_date IS NOT NULL"
        ).fetchall()
        assert stamps == [(str(TODAY - timedelta(days=1)),)]
