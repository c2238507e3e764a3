"""Which days of each dated table the lake holds complete, per account: the catch-up's cursor.

Rows cannot say it: a day an account had no activity (no seller products, a paused account)
has no rows, and looks the same as a day never fetched. So each run that fetched from the
service records what it published, as spans of days per account and table, in the lake's
`_coverage` Delta table beside the others (the lake, not `$ADWH_HOME`, is what every machine
of a deployment shares).

Spans rather than a row per day: an account's coverage of a table is one span, however many
years it holds, so the daily job reads a small table whatever the warehouse's age, and a run
rewrites only its accounts' rows (a predicate overwrite, like every publish). Two runs over
the same account at once may lose one's record: a day then looks uncovered and is fetched
again by the next daily run; nothing is lost.
"""

from collections.abc import Iterable, Mapping
from datetime import date, timedelta

import polars as pl
import pyarrow as pa
from deltalake import CommitProperties, write_deltalake
from deltalake.exceptions import CommitFailedError
from tenacity import retry, retry_if_exception_type, stop_after_attempt, wait_random_exponential

from warehouse.lake import COMMIT_RETRIES, TABLE_PROPERTIES, Lake, sql_string
from warehouse.schemas import TABLES, Layout

COVERAGE = "_coverage"
ARROW_SCHEMA = pa.schema(
    [
        ("account_id", pa.string()),
        ("table_name", pa.string()),
        ("first_day", pa.date32()),
        ("last_day", pa.date32()),
    ]
)

Span = tuple[date, date]  # first and last day, inclusive
# (account, table) -> its spans, sorted and apart (not overlapping, not adjacent)
Spans = dict[tuple[str, str], list[Span]]


def merged(spans: Iterable[Span]) -> list[Span]:
    """`spans` as the fewest sorted spans covering the same days: overlapping or adjacent
    spans join."""
    joined: list[Span] = []
    for first, last in sorted(spans):
        if joined and first <= joined[-1][1] + timedelta(days=1):
            joined[-1] = (joined[-1][0], max(joined[-1][1], last))
        else:
            joined.append((first, last))
    return joined


def spans_of_days(days: Iterable[date]) -> list[Span]:
    return merged((day, day) for day in days)


def first_uncovered(spans: list[Span], first: date, last: date) -> date | None:
    """The first day of [first, last] no span covers, or None."""
    day = first
    for start, end in spans:
        if start > day:
            break
        day = max(day, end + timedelta(days=1))
    return day if day <= last else None


def read_coverage(lake: Lake, accounts: Iterable[str] | None = None) -> Spans:
    """Every recorded span (of `accounts` only, when given)."""
    table = lake.table(COVERAGE)
    if table is None:
        return {}
    rows = pl.from_arrow(table.to_pyarrow_table())
    if accounts is not None:
        rows = rows.filter(pl.col("account_id").is_in(list(accounts)))
    spans: Spans = {}
    for account, name, first, last in rows.sort("first_day").iter_rows():
        spans.setdefault((account, name), []).append((first, last))
    return {key: merged(value) for key, value in spans.items()}


@retry(
    retry=retry_if_exception_type(CommitFailedError),
    stop=stop_after_attempt(5),
    wait=wait_random_exponential(multiplier=0.05, max=2),
    reraise=True,
)
def record_coverage(lake: Lake, fetched: Mapping[tuple[str, str], list[Span]]) -> None:
    """Add `fetched` to what the lake records of those accounts, in one commit replacing their
    rows (read again on a conflict), then vacuum the rows it replaced unless history is kept."""
    if not fetched:
        return
    accounts = sorted({account for account, _ in fetched})
    spans = read_coverage(lake, accounts)
    for key, added in fetched.items():
        spans[key] = merged([*spans.get(key, []), *added])
    batch = pa.Table.from_pylist(
        [
            {"account_id": account, "table_name": name, "first_day": first, "last_day": last}
            for (account, name), held in sorted(spans.items())
            for first, last in held
        ],
        schema=ARROW_SCHEMA,
    )
    existing = lake.table(COVERAGE)
    predicate = f"account_id IN ({', '.join(sql_string(a) for a in accounts)})"
    write_deltalake(
        existing if existing is not None else lake.uri(COVERAGE),
        batch,
        mode="overwrite",
        predicate=predicate if existing is not None else None,
        configuration=TABLE_PROPERTIES if existing is None else None,
        commit_properties=CommitProperties(max_commit_retries=COMMIT_RETRIES),
    )
    lake.vacuum(COVERAGE, lake.keep_hours, orphan_hours=None)


def seed_coverage(lake: Lake) -> None:
    """Record, once, what a lake written before coverage was recorded holds: each account's
    rows of each dated table, from its first day to its last, taken as complete. Without it
    every account would look new, and be fetched again from the warehouse's first day."""
    if lake.table(COVERAGE) is not None:
        return
    spans: Spans = {}
    for name in lake.tables():
        if TABLES[name].layout is Layout.SNAPSHOT:
            continue
        held = (
            pl.scan_pyarrow_dataset(lake.dataset(name))
            .group_by("account_id")
            .agg(pl.col("date").min().alias("first"), pl.col("date").max().alias("last"))
            .collect()
        )
        for account, first, last in held.iter_rows():
            spans[(account, name)] = [(first, last)]
    record_coverage(lake, spans)
