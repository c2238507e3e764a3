"""Bad data from the service: named precisely, held back alone, raw kept, the rest published.

Each case tampers with the embedded sandbox's answers (the real paging, typing, contracts and
lake run unchanged) and checks what a user relies on: exit 1 and one line naming table,
partition, column and value; the raw page kept; the partition's previous state intact; every
other partition and table published. What the library decides alone (which partition a bad
value holds back) is tested on the library (tests/library.py), each kind of bad value; the
run's exit and line once, through the CLI.
"""

import gzip
from collections.abc import Callable
from datetime import date
from pathlib import Path

import duckdb
import pytest

from bench.scenarios import lake_digest
from launcher.cli import main
from tests import library
from tests.conftest import copy_of_a_run

BAD_DAY = "2026-10-03"
START, END = date(2026, 10, 1), date(2026, 10, 5)
RANGE = ["run", "--start", START.isoformat(), "--end", END.isoformat()]


def corrupt(service, monkeypatch, mutate) -> None:
    """Make the sandbox answer campaign metrics with `mutate` applied to BAD_DAY's rows."""
    original = service.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/campaign-metrics" and body and "data" in body:
            body = {
                **body,
                "data": [mutate(dict(r)) if r.get("date") == BAD_DAY else r for r in body["data"]],
            }
        return status, body, extra

    monkeypatch.setattr(service, "handle", handle)


def day_rows(home: Path) -> dict[str, int]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return dict(
            con.sql(
                "SELECT strftime(date, '%Y-%m-%d'), count(*) FROM campaign_metrics GROUP BY ALL"
            ).fetchall()
        )


@pytest.mark.parametrize(
    ("mutate", "fragment"),
    [
        (lambda r: r | {"cost": "12.345678"}, "campaign_metrics.cost"),
        (lambda r: r | {"cost": 12.34567}, "at most 4 fractional digits"),
        (lambda r: r | {"ad_product": "XX"}, "isin"),
        (lambda r: r | {"campaign": "../../x"}, "str_matches"),
        (lambda r: r | {"currency": "usd"}, "currency"),
        (lambda r: r | {"currency": "XYZ"}, "currency"),
        (lambda r: r | {"cost": "1.2.3"}, "campaign_metrics.cost"),
        (lambda r: r | {"clicks": "twelve"}, "expected count"),
        (lambda r: {k: v for k, v in r.items() if k != "campaign"}, "required field missing"),
    ],
    ids=[
        "money with too many digits",
        "a money number with more digits than the warehouse keeps",
        "an unknown enum value",
        "an id off the pattern",
        "a malformed currency code",
        "an unknown currency code",
        "a malformed money string",
        "a string where a count belongs",
        "a missing required field",
    ],
)
def test_a_bad_value_holds_back_only_its_partition(home, embedded, monkeypatch, mutate, fragment):
    """The library (extract, type, check, publish) on top of a good extraction of the same
    days: the bad value is named with its partition, which keeps its previous state, the
    other partitions are published again, and the raw page stays."""
    library.extract(home, START, END, ["campaign_metrics"])
    before = lake_digest(home)
    corrupt(embedded, monkeypatch, mutate)
    outcome = library.extract(home, START, END, ["campaign_metrics"])["campaign_metrics"]
    held = "; ".join(outcome.held_back)
    assert fragment in held and BAD_DAY in held, held
    assert outcome.held_days == {date.fromisoformat(BAD_DAY)} and outcome.partitions == 4
    assert lake_digest(home) == before  # the held-back day keeps its previous state
    raw_pages = list((home / "raw" / "campaign_metrics").rglob("page-*.json.gz"))
    assert any(BAD_DAY.encode() in gzip.decompress(p.read_bytes()) for p in raw_pages)


def test_a_bad_value_fails_the_run_in_one_line_and_the_warehouse_keeps_its_day(
    home, embedded, monkeypatch, capsys
):
    """What only a whole run shows of a bad value: exit 1, one line naming table, partition,
    column and value, and the warehouse's day as it was."""
    copy_of_a_run(home, [*RANGE, "--tables", "campaign_metrics"])
    before = day_rows(home)
    capsys.readouterr()
    corrupt(embedded, monkeypatch, lambda r: r | {"cost": "12.345678"})
    assert main([*RANGE, "--tables", "campaign_metrics"]) == 1
    err = capsys.readouterr().err.strip()
    assert "campaign_metrics.cost" in err and "12.345678" in err and BAD_DAY in err
    assert len(err.splitlines()) == 1
    assert day_rows(home) == before


def tamper(
    service,
    monkeypatch,
    path: str,
    change: Callable[[dict[str, str], dict], dict],
    ignore: tuple[str, ...] = (),
) -> None:
    """Make the sandbox answer `path` with `change(query, body)` instead of `body`, as if
    the parameters in `ignore` had not been sent."""
    original = service.handle

    def handle(method, requested, query, headers):
        if requested == path:
            query = [(k, v) for k, v in query if k not in ignore]
        status, body, extra = original(method, requested, query, headers)
        if requested == path and status == 200 and body is not None:
            body = change(dict(query), body)
        return status, body, extra

    monkeypatch.setattr(service, "handle", handle)


def lake_state(home: Path) -> dict[str, int]:
    """Every lake file and its modification time: equal means untouched."""
    return {str(p.relative_to(home)): p.stat().st_mtime_ns for p in (home / "lake").rglob("*")}


def test_a_row_dated_outside_the_window_is_named_and_not_published(home, embedded, monkeypatch):
    tamper(
        embedded,
        monkeypatch,
        "/v1/campaign-metrics",
        lambda q, body: (
            body
            | {
                "data": [
                    r | {"date": "2026-09-01"} if r["date"] == BAD_DAY else r for r in body["data"]
                ]
            }
        ),
    )
    said = library.failure(
        library.extract(home, START, END, ["campaign_metrics"])["campaign_metrics"]
    )
    assert "campaign_metrics window 2026-10-01..2026-10-05" in said and "2026-09-01" in said
    assert "outside the requested window" in said
    lake = home / "lake" / "campaign_metrics"
    assert not (lake / "date=2026-09-01").exists()
    assert (lake / "date=2026-10-01").is_dir()
    raw = list((home / "raw" / "campaign_metrics").rglob("page-*.json.gz"))
    assert any(b"2026-09-01" in gzip.decompress(p.read_bytes()) for p in raw)


def test_the_same_row_on_two_pages_holds_back_the_snapshot(home, embedded, monkeypatch):
    """A cursor list that repeats the last row of a page at the top of the next one."""
    tables = ["targets", "campaigns"]
    library.succeeded(library.extract(home, START, END, tables))
    before = lake_state(home)

    def repeat(query: dict[str, str], body: dict) -> dict:
        after = query.get("starting_after")
        if not after:
            return body
        return body | {"data": [{**body["data"][0], "id": after}, *body["data"]]}

    tamper(embedded, monkeypatch, "/v1/targets", repeat)
    outcomes = library.extract(home, START, END, tables)
    assert "unique" in library.failure(outcomes["targets"])
    assert library.failure(outcomes["campaigns"]) == ""
    after = lake_state(home)
    targets = {k: v for k, v in before.items() if k.startswith("lake/targets/")}
    assert {k: after.get(k) for k in targets} == targets  # the previous snapshot, untouched
    campaigns = [k for k in after if k.startswith("lake/campaigns/")]
    assert any(after[k] != before.get(k) for k in campaigns)  # the other table: published
    assert len(list((home / "raw" / "targets").rglob("page-*.json.gz"))) == 2


def has_more_then_empty(query: dict[str, str], body: dict) -> dict:
    """The first page says there is more and gives no total; the next page is empty."""
    if query.get("offset", "0") == "0":
        return body | {"has_more": True, "total_count": None}
    return body | {"data": [], "has_more": True}


def always_more(query: dict[str, str], body: dict) -> dict:
    """Every page claims more (and, ignoring `starting_after`, is the first page again)."""
    return body | {"has_more": True}


@pytest.mark.parametrize(
    ("table", "path", "change", "ignore", "fragment"),
    [
        (
            "campaign_metrics",
            "/v1/campaign-metrics",
            has_more_then_empty,
            (),
            "has_more is true but the page is empty",
        ),
        (
            "campaigns",
            "/v1/campaigns",
            always_more,
            ("starting_after",),
            "the cursor does not advance",
        ),
    ],
    ids=["has_more with an empty page", "a cursor that does not advance"],
)
def test_paging_that_cannot_end_fails_the_table_and_keeps_its_state(
    home, embedded, monkeypatch, table, path, change, ignore, fragment
):
    tables = [table, "campaign_metrics", "campaigns", "portfolios"]
    library.succeeded(library.extract(home, START, END, tables))
    before = lake_state(home)
    tamper(embedded, monkeypatch, path, change, ignore)
    said = library.failure(library.extract(home, START, END, tables)[table])
    assert fragment in said and f"GET {path}" in said
    after = lake_state(home)
    mine = f"lake/{table}/"
    assert {k: v for k, v in after.items() if k.startswith(mine)} == {
        k: v for k, v in before.items() if k.startswith(mine)
    }
    other = "portfolios"
    assert any(after[k] != before.get(k) for k in after if k.startswith(f"lake/{other}/"))
    assert list((home / "raw" / table).rglob("page-*.json.gz"))


def test_an_unknown_field_becomes_a_column_named_on_stderr(home, embedded, monkeypatch, capsys):
    corrupt(embedded, monkeypatch, lambda r: r | {"brandNewMetric": 3})
    assert main([*RANGE, "--tables", "campaign_metrics"]) == 0
    err = capsys.readouterr().err.strip()
    assert err == "adwh: campaign_metrics: new column brand_new_metric BIGINT"
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        values = con.sql(
            "SELECT strftime(date, '%Y-%m-%d'), min(brand_new_metric), max(brand_new_metric) "
            "FROM campaign_metrics GROUP BY ALL ORDER BY 1"
        ).fetchall()
        changes = con.sql("SELECT table_name, column_name, column_type, first_date "
                          "FROM schema_changes").fetchall()  # fmt: skip
    assert (BAD_DAY, 3, 3) in values and ("2026-10-01", None, None) in values
    assert [(t, c, k, str(d)) for t, c, k, d in changes] == [
        ("campaign_metrics", "brand_new_metric", "BIGINT", BAD_DAY)
    ]


def test_fields_a_source_unfolds_into_its_other_tables_are_not_new(home, embedded):
    """A cluster's `products` and keywords feed cluster_products and cluster_keywords: known."""
    outcomes = library.succeeded(library.extract(home, START, END, ["clusters"]))
    assert {table: outcome.schema_changes for table, outcome in outcomes.items()} == {
        "clusters": [],
        "cluster_products": [],
        "cluster_keywords": [],
    }
