"""Dagster records every run a user makes, where the UI reads it.

`adwh run` and `adwh rebuild` write to the instance under `$ADWH_HOME/dagster` (a run of the
tables, then the warehouse location's build); the UI (`adwh ui`: `dg dev` with
DAGSTER_HOME there) opens the same storage. Each partition's
materialization carries its own rows, the last the run's figures too; a run that changes tables
without the warehouse gets the warehouse rebuilt by the automation sensor.
"""

import shutil
from datetime import date
from pathlib import Path

import dagster as dg
import duckdb
import pytest
import yaml

from assets.definitions import defs
from assets.instance import CONFIG, PROJECT_ROOT, dagster_home
from assets.marts import MANIFEST, MANIFEST_PROJECT, warehouse_marts
from assets.resources import WarehouseResource
from assets.retries import AUTO_RETRY_TAG, WILL_RETRY_TAG
from assets.warehouse_definitions import defs as warehouse_defs
from bench import scenarios
from launcher.cli import main
from tests.conftest import TODAY, copy_of_a_run

SPAN = ("2026-11-18", "2026-11-20")


def ui_instance(monkeypatch: pytest.MonkeyPatch) -> dg.DagsterInstance:
    """The instance `adwh ui` (`dg dev`) opens: Dagster's own, from its DAGSTER_HOME."""
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home()))
    return dg.DagsterInstance.get()


@pytest.fixture
def ran(home: Path, embedded) -> Path:
    return copy_of_a_run(home, ["run", "--start", SPAN[0], "--end", SPAN[1]])


def materializations(instance: dg.DagsterInstance, table: str) -> list[dg.EventLogRecord]:
    return list(instance.fetch_materializations(dg.AssetKey(table), limit=1000).records)


def test_the_ui_sees_the_clis_runs_partitions_checks_and_metadata(ran, monkeypatch):
    with ui_instance(monkeypatch) as instance:
        runs = instance.get_runs()  # newest first: the build after the run of the tables
        assert [(run.tags["adwh/command"], run.job_name) for run in runs] == [
            ("run", "warehouse"),
            ("run", "daily"),
        ]
        assert all(run.is_success for run in runs)
        # the daemon of `adwh ui` retries the runs it launches (a local `adwh backfill`'s) as
        # the deployment's does; never the CLI's, whose exit status has told how it ended
        deployed = yaml.safe_load((PROJECT_ROOT / "deploy" / "dagster.yaml").read_text())
        assert instance.run_retries_enabled and instance.run_retries_retry_on_asset_or_op_failure
        assert instance.run_retries_max_retries == deployed["run_retries"]["max_retries"] > 0
        assert {run.tags["dagster/max_retries"] for run in runs} == {"0"}
        partitions = instance.get_materialized_partitions(dg.AssetKey("campaign_metrics"))
        assert partitions == set(SPAN) | {"2026-11-19"}
        contract = dg.AssetCheckKey(dg.AssetKey("campaign_metrics"), "contract")
        (latest,) = instance.event_log_storage.get_asset_check_execution_history(contract, 1)
        assert latest.status.value == "SUCCEEDED"
        assert materializations(instance, "warehouse_tables")
        assert materializations(instance, "campaigns")[0].asset_materialization.metadata["rows"]
    assert (ran / "dagster" / "history" / "runs.db").exists()  # Dagster's own SQLite storage
    assert (ran / "dagster" / "dagster.yaml").read_text() == CONFIG.read_text()


def test_each_mart_shows_every_column_with_its_type_and_the_dbt_description(ran, monkeypatch):
    """The materialization carries every column DuckDB holds, typed by DuckDB and described by
    the dbt docs (the glossary's words rendered, not the doc() call)."""
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        held = con.sql(
            "SELECT column_name, data_type FROM information_schema.columns "
            "WHERE table_name = 'mart_account_daily' ORDER BY ordinal_position"
        ).fetchall()
    documented = MANIFEST["nodes"][f"model.{MANIFEST_PROJECT}.mart_account_daily"]["columns"]
    with ui_instance(monkeypatch) as instance:
        (latest,) = materializations(instance, "mart_account_daily")
    schema = latest.asset_materialization.metadata["dagster/column_schema"].value
    assert [(c.name, c.type) for c in schema.columns] == held
    assert [name for name, _ in held] == list(documented)
    for column in schema.columns:
        assert column.description == documented[column.name]["description"], column.name
        assert "doc(" not in column.description and len(column.description) > 20, column.name


def test_each_partition_reports_its_own_rows(ran, monkeypatch):
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        counted = dict(
            con.sql(
                "SELECT strftime(date, '%Y-%m-%d'), count(*) FROM campaign_metrics GROUP BY 1"
            ).fetchall()
        )
    with ui_instance(monkeypatch) as instance:
        reported = {
            record.partition_key: record.asset_materialization.metadata["rows"].value
            for record in materializations(instance, "campaign_metrics")
        }
    assert reported == counted
    assert len(set(reported.values())) > 1  # the sandbox's days differ: not the run's total


def test_the_runs_own_figures_are_on_its_last_partition_only(ran, monkeypatch):
    """Requests, pages, the range: what the run did is on the partition the UI shows as the
    latest, not repeated on every partition (hundreds of events per range run)."""
    with ui_instance(monkeypatch) as instance:
        records = materializations(instance, "campaign_metrics")
    carrying = [r.partition_key for r in records if "requests" in r.asset_materialization.metadata]
    assert carrying == [SPAN[1]]
    last = next(r.asset_materialization.metadata for r in records if r.partition_key == SPAN[1])
    assert last["start"].value == SPAN[0] and last["end"].value == SPAN[1]


def test_rebuild_is_a_run_of_the_same_job_that_sends_nothing_and_gives_the_runs_warehouse(
    ran, embedded, monkeypatch
):
    """A rebuild a few days later, the lake and the warehouse gone: a run of the `daily` job
    recorded as a rebuild, sending nothing. The run's current-state tables were fetched on its
    reference date (after the range); the rebuild of the same range from raw alone takes them
    from that fetch, not from nothing. Its reconciliation compares nothing, a warning in the
    UI: nothing is told to the alert destinations."""
    before = table_counts(ran)
    shutil.rmtree(ran / "lake")
    (ran / "warehouse.duckdb").unlink()
    monkeypatch.setenv("ADWH_TODAY", "2026-11-26")  # rebuilt a few days later
    embedded.requests.clear()
    with scenarios.webhook() as (url, told):
        monkeypatch.setenv("ADWH_ALERT_WEBHOOK_URL", url)
        assert main(["rebuild", "--start", SPAN[0], "--end", SPAN[1]]) == 0
    assert embedded.requests == [] and told == []
    assert table_counts(ran) == before
    assert before["campaigns"] > 0 and before["mart_cluster_daily"] > 0
    with ui_instance(monkeypatch) as instance:
        runs = instance.get_runs()
        assert sorted((run.tags["adwh/command"], run.job_name) for run in runs) == [
            ("rebuild", "daily"),
            ("rebuild", "warehouse"),
            ("run", "daily"),
            ("run", "warehouse"),
        ]
        assert all(run.is_success for run in runs)


def table_counts(home: Path) -> dict[str, int]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        names = [
            row[0] for row in con.sql("SELECT table_name FROM information_schema.tables").fetchall()
        ]
        return {n: con.execute(f'SELECT count(*) FROM "{n}"').fetchone()[0] for n in names}


def refresh_requests(instance: dg.DagsterInstance) -> list[dg.RunRequest]:
    sensor = warehouse_defs.resolve_sensor_def("warehouse_refresh")
    with dg.build_sensor_context(instance=instance, definitions=warehouse_defs) as context:
        return sensor.evaluate_tick(context).run_requests or []


@pytest.mark.slow(seconds=50)
def test_a_run_of_tables_alone_gets_the_warehouse_rebuilt_once_nothing_runs(home, embedded):
    """As a backfill or the accounts' runs do: the sensor, on by default, requests the whole
    warehouse once tables changed and no run is queued, in progress or about to be retried;
    not before any table, not after its own build."""
    sensor = warehouse_defs.resolve_sensor_def("warehouse_refresh")
    assert sensor.default_status.value == "RUNNING"
    tables = defs.resolve_job_def("daily")
    with dg.instance_for_test() as instance:
        assert refresh_requests(instance) == []
        metrics_only = tables.execute_in_process(
            instance=instance,
            partition_key="2026-11-21",
            asset_selection=[dg.AssetKey("campaign_metrics")],
        )
        assert metrics_only.success
        pending = instance.create_run_for_job(
            defs.resolve_job_def("extract"), status=dg.DagsterRunStatus.NOT_STARTED
        )
        assert refresh_requests(instance) == []  # another account's run is still to come
        instance.delete_run(pending.run_id)
        failed = instance.create_run_for_job(
            defs.resolve_job_def("extract"),
            status=dg.DagsterRunStatus.FAILURE,
            tags={WILL_RETRY_TAG: "true"},
        )
        assert refresh_requests(instance) == []  # its retry is promised, not yet launched
        instance.add_run_tags(failed.run_id, {AUTO_RETRY_TAG: "its-retry"})
        (request,) = refresh_requests(instance)
        # a run of the `warehouse` job: every model (it is one file), named so in the UI
        assert request.job_name in (None, "warehouse") and request.asset_selection is None
        assert sensor.job_name == "warehouse"
        refresh = dg.materialize(
            [warehouse_marts], instance=instance, resources={"warehouse": WarehouseResource()}
        )
        assert refresh.success
        assert refresh_requests(instance) == []


def test_the_schedule_is_off_after_set_up_and_names_how_to_start_it():
    schedule = defs.resolve_schedule_def("daily_schedule")
    assert schedule.default_status is dg.DefaultScheduleStatus.STOPPED
    assert "dagster schedule start daily_schedule" in schedule.description
    assert date.fromisoformat(SPAN[1]) < TODAY


def test_a_selection_of_marts_builds_those_and_keeps_the_others(ran, monkeypatch):
    """The marts can be materialized a few at a time, as the UI offers: dbt builds the ones
    selected (with their tests), the others stay in the file as they were, and a file that
    needed every model built from nothing is not taken for the project's after it."""
    with duckdb.connect(str(ran / "warehouse.duckdb")) as con:
        con.execute("DELETE FROM _dbt_project")  # as if the project had changed since
    before = marts_and_tables(ran)
    with ui_instance(monkeypatch) as instance:
        result = dg.materialize(
            [warehouse_marts],
            instance=instance,
            resources={"warehouse": WarehouseResource()},
            selection=["mart_account_daily"],
        )
        assert result.success
    (built,) = result.get_asset_materialization_events()
    assert built.asset_key == dg.AssetKey("mart_account_daily")
    assert built.materialization.metadata["dbt status"].value == "success"
    checks = {e.asset_check_key.name for e in result.get_asset_check_evaluations()}
    assert checks and all("mart_account_daily" in name for name in checks)
    assert marts_and_tables(ran) == before
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM _dbt_project").fetchone() == (0,)


def marts_and_tables(home: Path) -> dict[str, int]:
    """What analysts read, not the build's own bookkeeping (`_lake_reloads` …)."""
    return {name: rows for name, rows in table_counts(home).items() if not name.startswith("_")}
