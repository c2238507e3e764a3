"""Spec 4.9's read endpoints in the sandbox: workflows and the campaigns each really processes,
workflow performance, tasks and task items, and the stores' change log."""

from collections import Counter
from datetime import date, datetime, timedelta

import pytest

from sandbox.service import SandboxService
from tests.sandbox.conftest import TODAY, ask, every_record, every_row, ok
from warehouse.spec import (
    STORE_CHANGES_RETENTION_DAYS,
    TASK_ENTITY_TYPES,
    TASK_ITEM_STATUSES,
    TASK_PRIORITIES,
    WORKFLOW_EMPTY_REASONS,
)

OCTOBER = {"start_date": "2026-10-01", "end_date": "2026-10-31", "granularity": "daily"}


@pytest.fixture(scope="module")
def sandbox() -> SandboxService:
    return SandboxService("medium", TODAY)


def workflows(service: SandboxService) -> list[dict]:
    return ok(service, "/v1/workflows", limit=100)["data"]


def test_workflows_list_the_accounts_own_with_their_resolved_configuration(sandbox):
    listed = workflows(sandbox)
    assert len({w["id"] for w in listed}) == len(listed) >= 3
    for workflow in listed:
        assert {"name", "name_key", "description_key", "active", "variables"} <= set(workflow)
        assert all({"value", "overridden"} <= set(v) for v in workflow["variables"])
        assert ok(sandbox, f"/v1/workflows/{workflow['id']}") == workflow
    kind = listed[1]["description_key"]
    assert [w["id"] for w in ok(sandbox, "/v1/workflows", description_key=kind)["data"]] == [
        listed[1]["id"]
    ]
    active = ok(sandbox, "/v1/workflows", active="false")["data"]
    assert active and not any(w["active"] for w in active)


def test_a_workflows_campaigns_are_those_its_runs_change(sandbox):
    """Membership agrees with the change log: every campaign a workflow's nightly runs
    changed is one it processes, and each processed campaign is processed by one workflow."""
    seen: Counter[str] = Counter()
    for workflow in workflows(sandbox):
        body = ok(sandbox, f"/v1/workflows/{workflow['id']}/campaigns", limit=100)
        members = {row["id"] for row in body["data"]}
        seen.update(members)
        if not members:
            assert body["empty_reason"] in WORKFLOW_EMPTY_REASONS
            continue
        assert body["empty_reason"] is None
        assert all("gate" in row and row["optimizationConfig"] for row in body["data"])
        changes = ok(
            sandbox,
            "/v1/advertising-changes",
            source="workflow",
            start_date="2026-11-01",
            end_date="2026-11-22",
            limit=100,
        )["data"]
        mine = {c["campaign"] for c in changes if c["actor"] == f"workflow:{workflow['id']}"}
        assert mine <= members
    assert seen and set(seen.values()) == {1}
    reasons = {
        ok(sandbox, f"/v1/workflows/{w['id']}/campaigns").get("empty_reason")
        for w in workflows(sandbox)
    }
    assert "no-itera-campanas" in reasons


def test_a_workflow_that_is_not_the_accounts_is_404(sandbox):
    assert ask(sandbox, "/v1/workflows/" + "0" * 24 + "/campaigns")[0] == 404
    assert ask(sandbox, "/v1/workflows/" + "0" * 24 + "/performance", **OCTOBER)[0] == 404


def test_workflow_performance_is_its_campaigns_metrics_beside_their_objective(sandbox):
    for workflow in workflows(sandbox)[:3]:
        path = f"/v1/workflows/{workflow['id']}/performance"
        rows = every_row(sandbox, path, **OCTOBER)
        members = {
            row["id"]: row["optimizationConfig"]
            for row in ok(sandbox, f"/v1/workflows/{workflow['id']}/campaigns", limit=100)["data"]
        }
        assert rows and {row["campaign"] for row in rows} <= set(members)
        for row in rows:
            config = members[row["campaign"]]
            assert row["objective_type"] == config["objective"]["type"]
            assert row["objective_value"] == config["objective"]["value"]
            assert row["optimizing_since"] == config["optimizingSince"]
        campaign = rows[0]["campaign"]
        metrics = every_row(sandbox, "/v1/campaign-metrics", campaign=campaign, **OCTOBER)
        measures = ("date", "currency", "impressions", "clicks", "cost", "sales", "acos")
        assert sorted(tuple(r[m] for m in measures) for r in metrics) == sorted(
            tuple(r[m] for m in measures) for r in rows if r["campaign"] == campaign
        )


def test_workflow_performance_requires_its_window_and_caps_it(sandbox):
    path = f"/v1/workflows/{workflows(sandbox)[0]['id']}/performance"
    status, body = ask(sandbox, path)
    assert status == 400 and body["error"]["param"] == "start_date"
    status, body = ask(
        sandbox, path, start_date="2026-01-01", end_date="2026-11-01", granularity="daily"
    )
    assert status == 400 and "92" in body["error"]["message"]


def test_tasks_and_their_items(sandbox):
    tasks = ok(sandbox, "/v1/tasks", limit=100)["data"]
    items = ok(sandbox, "/v1/task-items", limit=100)
    assert tasks and items["data"]
    assert {t["priority"] for t in tasks} <= set(TASK_PRIORITIES)
    every_item = every_record(sandbox, "/v1/task-items")
    by_task = Counter(item["task"] for item in every_item)
    assert {t["id"]: t["itemCount"] for t in tasks} == dict(by_task)
    assert max(by_task.values()) <= 50
    assert {i["entityType"] for i in every_item} <= set(TASK_ENTITY_TYPES)
    assert {i["status"] for i in every_item} == set(TASK_ITEM_STATUSES)
    for item in every_item:
        assert (item["fieldPath"] is not None) == (item["entityType"] == "campaigns")
        if item["appliedAt"] or item["applyError"]:
            assert item["status"] == "approved" and item["fieldPath"]
    assert any(i["appliedAt"] for i in every_item) and any(i["applyError"] for i in every_item)
    task = tasks[0]["id"]
    assert {i["task"] for i in ok(sandbox, "/v1/task-items", task=task)["data"]} == {task}
    approved = ok(sandbox, "/v1/task-items", status="approved", entity_type="campaigns")["data"]
    assert approved and {(i["status"], i["entityType"]) for i in approved} == {
        ("approved", "campaigns")
    }
    assert ok(sandbox, f"/v1/task-items/{approved[0]['id']}") == approved[0]
    assert ok(sandbox, f"/v1/tasks/{task}") == tasks[0]


def test_tasks_and_workflows_need_their_scopes(sandbox):
    sandbox.add_key("catalog-only", scopes=frozenset({"catalog:read", "campaigns:read"}))
    for path in ("/v1/tasks", "/v1/task-items", "/v1/workflows", "/v1/platform-changes"):
        status, body = ask(sandbox, path, key="catalog-only")
        assert status == 403 and body["error"]["code"] == "missing_scope", path


def test_the_store_change_log_keeps_twelve_months_newest_first(sandbox):
    rows = every_record(sandbox, "/v1/platform-changes")
    moments = [datetime.fromisoformat(r["changed_at"]) for r in rows]
    assert moments == sorted(moments, reverse=True)
    oldest = TODAY - timedelta(days=STORE_CHANGES_RETENTION_DAYS)
    assert min(m.date() for m in moments) >= oldest
    assert any("@" in r["actor"] for r in rows)  # a person's e-mail: the pipeline hides it
    week = ok(
        sandbox, "/v1/platform-changes", start_date="2026-11-01", end_date="2026-11-07", limit=100
    )["data"]
    assert week and all(
        date(2026, 11, 1) <= datetime.fromisoformat(r["changed_at"]).date() <= date(2026, 11, 7)
        for r in week
    )


def test_a_variant_store_log_ignores_the_dates():
    variant = next(
        n
        for n in range(1, 7)
        if not SandboxService("small", TODAY, variant=n).variant.store_log_dated
    )
    service = SandboxService("small", TODAY, variant=variant)
    account = service.main_account.id if service.variant.agency else None
    status, body = ask(
        service,
        "/v1/platform-changes",
        account=account,
        start_date="2026-11-01",
        end_date="2026-11-01",
        limit=100,
    )
    assert status == 200
    days = {datetime.fromisoformat(r["changed_at"]).date() for r in body["data"]}
    assert len(days) > 1
