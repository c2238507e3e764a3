"""What the CLI prints: the run's closing summary and the demo's table."""

from pathlib import Path

import duckdb
from rich import box
from rich.console import Console
from rich.table import Table

from launcher.execute import RunSummary, TableLine

# A terminal's own width; 80 columns elsewhere (a log, a pipe): the summary fits either.
console = Console() if Console().is_terminal else Console(width=80)

# Each measure with its header, short enough that the longest table name and every figure fit
# in 80 columns, never cut. Pages are the live progress's, per source (one may feed several
# tables); the summary says what each table got.
COLUMNS = {
    "rows": "rows",
    "partitions": "days",
    "credits": "credits",
    "retries": "retries",
    "rate_limited": "429s",
    "elapsed_s": "secs",
}


def print_summary(summary: RunSummary) -> None:
    """A line per table (its source's pages, credits, retries and time: one source may feed
    several tables), without borders, so that it fits 80 columns."""
    table = Table(
        title=f"{summary.start} .. {summary.end}",
        box=box.SIMPLE_HEAD,
        padding=(0, 0, 0, 1),
        pad_edge=False,
        show_edge=False,
    )
    names = [line.table for line in summary.tables]
    table.add_column("table", no_wrap=True, min_width=max(map(len, names), default=5))
    for header in COLUMNS.values():
        table.add_column(header, justify="right", no_wrap=True, min_width=len(header))
    for line in summary.tables:
        if "rows" not in line.metadata:
            continue  # the warehouse build: it has no rows of its own
        table.add_row(line.table, *(_figure(line.metadata.get(name)) for name in COLUMNS))
    if summary.reconciliation_credits:  # its sums are no table's reads, yet the run paid them
        credits = {"credits": summary.reconciliation_credits}
        table.add_row("(reconciliation)", *(_figure(credits.get(name)) for name in COLUMNS))
    table.caption = credits_line(summary)
    console.print(table)
    print_restatements(summary)


def print_restatements(summary: RunSummary) -> None:
    """A line per table whose days the service changed since the warehouse had them."""
    for line in restated_tables(summary):
        print_restated(line.table, line.metadata["restated"])


def restated_tables(summary: RunSummary) -> list[TableLine]:
    """The summary's lines of the tables the run restated days of."""
    return [line for line in summary.tables if line.metadata.get("restated", "none") != "none"]


def print_restated(table: str, restated: str) -> None:
    """`table: 3 days restated, sales +12.40 USD`; past the console's width, each amount on
    a line of its own rather than cut between a figure and its currency."""
    said = f"{table}: {restated}"
    if len(said) <= console.width:
        console.print(said, highlight=False)
        return
    head, *amounts = said.split(", ")
    console.print(head + ":", highlight=False)
    for amount in amounts:
        console.print(f"  {amount}", highlight=False, overflow="ignore", crop=False)


def _figure(value: object) -> str:
    if isinstance(value, float):  # seconds: tenths where they tell
        return f"{value:.1f}" if value < 100 else f"{value:,.0f}"
    if isinstance(value, int):
        return f"{value:,}"
    return "" if value is None else str(value)


def print_brief(summary: RunSummary) -> None:
    """The run in one line: what a newcomer needs of it (the demo)."""
    lines = [line for line in summary.tables if "rows" in line.metadata]
    rows = sum(int(line.metadata["rows"]) for line in lines)
    built = ", the warehouse built" if summary.warehouse_built else ""
    print(
        f"adwh: {len(lines)} tables, {rows:,} rows published{built}; "
        f"{summary.credits} credits spent"
    )
    restated = restated_tables(summary)
    if restated:  # the first table's line, and how many others: the rest is in the warehouse
        print_restated(restated[0].table, restated[0].metadata["restated"])
    if len(restated) > 1:
        print(f"adwh: {len(restated) - 1} other tables restated too (see mart_restatements)")


def credits_line(summary: RunSummary) -> str:
    """The run's cost: a table shows its source's, and one source may feed several tables."""
    budget = "" if summary.max_credits is None else f" of ADWH_MAX_CREDITS={summary.max_credits}"
    return f"credits spent by the run: {summary.credits}{budget}"


DEMO_SQL = """
SELECT date, currency, sum(cost) AS spend, sum(sales) AS sales,
       round(sum(cost) / nullif(sum(sales), 0), 4) AS acos
FROM campaign_metrics
GROUP BY date, currency
ORDER BY date DESC, currency
LIMIT 12
"""


def print_demo_table(home: Path, lake: str) -> None:
    """Where the lake (Delta tables) and the warehouse are, and what the warehouse holds."""
    # Plain lines: a path is never wrapped, so it can be copied whole.
    print(f"lake:      {lake if '://' in lake else Path(lake).resolve()} (Delta Lake)")
    print(f"warehouse: {(home / 'warehouse.duckdb').resolve()}")
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        relation = con.sql(DEMO_SQL)
        table = Table(title="spend and sales by day and currency (latest 12 rows)")
        for name in relation.columns:
            table.add_column(name, justify="right")
        for row in relation.fetchall():
            table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)
