"""The advertising change log (spec 4.8): fields, sources, actors, filters, paging, retention."""

import re
from datetime import timedelta

import pytest

from tests.sandbox.conftest import TODAY, ask, every_record, ok

PATH = "/v1/advertising-changes"
FIELDS = {
    "object",
    "id",
    "changed_at",
    "entity_type",
    "entity_id",
    "campaign",
    "adgroup",
    "connection",
    "country",
    "field",
    "old_value",
    "new_value",
    "source",
    "actor",
    "result",
    "error",
    "correlation_id",
}
EMAIL = re.compile(r"^[a-z.]+@example\.com$")
STAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def walk(service, **params) -> list[dict]:
    """Every row of a filtered log."""
    return every_record(service, PATH, **params)


@pytest.fixture(scope="module")
def recent(medium) -> list[dict]:
    """The last 30 days of the medium account's log."""
    return walk(medium, start_date=str(TODAY - timedelta(30)))


def test_rows_have_the_documented_fields(recent):
    assert recent
    for row in recent:
        assert set(row) == FIELDS and row["object"] == "advertising_change"
        assert STAMP.match(row["changed_at"]) and re.match(r"^[a-f0-9]{24}$", row["id"])
        assert row["result"] in ("applied", "failed")
        assert (row["error"] is None) == (row["result"] == "applied")
        assert row["entity_type"] in ("campaign", "adgroup", "target", "product_ad")
        assert (row["adgroup"] is None) == (row["entity_type"] == "campaign")
    assert {r["result"] for r in recent} == {"applied", "failed"}


def test_the_log_is_newest_first_with_unique_ids(recent):
    stamps = [r["changed_at"] for r in recent]
    assert stamps == sorted(stamps, reverse=True)
    assert len({r["id"] for r in recent}) == len(recent)


def test_sources_and_actors(recent):
    assert {r["source"] for r in recent} == {"front", "workflow", "system", "public-api", "mcp"}
    for row in recent:
        actor = row["actor"]
        if row["source"] == "front":
            assert EMAIL.match(actor)
        elif row["source"] == "workflow":
            assert actor.startswith("workflow:") and row["correlation_id"]
        else:
            assert not EMAIL.match(actor) and ":" in actor
        if row["source"] != "workflow":
            assert row["correlation_id"] is None
    assert "ana.perez@example.com" in {r["actor"] for r in recent}


def test_nothing_is_older_than_twelve_months_or_newer_than_yesterday(medium):
    oldest = str(TODAY - timedelta(365))
    assert ok(medium, PATH, end_date=str(TODAY - timedelta(366)))["data"] == []
    first_day = ok(medium, PATH, start_date=oldest, end_date=oldest)["data"]
    assert first_day and all(r["changed_at"].startswith(oldest) for r in first_day)
    newest = ok(medium, PATH, limit=1)["data"][0]
    assert newest["changed_at"][:10] == str(TODAY - timedelta(1))


@pytest.mark.parametrize(
    ("name", "field"),
    [
        ("source", "source"),
        ("result", "result"),
        ("entity_type", "entity_type"),
        ("field", "field"),
        ("campaign", "campaign"),
        ("adgroup", "adgroup"),
        ("entity", "entity_id"),
        ("correlation_id", "correlation_id"),
    ],
)
def test_each_filter_keeps_only_matching_rows(medium, recent, name, field):
    value = next(r[field] for r in recent[50:] if r[field] is not None)
    rows = walk(medium, start_date=str(TODAY - timedelta(30)), **{name: value})
    assert rows and {r[field] for r in rows} == {value}
    assert rows == [r for r in recent if r[field] == value]


def test_dates_include_both_ends(medium):
    day = str(TODAY - timedelta(10))
    rows = walk(medium, start_date=day, end_date=day)
    assert rows and {r["changed_at"][:10] for r in rows} == {day}
    two = walk(medium, start_date=str(TODAY - timedelta(11)), end_date=day)
    assert {r["changed_at"][:10] for r in two} == {day, str(TODAY - timedelta(11))}


def test_unknown_values_give_nothing_and_invalid_ones_400(medium):
    assert ok(medium, PATH, field="colour")["data"] == []
    assert ok(medium, PATH, campaign="0" * 24)["data"] == []
    assert ok(medium, PATH, correlation_id="0" * 24)["data"] == []
    assert ask(medium, PATH, source="email")[0] == 400
    assert ask(medium, PATH, result="maybe")[0] == 400
    assert ask(medium, PATH, starting_after="0" * 24)[0] == 400
    assert ask(medium, PATH, start_date="2026-11-10", end_date="2026-11-01")[0] == 400


def test_cursor_paging_both_ways_and_totals(medium):
    params = {"source": "front"}
    rows = walk(medium, **params)
    total = ok(medium, PATH, include_total="true", **params)["total_count"]
    assert total == len(rows) > 100
    middle = rows[60]["id"]
    before = ok(medium, PATH, ending_before=middle, limit=20, **params)
    assert before["data"] == rows[40:60] and before["has_more"] is True
    after = ok(medium, PATH, starting_after=middle, limit=20, **params)
    assert after["data"] == rows[61:81]
    assert "total_count" not in ok(medium, PATH)
    assert ok(medium, PATH, include_total="true")["total_count"] == len(walk(medium))


def test_workflow_rows_of_one_run_share_its_correlation_id(recent):
    runs: dict[str, set] = {}
    for row in recent:
        if row["source"] == "workflow":
            runs.setdefault(row["correlation_id"], set()).add(row["changed_at"][:10])
    assert runs and all(len(days) == 1 for days in runs.values())
