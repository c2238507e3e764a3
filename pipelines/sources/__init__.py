"""Every source the warehouse extracts, and the tables each one feeds.

This is the one list that assets, the CLI and `adwh rebuild` are generated from; what a source
is, is `model.py` beside it.
"""

from collections.abc import Iterable
from datetime import UTC, datetime

import polars as pl

from pipelines.client.paging import Page
from pipelines.shaping import Context
from pipelines.sources.model import Output, Source
from pipelines.sources.streams import (
    WORKFLOWS,
    cursor_list,
    daily_metrics,
    listing_page,
    optimization_history,
    workflow_performance,
    workflows_and_campaigns,
)
from transforms.meaning import economics_status
from warehouse import schemas as s
from warehouse.spec import (
    CHANGE_LOG_RETENTION_DAYS,
    HISTORY_RETENTION_DAYS,
    STORE_CHANGES_PATH,
    STORE_CHANGES_RETENTION_DAYS,
)


def metrics(schema: s.TableSchema, output: Output | None = None) -> Source:
    return Source(schema.name, daily_metrics(schema.resource), (output or Output(schema),))


def listing(schema: s.TableSchema, params: dict | None = None) -> Source:
    return Source(schema.name, cursor_list(f"/v1/{schema.resource}", params), (Output(schema),))


def with_economics_status(frame: pl.DataFrame, context: Context) -> pl.DataFrame:
    return economics_status(frame, context.reference)


def dated_by_change(frame: pl.DataFrame, context: Context) -> pl.DataFrame:
    """The change log's partition is the day of `changed_at` (e-mail actors arrive here as
    pseudonyms already: pages are pseudonymized before they are landed)."""
    return frame.with_columns(pl.col("changed_at").dt.date().alias("date"))


def the_extracted_account(frame: pl.DataFrame, context: Context) -> pl.DataFrame:
    """`/v1/accounts` lists every account the key reaches (spec 4.3); each extracted account
    keeps its own row."""
    return frame.filter(pl.col("id") == pl.col("account_id"))


def within_request(page: Page) -> list[dict]:
    """A change log's rows of the days it was asked for. The parameters of the store change log
    are not shown (spec 4.9): a service that ignores `start_date` and `end_date` answers with
    rows of other days, which belong to other partitions and to other fetches."""
    first, last = page.params["start_date"], page.params["end_date"]
    days = ((row, _day_of(row.get("changed_at"))) for row in page.rows)
    return [row for row, day in days if day is None or first <= day <= last]


def _day_of(moment: object) -> str | None:
    """The UTC day of a timestamp as the service wrote it; None for a value that is not one,
    whose row is kept for typing to name, with its page."""
    if not isinstance(moment, str):
        return None
    try:
        parsed = datetime.fromisoformat(moment)
    except ValueError:
        return None
    if parsed.tzinfo is not None:
        parsed = parsed.astimezone(UTC)
    return parsed.date().isoformat()


def workflow_rows(page: Page) -> list[dict]:
    return page.rows if page.path == WORKFLOWS else []


def workflow_campaign_rows(page: Page) -> list[dict]:
    return page.rows if page.path != WORKFLOWS else []


def workflow_of_path(page: Page) -> dict[str, object]:
    """The workflow a page answers for, from its path `/v1/workflows/{id}/…` (none for the
    list of workflows, whose rows this output does not read)."""
    parts = page.path.split("/")
    return {"workflow": parts[3] if len(parts) > 4 else None}


def history_request(page: Page) -> dict[str, object]:
    """The campaign (from the path) and the day (from the query) a history page answers."""
    return {"campaign": page.path.split("/")[3], "date": page.params["start_date"]}


def other_changes(page: Page) -> list[dict]:
    """Spec 2.7 puts `other_changes` beside `data`, not in it: the answer's non-bid changes,
    not paged with the bid rows, so every page of one request may repeat them. They are read
    from the request's first page only."""
    if int(page.params.get("offset", 0)) > 0:
        return []
    rows = page.body.get("other_changes")
    return rows if isinstance(rows, list) else []


def cluster_products(page: Page) -> list[dict]:
    return [
        {"cluster": cluster["id"], "product": product}
        for cluster in page.rows
        for product in cluster.get("products") or []
    ]


def cluster_keywords(page: Page) -> list[dict]:
    return [
        {"cluster": cluster["id"], "polarity": polarity, **keyword}
        for cluster in page.rows
        for polarity, field in (("positive", "positiveKeywords"), ("negative", "negativeKeywords"))
        for keyword in cluster.get(field) or []
    ]


CATALOG = (
    Source(
        "accounts",
        listing_page(),
        (Output(s.ACCOUNTS, shape=the_extracted_account),),
    ),
    listing(s.CONNECTIONS),
    listing(s.COUNTRIES),
    listing(s.BRANDS),
    listing(s.PRODUCTS),
    listing(s.SELLER_PRODUCTS, {"expand[]": "salesRanks"}),
    listing(s.VENDOR_PRODUCTS, {"expand[]": ["salesRanks", "customerFeedback"]}),
    listing(s.ADVERTISING_PRODUCTS),
    Source(
        "clusters",
        cursor_list("/v1/clusters"),
        (
            Output(s.CLUSTERS),
            Output(s.CLUSTER_PRODUCTS, records=cluster_products, reads=("products",)),
            Output(
                s.CLUSTER_KEYWORDS,
                records=cluster_keywords,
                reads=("positiveKeywords", "negativeKeywords"),
            ),
        ),
    ),
)
AUTOMATION = (
    Source(
        "workflows",
        workflows_and_campaigns(),
        (
            Output(s.WORKFLOWS, records=workflow_rows),
            Output(
                s.WORKFLOW_CAMPAIGNS, records=workflow_campaign_rows, constants=workflow_of_path
            ),
        ),
        optional_scope="workflows:read",
    ),
    Source(
        "tasks",
        cursor_list("/v1/tasks"),
        (Output(s.TASKS),),
        optional_scope="tasks:read",
    ),
    Source(
        "task_items",
        cursor_list("/v1/task-items"),
        (Output(s.TASK_ITEMS),),
        optional_scope="tasks:read",
    ),
)
ADVERTISING = (
    listing(s.CAMPAIGNS, {"expand[]": "optimizationConfig"}),
    listing(s.PORTFOLIOS),
    listing(s.ADGROUPS),
    listing(s.TARGETS),
    listing(s.PRODUCT_ADS),
    listing(s.SEARCH_TERMS),
)
METRICS = (
    metrics(s.CAMPAIGN_METRICS),
    metrics(s.ADGROUP_METRICS),
    metrics(s.TARGET_METRICS),
    metrics(s.PRODUCT_AD_METRICS),
    metrics(s.SEARCH_TERM_METRICS),
    metrics(
        s.SELLER_PRODUCT_METRICS, Output(s.SELLER_PRODUCT_METRICS, shape=with_economics_status)
    ),
    metrics(s.VENDOR_PRODUCT_METRICS),
)
HISTORY = (
    Source(
        "optimization_history",
        optimization_history(),
        (
            Output(s.OPTIMIZATION_HISTORY, constants=history_request),
            Output(s.OPTIMIZATION_OTHER_CHANGES, records=other_changes, constants=history_request),
        ),
        retention_days=HISTORY_RETENTION_DAYS,
    ),
    Source(
        "advertising_changes",
        cursor_list("/v1/advertising-changes", dated=True),
        (Output(s.ADVERTISING_CHANGES, records=within_request, shape=dated_by_change),),
        retention_days=CHANGE_LOG_RETENTION_DAYS,
    ),
)
AUTOMATION_FACTS = (
    Source(
        "workflow_performance",
        workflow_performance(),
        (Output(s.WORKFLOW_PERFORMANCE, constants=workflow_of_path),),
        optional_scope="workflows:read",
    ),
)
STORES = (
    Source(
        "platform_changes",
        cursor_list(STORE_CHANGES_PATH, dated=True),
        (Output(s.PLATFORM_CHANGES, records=within_request, shape=dated_by_change),),
        retention_days=STORE_CHANGES_RETENTION_DAYS,
        optional_scope="platform:read",
    ),
)
CURRENT = (*CATALOG, *ADVERTISING, *AUTOMATION)
DATED = (*METRICS, *AUTOMATION_FACTS, *HISTORY, *STORES)
SOURCES: tuple[Source, ...] = (*CURRENT, *DATED)


def sources_of(tables: Iterable[str] | None = None) -> list[Source]:
    """The sources feeding any of `tables`, in the registry's order; every source when none is
    named. A source always feeds all its tables: one fetch, every table from it."""
    wanted = set(tables or ())
    if not wanted:
        return list(SOURCES)
    return [s for s in SOURCES if wanted & {o.schema.name for o in s.outputs}]
