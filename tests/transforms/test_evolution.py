"""Schema evolution: a field the registry does not know becomes a typed column, a later value
that does not fit widens it, every change is logged, and older partitions read it as NULL
through the plain readers of the contract (DuckDB, Polars, PyArrow)."""

import json
from datetime import UTC, date, datetime
from decimal import Decimal
from pathlib import Path

import duckdb
import orjson
import polars as pl
import pyarrow.dataset as ds
from hypothesis import example, given
from hypothesis import strategies as st

from pipelines.client.paging import Page
from pipelines.shaping import Context
from pipelines.sources.model import Output
from tests import library
from transforms.evolution import evolve, infer, kind_of, unknown_values, widen
from warehouse.build import build_warehouse
from warehouse.lake import Lake
from warehouse.schemas import CAMPAIGN_METRICS, CAMPAIGNS, TABLES, Kind

NOW = datetime(2026, 11, 23, tzinfo=UTC)
KINDS = list(Kind)

json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False, allow_infinity=False),
    st.decimals(places=2, min_value=-(10**13), max_value=10**13).map(lambda d: f"{d:f}"),
    st.integers(-(10**14), 10**14).map(str),  # an amount in yen, or a code when too long
    st.dates().map(date.isoformat),
    st.datetimes(timezones=st.just(UTC)).map(lambda t: t.isoformat().replace("+00:00", "Z")),
    st.text(max_size=12),
    st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.lists(st.integers(), max_size=3),
)


@given(st.sampled_from(KINDS), st.sampled_from(KINDS), st.sampled_from(KINDS))
def test_widening_is_order_free_and_never_narrows(a, b, c):
    assert widen(a, b) == widen(b, a)
    assert widen(widen(a, b), c) == widen(a, widen(b, c))
    assert widen(widen(a, b), a) == widen(a, b)  # the wider kind holds both
    assert widen(a, a) == a and widen(a, Kind.NULL) == a


@given(st.lists(json_values, min_size=1, max_size=12))
@example([100_000_000_000_000, "0.00"])  # an integer wider than DECIMAL's whole digits
def test_the_kind_inferred_holds_every_value_exactly(values):
    """Typing the values in the column kind inferred from them never fails and keeps null."""
    (change,) = evolve(CAMPAIGN_METRICS, {("partnerField",): values})
    column = change.column
    assert column.name == "partner_field" and column.kind == infer(values)
    schema = CAMPAIGN_METRICS.extended((column,))
    rows = [{"campaign": "0" * 24, "date": "2026-10-01", "currency": "USD", "ad_product": "SP",
             "partnerField": v} for v in values]  # fmt: skip
    content = json.dumps({"data": rows}).encode()  # as a service writes it: any integer
    page = Page("/v1/campaign-metrics", {}, orjson.loads(content), content)
    frame = Output(schema).frame([("test", page)], "a" * 24, NOW, Context(NOW.date(), b"k"))
    assert frame["partner_field"].is_null().to_list() == [v is None for v in values]


# An amount as the service writes it in a currency of 0, 2 or 3 digits ("14283" yen).
amounts = st.sampled_from([0, 2, 3]).flatmap(
    lambda places: st.decimals(
        places=places, min_value=-(10**13), max_value=10**13, allow_nan=False
    ).map(lambda d: f"{d:f}")
)


@given(st.lists(amounts, min_size=1, max_size=12))
def test_decimal_strings_type_as_decimals_whatever_the_currency(values):
    """A new field of decimal strings is DECIMAL whether or not its amounts carry a point, and
    every amount is kept to the last digit."""
    (change,) = evolve(CAMPAIGN_METRICS, {("refundAmount",): values})
    assert change.column.kind is Kind.MONEY
    schema = CAMPAIGN_METRICS.extended((change.column,))
    rows = [{"campaign": "0" * 24, "date": "2026-10-01", "currency": "JPY", "ad_product": "SP",
             "refundAmount": v} for v in values]  # fmt: skip
    content = json.dumps({"data": rows}).encode()
    page = Page("/v1/campaign-metrics", {}, orjson.loads(content), content)
    frame = Output(schema).frame([("test", page)], "a" * 24, NOW, Context(NOW.date(), b"k"))
    assert frame["refund_amount"].to_list() == [Decimal(v) for v in values]


def test_digits_are_a_decimal_unless_a_leading_zero_makes_them_a_code():
    assert [kind_of(v) for v in ("14283", "0", "-7", "1" * 14, "0.5")] == [Kind.MONEY] * 5
    assert [kind_of(v) for v in ("02134", "00", "-0012", "1" * 15, "+5")] == [Kind.STRING] * 5
    assert infer(["14283", "12.50", 7]) is Kind.MONEY  # yen beside cents beside a count


def test_value_kinds_follow_the_contract():
    assert [kind_of(v) for v in ("12.50", 12, 1.5, "2026-11-01", "2026-11-01T10:00:05Z")] == [
        Kind.MONEY,
        Kind.COUNT,
        Kind.NUMBER,
        Kind.DATE,
        Kind.TIMESTAMP,
    ]
    assert [kind_of(v) for v in (True, {"a": 1}, [1], "text", "2026-02-30", None)] == [
        Kind.BOOL,
        Kind.JSON,
        Kind.JSON,
        Kind.STRING,
        Kind.STRING,
        None,
    ]
    assert widen(Kind.COUNT, Kind.MONEY) is Kind.MONEY
    assert widen(Kind.MONEY, Kind.STRING) is Kind.STRING


def test_new_sub_fields_of_known_objects_are_found_and_known_ones_are_not():
    records = [{"id": "x", "budget": {"amount": 1, "cap": 5}, "optimizationConfig": None}]
    found = unknown_values(records, CAMPAIGNS)
    assert found == {("budget", "cap"): [5]}
    (change,) = evolve(CAMPAIGNS, found)
    assert change.column.name == "budget_cap" and change.column.kind is Kind.COUNT


KNOWN_METRICS_FIELDS = sorted(c.source[0] for c in CAMPAIGN_METRICS.columns if c.source)


@given(
    st.lists(
        st.lists(st.sampled_from(KNOWN_METRICS_FIELDS), max_size=6).map(
            lambda keys: dict.fromkeys(keys, 1)
        ),
        max_size=5,
    ),
    st.data(),
)
def test_a_field_no_column_reads_is_found_in_any_record_and_known_ones_never(records, data):
    assert unknown_values(records, CAMPAIGN_METRICS) == {}
    assert unknown_values([{"object": "x", **r} for r in records], CAMPAIGN_METRICS) == {}
    if records:
        at = data.draw(st.integers(0, len(records) - 1))
        records[at] = {**records[at], "partnerScore": 7}
        expected = [7 if i == at else None for i in range(len(records))]
        assert unknown_values(records, CAMPAIGN_METRICS) == {("partnerScore",): expected}
        ignored = unknown_values(records, CAMPAIGN_METRICS, frozenset({"partnerScore"}))
        assert ignored == {}


# ---------------------------------------------------------------------------- end to end
SCORES = {"2026-10-04": 3, "2026-10-05": 4, "2026-10-06": "12.5", "2026-10-07": "n/a"}


def serve_scores(service, monkeypatch, days: set[str]) -> None:
    """Campaign metrics rows of `days` carry a field we have never seen: `partnerScore`."""
    original = service.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/campaign-metrics" and body and "data" in body:
            rows = [
                r | {"partnerScore": SCORES[r["date"]]} if r.get("date") in days else r
                for r in body["data"]
            ]
            body = {**body, "data": rows}
        return status, body, extra

    monkeypatch.setattr(service, "handle", handle)


def plain_reads(lake: Path) -> dict[str, list[tuple]]:
    """(date, partner_score) as the contract's plain Parquet readers see them."""
    files = f"{lake}/campaign_metrics/**/*.parquet"
    duck = duckdb.sql(
        f"SELECT DISTINCT date, partner_score FROM read_parquet('{files}', "
        "hive_partitioning = true) ORDER BY ALL"
    ).fetchall()
    polars = (
        pl.scan_parquet(files, hive_partitioning=True)
        .select("date", "partner_score")
        .unique()
        .sort("date", "partner_score")
        .collect()
        .rows()
    )
    arrow = ds.dataset(lake / "campaign_metrics", partitioning="hive").to_table(
        columns=["date", "partner_score"]
    )
    return {
        "duckdb": duck,
        "polars": polars,
        "pyarrow": sorted({(row["date"], row["partner_score"]) for row in arrow.to_pylist()}),
    }


def extract(home: Path, start: str, end: str) -> str:
    """The library's extraction of campaign_metrics over [start, end], and the housekeeping a
    run's build does after it (what the run replaced, vacuumed): its schema changes."""
    days = date.fromisoformat(start), date.fromisoformat(end)
    outcome = library.extract(home, *days, ["campaign_metrics"])["campaign_metrics"]
    assert not isinstance(outcome, BaseException) and not outcome.held_back
    Lake(home / "lake").tidy(["campaign_metrics"])
    return "; ".join(outcome.schema_changes)


def test_a_new_field_becomes_a_column_then_widens_and_old_partitions_read_null(
    home, embedded, monkeypatch
):
    """Extracted by the library (the lake, read by every plain reader), then built into the
    warehouse once (its typed column and the log of changes)."""
    extract(home, "2026-10-01", "2026-10-03")
    serve_scores(embedded, monkeypatch, {"2026-10-04", "2026-10-05"})
    assert "new column partner_score BIGINT" in extract(home, "2026-10-04", "2026-10-05")
    reads = plain_reads(home / "lake")
    old = [(date(2026, 10, d), None) for d in (1, 2, 3)]
    assert (
        reads["duckdb"] == reads["polars"] == [*old, (date(2026, 10, 4), 3), (date(2026, 10, 5), 4)]
    )
    assert reads["pyarrow"] == [(str(day), v) for day, v in reads["duckdb"]]

    serve_scores(embedded, monkeypatch, {"2026-10-06"})
    assert "partner_score widened BIGINT -> DECIMAL(18,4)" in extract(
        home, "2026-10-06", "2026-10-06"
    )
    assert plain_reads(home / "lake")["duckdb"][-3:] == [
        (date(2026, 10, 4), Decimal(3)),
        (date(2026, 10, 5), Decimal(4)),
        (date(2026, 10, 6), Decimal("12.5")),
    ]

    serve_scores(embedded, monkeypatch, {"2026-10-07"})
    assert "widened DECIMAL(18,4) -> VARCHAR" in extract(home, "2026-10-07", "2026-10-07")
    build_warehouse(home, Lake(home / "lake"), TABLES.values())
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        kept = con.sql(
            "SELECT DISTINCT date, partner_score FROM campaign_metrics ORDER BY ALL"
        ).fetchall()
        log = con.sql(
            "SELECT column_name, column_type, change, previous_type, first_date "
            "FROM schema_changes ORDER BY recorded_at"
        ).fetchall()
        typed = con.sql(
            "SELECT data_type FROM information_schema.columns "
            "WHERE table_name = 'campaign_metrics' AND column_name = 'partner_score'"
        ).fetchall()
    assert typed == [("VARCHAR",)]
    assert kept[0] == (date(2026, 10, 1), None) and kept[-1] == (date(2026, 10, 7), "n/a")
    assert log == [
        ("partner_score", "BIGINT", "added", None, date(2026, 10, 4)),
        ("partner_score", "DECIMAL(18,4)", "widened", "BIGINT", date(2026, 10, 6)),
        ("partner_score", "VARCHAR", "widened", "DECIMAL(18,4)", date(2026, 10, 7)),
    ]


def test_a_rebuild_from_raw_gives_the_evolved_warehouse_again(home, embedded, monkeypatch):
    """The raw pages are the record: published again from them by the library (as `adwh
    rebuild`'s step does) with the schema log gone, the lake and the warehouse built from it
    find the new column and its type again. `adwh rebuild` itself is tested whole in
    tests/pipeline."""
    serve_scores(embedded, monkeypatch, {"2026-10-04", "2026-10-05"})
    assert "new column partner_score" in extract(home, "2026-10-03", "2026-10-05")
    query = "SELECT * EXCLUDE (_extracted_at) FROM campaign_metrics ORDER BY ALL"
    build_warehouse(home, Lake(home / "lake"), TABLES.values())
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        before = con.sql(query).fetchall()
    (home / "schema" / "changes.jsonl").unlink()  # the log is found again from raw
    days = date(2026, 10, 3), date(2026, 10, 5)
    (rebuilt,) = library.rebuild(home, *days, ["campaign_metrics"]).values()
    assert "new column partner_score BIGINT" in rebuilt.schema_changes
    build_warehouse(home, Lake(home / "lake"), TABLES.values())
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        assert con.sql(query).fetchall() == before
        assert con.sql(
            "SELECT column_name, change FROM schema_changes WHERE column_name = 'partner_score'"
        ).fetchall() == [("partner_score", "added")]
