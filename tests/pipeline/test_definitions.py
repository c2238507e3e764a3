"""The Dagster definitions as the UI shows them: assets, checks, jobs, schedules."""

import os
import subprocess
import sys
from collections import Counter
from datetime import date, datetime, timedelta
from pathlib import Path

import dagster as dg
import yaml

from assets.definitions import daily_schedule, defs
from assets.instance import open_instance
from assets.partitions import RANGE_END_TAG, RANGE_START_TAG, range_tags
from assets.resources import ServiceResource, WarehouseResource
from assets.warehouse_definitions import defs as warehouse_defs
from pipelines.catch_up import CATCH_UP_TAG
from pipelines.fanout import ACCOUNTS_TAG, GUESSES_PER_RUN, KEY_TAG
from pipelines.sources import SOURCES
from sandbox.service import SandboxService
from tests.conftest import FIRST_DAY, SECRET, TODAY, serving
from warehouse.coverage import record_coverage
from warehouse.lake import Lake

ROOT = Path(__file__).resolve().parents[2]


def test_definitions_load_with_both_assets_and_their_contract_checks():
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {"campaigns", "campaign_metrics"} <= keys
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert ("campaign_metrics", "contract") in checks
    assert graph.get(dg.AssetKey("campaign_metrics")).partitions_def is not None


def evaluate_schedule(when: datetime) -> list[dg.RunRequest]:
    """The daily schedule's tick at `when`, as the daemon evaluates it on the home's instance."""
    resources = {"service": ServiceResource(), "warehouse": WarehouseResource()}
    with (
        open_instance() as instance,
        dg.build_schedule_context(
            instance=instance, scheduled_execution_time=when, resources=resources
        ) as context,
    ):
        return daily_schedule.evaluate_tick(context).run_requests


def held_complete(home: Path, accounts: list[str], last: date) -> None:
    """The lake holds every dated table of `accounts` complete from the first day to `last`."""
    dated = [o.schema.name for s in SOURCES if s.dated for o in s.outputs]
    spans = {(a, name): [(FIRST_DAY, last)] for a in accounts for name in dated}
    record_coverage(Lake(home / "lake"), spans)


def test_daily_schedule_runs_after_the_optimizer_over_yesterday_and_the_lookback(home, embedded):
    assert daily_schedule.cron_schedule == "0 6 * * *"
    assert daily_schedule.job_name == "extract"
    held_complete(home, [embedded.accounts[0].id], date(2026, 11, 21))
    (request,) = evaluate_schedule(datetime(2026, 11, 23, 6))
    assert request.tags[RANGE_START_TAG] == "2026-11-20"
    assert request.tags[RANGE_END_TAG] == "2026-11-22"
    assert CATCH_UP_TAG in request.tags


def test_daily_schedule_reads_back_the_lookback_days_asked(home, embedded, monkeypatch):
    monkeypatch.setenv("ADWH_LOOKBACK_DAYS", "14")
    held_complete(home, [embedded.accounts[0].id], date(2026, 11, 22))
    (request,) = evaluate_schedule(datetime(2026, 11, 23, 6))
    assert request.tags[RANGE_START_TAG] == "2026-11-09"
    assert request.tags[RANGE_END_TAG] == "2026-11-22"


def test_daily_schedule_runs_a_new_account_from_the_start_date(home, embedded):
    (request,) = evaluate_schedule(datetime(2026, 11, 23, 6))
    assert request.tags[RANGE_START_TAG] == FIRST_DAY.isoformat()


def test_daily_schedule_packs_the_accounts_the_key_reaches_into_runs(home, monkeypatch):
    """Twelve small accounts the lake knows nothing of yet, fetched from a first day three
    days back: two runs, as many guesses as a run takes and the two left."""
    monkeypatch.setenv("ADWH_START_DATE", "2026-11-20")
    agency = SandboxService("small", TODAY, key=SECRET, clients=12)
    with serving(agency) as url:
        monkeypatch.setenv("ADS_API_BASE_URL", url)
        monkeypatch.setenv("ADS_API_KEY", SECRET)
        requests = evaluate_schedule(datetime(2026, 11, 23, 6))
    packs = [r.tags[ACCOUNTS_TAG].split(",") for r in requests]
    assert sorted(len(pack) for pack in packs) == [2, GUESSES_PER_RUN]
    assert sorted(a for pack in packs for a in pack) == sorted(a.id for a in agency.accounts)
    assert len({r.run_key for r in requests}) == 2
    (key,) = {r.tags[KEY_TAG] for r in requests}
    assert SECRET not in key and len(key) == 12
    assert {r.tags[RANGE_END_TAG] for r in requests} == {"2026-11-22"}


def test_workspace_and_instance_files_point_at_the_two_code_locations():
    """The tables' location keeps the name an instance keys its schedules' state by; the
    warehouse's is apart (its dbt import), in the local workspace and the deployment's alike."""
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    targets = [entry["python_module"] for entry in workspace["load_from"]]
    assert [(t["module_name"], t["attribute"], t["location_name"]) for t in targets] == [
        ("assets.definitions", "defs", "pipelines.definitions"),
        ("assets.warehouse_definitions", "defs", "warehouse"),
    ]
    deployed = yaml.safe_load((ROOT / "deploy" / "workspace.yaml").read_text())
    servers = [entry["grpc_server"]["host"] for entry in deployed["load_from"]]
    compose = yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"]
    commands = [compose[server]["command"] for server in servers]
    assert [
        "-m assets.definitions" in commands[0],
        "-m assets.warehouse_definitions" in commands[1],
    ] == [True, True]
    instance = yaml.safe_load((ROOT / "dagster.yaml").read_text())
    assert instance["telemetry"]["enabled"] is False
    assert "storage" not in instance  # Dagster's own SQLite storage, under DAGSTER_HOME


SNAPSHOT = Path(__file__).parent / "snapshots" / "definitions.json"


def definitions_outline() -> dict:
    """What the UI shows of each code location, as plain data: every asset with its group,
    kinds, partitioning and upstream assets; every check; every job, schedule and sensor."""
    return {"pipelines.definitions": outline_of(defs), "warehouse": outline_of(warehouse_defs)}


def outline_of(location: dg.Definitions) -> dict:
    graph = location.resolve_asset_graph()
    own = {
        key
        for asset in location.assets or []
        for key in (asset.keys if isinstance(asset, dg.AssetsDefinition) else [asset.key])
    }
    assets = {}
    for key in sorted(own):  # not another location's assets, which this one depends on
        node = graph.get(key)
        assets[key.to_user_string()] = {
            "group": node.group_name,
            "kinds": sorted(node.kinds),
            "partitioned": node.partitions_def is not None,
            "upstream": sorted(parent.to_user_string() for parent in node.parent_keys),
            "checks": sorted(check.name for check in node.check_keys),
        }
    return {
        "assets": assets,
        "jobs": sorted(job.name for job in location.resolve_all_job_defs()),
        "schedules": {
            s.name: {"cron": s.cron_schedule, "job": s.job_name, "status": s.default_status.value}
            for s in location.schedules or []
        },
        "sensors": {s.name: s.default_status.value for s in location.sensors or []},
    }


def test_the_definitions_match_their_snapshot():
    """A change to what the UI shows (an asset, a dependency, a check, a job, a schedule) must
    be deliberate: regenerate with `UPDATE_SNAPSHOTS=1 pytest tests/pipeline/test_definitions.py`
    and review the diff."""
    import json
    import os

    outline = definitions_outline()
    if os.environ.get("UPDATE_SNAPSHOTS"):
        SNAPSHOT.parent.mkdir(exist_ok=True)
        SNAPSHOT.write_text(json.dumps(outline, indent=1, sort_keys=True) + "\n")
    assert outline == json.loads(SNAPSHOT.read_text())


def test_every_job_runs_its_steps_in_the_runs_own_process():
    """Backfills run the implicit asset job: a process per step would start Dagster again for
    every extraction step of every small run."""
    for location in (defs, warehouse_defs):
        jobs = location.get_repository_def().get_all_jobs()
        assert any(job.name.startswith("__ASSET_JOB") for job in jobs)
        assert {job.executor_def.name for job in jobs} == {dg.in_process_executor.name}


# One extraction run, as the daemon's run worker would execute it: the definitions loaded in a
# fresh interpreter, the `extract` job run for a day against the embedded sandbox; then every
# module of the warehouse build, of dbt and of DuckDB that the process loaded.
EXTRACT_AND_LIST_BUILD_MODULES = """
import sys
import dagster as dg
from assets.definitions import defs
from pipelines.fanout import EXTRACT_JOB
from assets.partitions import range_tags
from datetime import date
day = date.fromisoformat(sys.argv[1])
with dg.DagsterInstance.ephemeral() as instance:
    result = defs.resolve_job_def(EXTRACT_JOB).execute_in_process(
        instance=instance, tags=range_tags(day, day), raise_on_error=False
    )
build = ("dbt", "dagster_dbt", "duckdb", "warehouse.build", "warehouse.marts", "warehouse.load")
print(result.success, sorted(m for m in sys.modules if m.startswith(build)))
"""


def test_an_extraction_run_loads_neither_dbt_nor_the_warehouse_build(home):
    """What an extraction run's process pays to start is the extraction's code: the build's
    (DuckDB, the loader, the marts, dbt and dagster-dbt, which imports it) loads in the
    warehouse's location, whose runs build (bench/startup.py)."""
    import subprocess
    import sys

    day = (TODAY - timedelta(days=1)).isoformat()
    out = subprocess.run(
        [sys.executable, "-c", EXTRACT_AND_LIST_BUILD_MODULES, day],
        capture_output=True,
        text=True,
    )
    assert out.stdout.split() == ["True", "[]"], out.stderr[-3000:]
    assert (home / "lake" / "campaign_metrics" / "_delta_log").is_dir()


def test_a_process_that_loaded_duckdb_before_the_definitions_ends_quietly():
    """The definitions freeze what is loaded out of the garbage collector; DuckDB's bindings
    would report their frozen objects as leaked at exit (`adwh demo` printed a page of it)."""
    import subprocess
    import sys

    code = "import duckdb, assets.definitions; duckdb.connect().sql('SELECT 1').fetchall()"
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert (ended.returncode, ended.stderr) == (0, "")


def test_a_process_of_the_pipeline_tells_polars_allocator_to_give_memory_back_unless_told():
    """`import assets` comes before Polars in every process of the pipeline (the CLI, the run
    workers): there jemalloc's configuration is set, and a value the user set is kept. Polars
    puts its own defaults before it, and jemalloc takes an option's last value."""
    probe = "import os, assets, polars; print(os.environ['_RJEM_MALLOC_CONF'])"
    clean = {k: v for k, v in os.environ.items() if k != "_RJEM_MALLOC_CONF"}
    said = subprocess.run([sys.executable, "-c", probe], env=clean, capture_output=True, text=True)
    assert said.stdout.strip().endswith(",dirty_decay_ms:0,muzzy_decay_ms:0"), said.stderr
    kept = {**clean, "_RJEM_MALLOC_CONF": "background_thread:true"}
    said = subprocess.run([sys.executable, "-c", probe], env=kept, capture_output=True, text=True)
    assert said.stdout.strip().endswith(",background_thread:true"), said.stderr
    assert "dirty_decay_ms:0" not in said.stdout


def test_a_ranged_run_plans_each_current_state_table_once_and_each_dated_one_a_day():
    """Dagster takes a ranged run's partitions from the asset of its last step in step-key
    order (assets/current.py): were the current state's step last but one, every
    current-state table would be planned once per day of the range, in as many writes."""
    for name in ("daily", "extract"):
        job = defs.resolve_job_def(name)
        days = job.partitions_def.get_partition_keys()[:5]
        start, end = date.fromisoformat(days[0]), date.fromisoformat(days[-1])
        with dg.instance_for_test() as instance:
            run = instance.create_run_for_job(
                job, tags=range_tags(start, end), status=dg.DagsterRunStatus.NOT_STARTED
            )
            planned = instance.get_records_for_run(
                run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED, limit=10_000
            ).records
        per_table = Counter(
            r.event_log_entry.dagster_event.asset_key.to_user_string() for r in planned
        )
        assert per_table["campaigns"] == 1, name
        assert per_table["campaign_metrics"] == len(days), name
