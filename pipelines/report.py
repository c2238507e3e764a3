"""What the CLI prints: the run's closing summary and the demo's table."""

from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

from pipelines.execute import RunSummary

console = Console(width=120) if not Console().is_terminal else Console()

COLUMNS = (
    "rows",
    "partitions",
    "requests",
    "pages",
    "credits",
    "retries",
    "rate_limited",
    "elapsed_s",
)


def print_summary(summary: RunSummary) -> None:
    table = Table(title=f"{summary.start} .. {summary.end}")
    table.add_column("table")
    for name in COLUMNS:
        table.add_column(name, justify="right")
    for line in summary.tables:
        if "rows" not in line.metadata:
            continue  # the warehouse build: it has no rows of its own
        table.add_row(line.table, *(str(line.metadata.get(name, "")) for name in COLUMNS))
    table.caption = credits_line(summary)
    console.print(table)


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
    console.print(f"lake:      {lake if '://' in lake else Path(lake).resolve()} (Delta Lake)")
    console.print(f"warehouse: {(home / 'warehouse.duckdb').resolve()}")
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        relation = con.sql(DEMO_SQL)
        table = Table(title="spend and sales by day and currency (latest 12 rows)")
        for name in relation.columns:
            table.add_column(name, justify="right")
        for row in relation.fetchall():
            table.add_row(*("" if v is None else str(v) for v in row))
    console.print(table)
