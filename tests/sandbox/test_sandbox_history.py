"""Snapshots on consecutive reference dates: what moves between them, and why.

The warehouse's entity history compares the current-state lists of two daily runs (reference
dates R-1 and R) and joins campaigns' and ad groups' changes to the change log. Entity
attributes are dated from the first day of the reference date's quarter (`Account.anchor`), so
within a quarter two snapshots differ only by what really happened in between:

- campaigns and ad groups: the applied changes by people and programs the log shows (state,
  budget or default bid, name, `updatedAt`; a campaign's delivery fields follow its state);
- product ads: their delivery fields, which follow their campaign's and ad group's states;
- targets: `bid`, moved by the optimizer's nightly run (`optimizer.current_bid`), told by the
  log's `workflow` rows;
- a campaign's `optimizationConfig.optimizeDate`: the optimizer's last run, "now".

Tasks and task items do not move: they are dated from the anchor, show campaigns as they were
when created, and their statuses do not follow "now".
"""

from collections import defaultdict
from datetime import date, timedelta
from decimal import Decimal
from functools import cache
from itertools import pairwise

import pytest

from sandbox.restating import NO_RESTATING
from sandbox.service import SandboxService
from tests.sandbox.conftest import every_record, every_row

PATH = "/v1/advertising-changes"
LISTS = (
    "/v1/connections",
    "/v1/product-brands",
    "/v1/products",
    "/v1/marketplace-seller-products",
    "/v1/marketplace-vendor-products",
    "/v1/marketplace-advertising-products",
    "/v1/clusters",
    "/v1/portfolios",
    "/v1/campaigns",
    "/v1/adgroups",
    "/v1/targets",
    "/v1/product-ads",
    "/v1/search-terms",
    "/v1/workflows",
    "/v1/tasks",
    "/v1/task-items",
)
# Per list, the fields that may move within a quarter (see the module docstring).
MOVING = {
    "/v1/campaigns": {"state", "deliveryStatus", "deliveryReasons", "budget", "name", "updatedAt"},
    "/v1/adgroups": {"state", "defaultBid", "name", "updatedAt"},
    "/v1/targets": {"bid"},
    "/v1/product-ads": {"deliveryStatus", "deliveryReasons"},
}
# A record field → the change log's field.
LOGGED = {
    "state": "state",
    "budget": "dailyBudget",
    "defaultBid": "defaultBid",
    "name": "name",
}
# Pairs of reference dates inside one quarter: consecutive days, and its first and last days.
DAY_PAIRS = (
    (date(2026, 11, 22), date(2026, 11, 23)),
    (date(2026, 10, 1), date(2026, 10, 2)),
    (date(2026, 12, 30), date(2026, 12, 31)),
)
QUARTER = (date(2026, 10, 1), date(2026, 12, 31))


@cache
def service(reference: date) -> SandboxService:
    """A medium sandbox (enough campaigns for changes on most days); restating off, so a day's
    figures do not depend on the reference date by design."""
    return SandboxService("medium", reference, restating=NO_RESTATING)


@cache
def records(reference: date, path: str) -> dict[str, dict]:
    return {r["id"]: r for r in every_record(service(reference), path)}


@cache
def log(reference: date) -> tuple[dict, ...]:
    """The whole change log at a reference date, oldest first (ties in the chain's order)."""
    rows = every_record(service(reference), PATH)
    order = sorted(range(len(rows)), key=lambda k: (rows[k]["changed_at"], k))
    return tuple(rows[k] for k in order)


def edits(reference: date, first: date, last: date) -> dict[str, list[dict]]:
    """Applied campaign and ad-group changes logged from `first` to `last`, per entity, oldest
    first: by people and programs (the fields of `LOGGED`), and by the optimizer (placements,
    keywords: no field of the record, but they update it)."""
    out: dict[str, list[dict]] = defaultdict(list)
    for row in log(reference):
        day = date.fromisoformat(row["changed_at"][:10])
        if (
            row["entity_type"] in ("campaign", "adgroup")
            and row["result"] == "applied"
            and first <= day <= last
        ):
            out[row["entity_id"]].append(row)
    return out


def moved(before: dict, after: dict) -> set[str]:
    return {name for name in after if before.get(name) != after[name]}


def value_of(record: dict, field: str) -> object:
    """A record's field as the log writes it: amounts compare as decimals."""
    value = record[field]
    if field == "budget":
        value = value["amount"]
    return Decimal(str(value)) if field in ("budget", "defaultBid") else value


def logged(row: dict, side: str) -> object:
    value = row[side]
    return Decimal(value) if row["field"] in ("dailyBudget", "defaultBid") else value


def changed_state(rows: list[dict]) -> bool:
    return any(r["field"] == "state" for r in rows)


# ---------------------------------------------------------------------- (a) stable records
@pytest.mark.parametrize(("first", "second"), [*DAY_PAIRS, QUARTER])
def test_records_move_only_where_the_day_explains_it(first, second):
    explained = edits(second, first - timedelta(1), second - timedelta(1))
    groups_of = {g["id"]: g["campaign"] for g in records(second, "/v1/adgroups").values()}
    for path in LISTS:
        before, after = records(first, path), records(second, path)
        assert before.keys() == after.keys(), path
        for record_id, record in after.items():
            fields = moved(before[record_id], record)
            assert fields <= MOVING.get(path, set()), (path, record_id, fields)
            if fields and path in ("/v1/campaigns", "/v1/adgroups"):
                assert explained[record_id], (path, record_id, fields)
            if fields and path == "/v1/product-ads":
                group, campaign = record["adGroup"], record["campaign"]
                assert changed_state(explained[group]) or changed_state(explained[campaign])
                assert groups_of[group] == campaign


def test_only_the_last_run_date_moves_in_an_optimizer_configuration():
    first, second = DAY_PAIRS[0]
    params = {"expand": "optimizationConfig"}
    before = {r["id"]: r for r in every_record(service(first), "/v1/campaigns", **params)}
    after = every_record(service(second), "/v1/campaigns", **params)
    configs = [(before[r["id"]]["optimizationConfig"], r["optimizationConfig"]) for r in after]
    configs = [(a, b) for a, b in configs if b is not None]
    assert configs
    for a, b in configs:
        assert moved(a, b) == {"optimizeDate"}
        assert b["optimizeDate"] == str(second - timedelta(1))


def test_target_bids_move_only_by_the_optimizers_applied_changes_of_the_day():
    first, second = DAY_PAIRS[0]
    day = str(second - timedelta(1))
    bid_changes = {
        r["entity_id"]
        for r in log(second)
        if r["source"] == "workflow" and r["field"] == "bid" and r["changed_at"][:10] == day
    }
    before, after = records(first, "/v1/targets"), records(second, "/v1/targets")
    moved_bids = {t for t, r in after.items() if r["bid"] != before[t]["bid"]}
    assert moved_bids
    assert moved_bids <= bid_changes


@pytest.mark.parametrize("reference", [QUARTER[0], DAY_PAIRS[0][1], QUARTER[1]])
def test_anchored_dates_stay_valid_on_every_day_of_the_quarter(reference):
    today = str(reference)
    for campaign in records(reference, "/v1/campaigns").values():
        assert campaign["createdAt"] <= campaign["updatedAt"] < today
        assert campaign["startDate"] <= today
        assert campaign["endDate"] is None or campaign["endDate"] > today
    for portfolio in records(reference, "/v1/portfolios").values():
        assert portfolio["createdAt"] < today
        assert portfolio["budget"]["endDate"] is None or portfolio["budget"]["endDate"] > today
    for path in ("/v1/adgroups", "/v1/targets", "/v1/product-ads", "/v1/products"):
        for record in records(reference, path).values():
            assert record["createdAt"] <= record["updatedAt"] < today, (path, record["id"])
    for task in records(reference, "/v1/tasks").values():
        assert task["createdAt"] < today and (task["resolvedAt"] or "") < today
        assert task["status"] != "pending" or task["expiresAt"] > today


# ---------------------------------------------------------------------- (b) records follow the log
@pytest.mark.parametrize(("first", "second"), DAY_PAIRS)
def test_a_days_changes_and_the_log_rows_of_that_day_match(first, second):
    day = second - timedelta(1)
    of_day = edits(second, day, day)
    assert of_day, "no change on the day: the test would prove nothing"
    for path in ("/v1/campaigns", "/v1/adgroups"):
        before, after = records(first, path), records(second, path)
        for record_id, record in after.items():
            rows = of_day.get(record_id, [])
            fields = moved(before[record_id], record)
            # Every field that moved was changed that day ...
            assert {LOGGED[f] for f in fields & set(LOGGED)} <= {r["field"] for r in rows}
            assert not fields or rows, (record_id, fields)
            # ... and every change of the day shows: the value of its last one, and its time.
            for field, name in LOGGED.items():
                last = [r for r in rows if r["field"] == name]
                if last:
                    assert value_of(record, field) == logged(last[-1], "new_value"), record_id
            if rows:
                assert (
                    record["updatedAt"] == rows[-1]["changed_at"] != before[record_id]["updatedAt"]
                )


def test_every_campaign_and_adgroup_ends_on_its_last_logged_value():
    reference = DAY_PAIRS[0][1]
    chains = _chains(reference)
    applied = edits(reference, date.min, date.max)
    for path in ("/v1/campaigns", "/v1/adgroups"):
        for record_id, record in records(reference, path).items():
            for field, name in LOGGED.items():
                rows = chains.get((record_id, name))
                if field in record and rows:
                    last = rows[-1]
                    side = "new_value" if last["result"] == "applied" else "old_value"
                    assert value_of(record, field) == logged(last, side), (record_id, name)
            # The optimizer's rows may predate an entity (its runs start at `optimizingSince`):
            # those do not date the record.
            since = record["createdAt"][:10]
            times = [r["changed_at"] for r in applied[record_id] if r["changed_at"][:10] > since]
            if times:
                assert record["updatedAt"] == times[-1]


def test_records_without_any_change_are_their_base():
    """An entity no applied change ever touched (logged, or older than the log's year) is the
    record built from the anchor; the others differ from it only in the fields changes set."""
    account = service(DAY_PAIRS[0][1]).main_account
    for kind, records_now, bases, path in (
        (0, account.campaigns, account.structure.base_campaigns, "/v1/campaigns"),
        (1, account.adgroups, account.base_adgroups, "/v1/adgroups"),
    ):
        touched = {entity for of_kind, entity in account.edits.touches if of_kind == kind}
        assert 0 < len(touched) < len(records_now)
        for position, (record, base) in enumerate(zip(records_now, bases, strict=True)):
            if position in touched:
                assert moved(base, record) <= MOVING[path]
            else:
                assert record == base


# ---------------------------------------------------------------------- (c) the chain
def _chains(reference: date) -> dict[tuple[str, str], list[dict]]:
    """Campaign and ad-group rows of the record's fields (only people and programs change
    them), per (entity, field), oldest first."""
    chains: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for row in log(reference):
        if row["entity_type"] in ("campaign", "adgroup") and row["field"] in LOGGED.values():
            chains[row["entity_id"], row["field"]].append(row)
    return chains


@pytest.mark.parametrize("reference", [DAY_PAIRS[0][1], QUARTER[1]])
def test_each_change_starts_from_the_value_the_last_applied_one_left(reference):
    chains = _chains(reference)
    assert sum(len(rows) > 1 for rows in chains.values()) > 10
    for key, rows in chains.items():
        for earlier, later in pairwise(rows):
            left = earlier["new_value"] if earlier["result"] == "applied" else earlier["old_value"]
            assert later["old_value"] == left, key
        for row in rows:
            assert row["old_value"] != row["new_value"], key


def test_campaign_and_adgroup_changes_fall_on_the_same_days_whatever_the_reference():
    """A change is on an absolute day: the log at R holds the log at R-1, plus the day R-1,
    minus the day that left the retention window."""
    first, second = DAY_PAIRS[0]

    def keyed(reference: date) -> set[tuple]:
        return {
            (r["entity_id"], r["field"], r["changed_at"], r["old_value"], r["new_value"])
            for r in log(reference)
            if r["entity_type"] in ("campaign", "adgroup") and r["source"] != "workflow"
        }

    window = str(first - timedelta(365)), str(first - timedelta(1))
    inside = {row for row in keyed(first) if row[2][:10] > window[0]}
    newer = {row for row in keyed(second) if row[2][:10] <= window[1]}
    assert inside == newer


# ---------------------------------------------------------------------- (d) metrics of a past day
@pytest.mark.parametrize("day", [date(2026, 10, 15), date(2026, 6, 15)])
@pytest.mark.parametrize("resource", ["campaign-metrics", "target-metrics", "adgroup-metrics"])
def test_a_past_days_figures_do_not_move_with_the_reference(resource, day):
    first, second = DAY_PAIRS[0]
    window = {"start_date": str(day), "end_date": str(day), "granularity": "daily"}
    before = every_row(service(first), f"/v1/{resource}", **window)
    assert before
    assert before == every_row(service(second), f"/v1/{resource}", **window)
