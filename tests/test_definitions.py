"""The Dagster definitions as the UI shows them: assets, checks, jobs, schedules."""

from datetime import date, datetime
from pathlib import Path

import dagster as dg
import yaml

from pipelines.definitions import daily_schedule, defs
from pipelines.partitions import RANGE_END_TAG, RANGE_START_TAG, daily_range

ROOT = Path(__file__).resolve().parents[1]


def test_definitions_load_with_both_assets_and_their_contract_checks():
    graph = defs.resolve_asset_graph()
    keys = {key.to_user_string() for key in graph.get_all_asset_keys()}
    assert {"campaigns", "campaign_metrics"} <= keys
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    assert ("campaign_metrics", "contract") in checks
    assert graph.get(dg.AssetKey("campaign_metrics")).partitions_def is not None


def test_daily_schedule_runs_after_the_optimizer_over_yesterday_and_the_lookback():
    assert daily_schedule.cron_schedule == "0 6 * * *"
    start, end = daily_range(date(2026, 11, 23))
    assert (start, end) == (date(2026, 11, 20), date(2026, 11, 22))
    request = daily_schedule.evaluate_tick(
        dg.build_schedule_context(scheduled_execution_time=datetime(2026, 11, 23, 6))
    ).run_requests[0]
    assert request.tags[RANGE_START_TAG] == "2026-11-20"
    assert request.tags[RANGE_END_TAG] == "2026-11-22"


def test_workspace_and_instance_files_point_at_the_one_definitions_object():
    workspace = yaml.safe_load((ROOT / "workspace.yaml").read_text())
    target = workspace["load_from"][0]["python_module"]
    assert (target["module_name"], target["attribute"]) == ("pipelines.definitions", "defs")
    instance = yaml.safe_load((ROOT / "dagster.yaml").read_text())
    assert instance["telemetry"]["enabled"] is False
    assert instance["storage"]["sqlite"]["base_dir"].startswith("data/")
