"""Campaign optimization history (spec 2.7 and 4.7) and how it joins the change log."""

from datetime import timedelta
from decimal import Decimal

import pytest

from tests.sandbox.conftest import TODAY, ask, is_money, ok

ROW_FIELDS = {
    "id",
    "entity_type",
    "adgroup",
    "first_bid",
    "last_bid",
    "net_change",
    "direction",
    "change_count",
    "first_change_at",
    "last_change_at",
    "last_reason",
    "last_scenario",
}
OTHER_FIELDS = {"entity_type", "entity_id", "change_type", "count", "last_change_at", "last_reason"}


def history(service, campaign: str, **params) -> dict:
    return ok(service, f"/v1/campaigns/{campaign}/optimization-history", **params)


def all_rows(service, campaign: str, **params) -> list[dict]:
    rows: list[dict] = []
    while True:
        page = history(service, campaign, limit=500, offset=len(rows), **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


@pytest.fixture(scope="module")
def histories(medium) -> dict[str, dict]:
    """The default (last 90 days) history of every campaign of the medium account."""
    return {c["id"]: history(medium, c["id"], limit=500) for c in medium.main_account.campaigns}


def configured(service) -> list[dict]:
    account = service.main_account
    return [c for i, c in enumerate(account.campaigns) if account.optimization_config(i)]


def test_only_campaigns_under_the_optimizer_have_a_history(medium, histories):
    account = medium.main_account
    for i, campaign in enumerate(account.campaigns):
        body = histories[campaign["id"]]
        config = account.optimization_config(i)
        managed = config and (
            config["linkedWorkflowDefinitionIds"] or not config["workflowsOptOut"]
        )
        if not managed:
            assert body["data"] == [] and body["other_changes"] == []
            assert body["total_count"] == 0 and body["summary"]["bid_changes"] == 0
    assert sum(bool(histories[c["id"]]["data"]) for c in configured(medium)) > 30


def test_rows_report_the_net_effect_per_target(medium, histories):
    account = medium.main_account
    targets = {t["id"]: t for t in account.targets}
    currencies = {c["id"]: c["budget"]["currency"] for c in account.campaigns}
    for campaign, body in histories.items():
        for row in body["data"]:
            assert set(row) == ROW_FIELDS and row["entity_type"] == "target"
            target = targets[row["id"]]
            assert target["campaign"] == campaign and row["adgroup"] == target["adGroup"]
            for name in ("first_bid", "last_bid", "net_change"):
                assert is_money(row[name], currencies[campaign])
            first, last = Decimal(row["first_bid"]), Decimal(row["last_bid"])
            assert Decimal(row["net_change"]) == last - first
            direction = "raised" if last > first else "lowered" if last < first else "unchanged"
            assert row["direction"] == direction
            assert row["change_count"] >= 1
            assert row["first_change_at"] <= row["last_change_at"]
            # The window ends at the reference date: the last bid is the target's bid now.
            assert Decimal(str(target["bid"])) == last


def test_summary_counts_the_rows(histories):
    for body in histories.values():
        rows, summary = body["data"], body["summary"]
        assert summary["targets_touched"] == body["total_count"] == len(rows)
        assert summary["bid_changes"] == sum(r["change_count"] for r in rows)
        for direction in ("raised", "lowered", "unchanged"):
            assert summary[direction] == sum(r["direction"] == direction for r in rows)
        assert summary["other_changes"] == sum(r["count"] for r in body["other_changes"])
        assert summary["window"] == {
            "start_date": str(TODAY - timedelta(89)),
            "end_date": str(TODAY),
        }


def test_other_changes_are_grouped_per_entity_and_type(histories):
    others = [row for body in histories.values() for row in body["other_changes"]]
    assert others
    types = {row["change_type"] for row in others}
    assert types == {
        "harvested_keyword",
        "negative_keyword",
        "placement_adjustment",
        "target_blocked",
        "target_quarantined",
    }
    for row in others:
        assert set(row) == OTHER_FIELDS and row["count"] >= 1
        assert row["entity_type"] in ("campaign", "adgroup", "target")


def test_a_raise_capped_back_the_same_night_is_unchanged_with_two_changes(medium):
    log = []
    for campaign in configured(medium):
        params = {"campaign": campaign["id"], "field": "bid", "result": "applied", "limit": 100}
        log += ok(medium, "/v1/advertising-changes", **params)["data"]
    pairs = {}
    for row in log:
        pairs.setdefault((row["entity_id"], row["changed_at"][:10]), []).append(row)
    capped = [rows for rows in pairs.values() if len(rows) == 2]
    assert capped
    for rows in capped:
        newest, oldest = rows  # the log is newest first
        assert newest["new_value"] == oldest["old_value"]
        day = oldest["changed_at"][:10]
        body = history(medium, oldest["campaign"], start_date=day, end_date=day)
        (row,) = [r for r in body["data"] if r["id"] == oldest["entity_id"]]
        assert (row["direction"], row["change_count"]) == ("unchanged", 2)
        assert row["net_change"] in ("0", "0.00") and row["last_reason"] == "acos_ceiling"


def test_history_joins_the_change_log_by_run(medium, histories):
    joined = 0
    for body in list(histories.values())[:60]:
        for row in body["data"][:3]:
            params = {"entity": row["id"], "field": "bid", "source": "workflow", "limit": 100}
            log = ok(medium, "/v1/advertising-changes", **params)["data"]
            last = [r for r in log if r["changed_at"] == row["last_change_at"]]
            assert last and last[0]["new_value"] == row["last_bid"]
            run = ok(medium, "/v1/advertising-changes", correlation_id=last[0]["correlation_id"])
            assert {r["changed_at"][:10] for r in run["data"]} == {row["last_change_at"][:10]}
            assert {r["source"] for r in run["data"]} == {"workflow"}
            joined += 1
    assert joined


def test_only_applied_changes_reach_the_history(medium, histories):
    failed = ok(medium, "/v1/advertising-changes", source="workflow", result="failed", limit=100)
    assert failed["data"]
    for row in failed["data"]:
        if row["field"] != "bid":
            continue
        body = history(
            medium,
            row["campaign"],
            start_date=row["changed_at"][:10],
            end_date=row["changed_at"][:10],
        )
        assert all(r["last_change_at"] != row["changed_at"] for r in body["data"])
    for campaign, body in histories.items():
        applied = ok(
            medium,
            "/v1/advertising-changes",
            campaign=campaign,
            field="bid",
            source="workflow",
            result="applied",
            start_date=str(TODAY - timedelta(89)),
            include_total="true",
            limit=1,
        )
        assert applied["total_count"] == body["summary"]["bid_changes"]


def test_limit_offset_and_order(medium, histories):
    campaign, body = max(histories.items(), key=lambda item: item[1]["total_count"])
    assert body["total_count"] > 3
    assert history(medium, campaign)["data"] == body["data"][:100]
    rows = all_rows(medium, campaign)
    paged, offset = [], 0
    while True:
        page = history(medium, campaign, limit=2, offset=offset)
        paged += page["data"]
        offset += 2
        if not page["has_more"]:
            break
    assert paged == rows
    stamps = [r["last_change_at"] for r in rows]
    assert stamps == sorted(stamps, reverse=True)
    ascending = all_rows(medium, campaign, order="asc")
    assert [r["last_change_at"] for r in ascending] == sorted(stamps)
    for limit in (0, 501):
        status, body = ask(medium, f"/v1/campaigns/{campaign}/optimization-history", limit=limit)
        assert status == 400 and body["error"]["param"] == "limit"
    assert ask(medium, f"/v1/campaigns/{campaign}/optimization-history", limit=500)[0] == 200


def test_the_window_is_capped_at_90_days(medium):
    campaign = configured(medium)[0]["id"]
    path = f"/v1/campaigns/{campaign}/optimization-history"
    end = TODAY - timedelta(1)
    assert ask(medium, path, start_date=str(end - timedelta(89)), end_date=str(end))[0] == 200
    status, body = ask(medium, path, start_date=str(end - timedelta(90)), end_date=str(end))
    assert status == 400 and "limit of 90 days" in body["error"]["message"]
    assert ask(medium, path, start_date=str(end), end_date=str(end - timedelta(1)))[0] == 400
    only_end = history(medium, campaign, end_date="2026-11-01")
    assert only_end["summary"]["window"] == {"start_date": "2026-08-04", "end_date": "2026-11-01"}


def test_a_window_before_the_history_is_empty(medium):
    campaign = configured(medium)[0]["id"]
    body = history(medium, campaign, start_date="2025-01-01", end_date="2025-03-01")
    assert body["data"] == [] and body["other_changes"] == [] and body["has_more"] is False
