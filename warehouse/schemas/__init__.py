"""One registry of table schemas: every column's type, where it comes from, and the table's keys.

One module per domain, each importing only the machinery beneath it (`metrics` also the
`workflow` column of `automation`): `columns` (kinds, their Polars and DuckDB types, `Column`),
`tables` (`Layout`, `TableSchema`, the columns every table shares, current-state tables and
their dated snapshots), `catalog` (the account, its reference data, products and clusters),
`advertising` (campaigns and the entities beneath them), `automation` (workflows, tasks),
`metrics` (the daily facts), `changes` (the optimizer's history and the change logs) and
`recorded` (what the runs record themselves: restatements). The rest of the project imports
what it reads from here, `warehouse.schemas`; `TABLES` holds every table by name.
"""

from warehouse.schemas.advertising import (
    ADGROUPS,
    CAMPAIGNS,
    PORTFOLIOS,
    PRODUCT_ADS,
    SEARCH_TERMS,
    TARGETS,
)
from warehouse.schemas.automation import TASK_ITEMS, TASKS, WORKFLOW_CAMPAIGNS, WORKFLOWS
from warehouse.schemas.catalog import (
    ACCOUNTS,
    ADVERTISING_PRODUCTS,
    BRANDS,
    CLUSTER_KEYWORDS,
    CLUSTER_PRODUCTS,
    CLUSTERS,
    CONNECTIONS,
    COUNTRIES,
    PRODUCTS,
    SELLER_PRODUCTS,
    VENDOR_PRODUCTS,
)
from warehouse.schemas.changes import (
    ADVERTISING_CHANGES,
    OPTIMIZATION_HISTORY,
    OPTIMIZATION_OTHER_CHANGES,
    PLATFORM_CHANGES,
)
from warehouse.schemas.columns import (
    DUCKDB_TYPES,
    MONEY_PRECISION,
    MONEY_SCALE,
    POLARS_TYPES,
    Column,
    ColumnChange,
    Kind,
    snake,
)
from warehouse.schemas.metrics import (
    ADGROUP_METRICS,
    CAMPAIGN_METRICS,
    PRODUCT_AD_METRICS,
    SEARCH_TERM_METRICS,
    SELLER_PRODUCT_METRICS,
    TARGET_METRICS,
    VENDOR_PRODUCT_METRICS,
    WORKFLOW_PERFORMANCE,
)
from warehouse.schemas.recorded import RESTATEMENT_KINDS, RESTATEMENTS
from warehouse.schemas.tables import (
    ACCOUNT_ID,
    EXTRACTED_AT,
    SNAPSHOTS_SUFFIX,
    Layout,
    TableSchema,
    snapshots_of,
)

TABLES: dict[str, TableSchema] = {
    t.name: t
    for t in (
        ACCOUNTS,
        CONNECTIONS,
        COUNTRIES,
        BRANDS,
        PRODUCTS,
        SELLER_PRODUCTS,
        VENDOR_PRODUCTS,
        ADVERTISING_PRODUCTS,
        CAMPAIGNS,
        PORTFOLIOS,
        ADGROUPS,
        TARGETS,
        PRODUCT_ADS,
        SEARCH_TERMS,
        CLUSTERS,
        CLUSTER_PRODUCTS,
        CLUSTER_KEYWORDS,
        CAMPAIGN_METRICS,
        ADGROUP_METRICS,
        TARGET_METRICS,
        PRODUCT_AD_METRICS,
        SEARCH_TERM_METRICS,
        SELLER_PRODUCT_METRICS,
        VENDOR_PRODUCT_METRICS,
        OPTIMIZATION_HISTORY,
        OPTIMIZATION_OTHER_CHANGES,
        ADVERTISING_CHANGES,
        WORKFLOWS,
        WORKFLOW_CAMPAIGNS,
        TASKS,
        TASK_ITEMS,
        WORKFLOW_PERFORMANCE,
        PLATFORM_CHANGES,
        RESTATEMENTS,
    )
}

__all__ = [
    "ACCOUNTS",
    "ACCOUNT_ID",
    "ADGROUPS",
    "ADGROUP_METRICS",
    "ADVERTISING_CHANGES",
    "ADVERTISING_PRODUCTS",
    "BRANDS",
    "CAMPAIGNS",
    "CAMPAIGN_METRICS",
    "CLUSTERS",
    "CLUSTER_KEYWORDS",
    "CLUSTER_PRODUCTS",
    "CONNECTIONS",
    "COUNTRIES",
    "DUCKDB_TYPES",
    "EXTRACTED_AT",
    "MONEY_PRECISION",
    "MONEY_SCALE",
    "OPTIMIZATION_HISTORY",
    "OPTIMIZATION_OTHER_CHANGES",
    "PLATFORM_CHANGES",
    "POLARS_TYPES",
    "PORTFOLIOS",
    "PRODUCTS",
    "PRODUCT_ADS",
    "PRODUCT_AD_METRICS",
    "RESTATEMENTS",
    "RESTATEMENT_KINDS",
    "SEARCH_TERMS",
    "SEARCH_TERM_METRICS",
    "SELLER_PRODUCTS",
    "SELLER_PRODUCT_METRICS",
    "SNAPSHOTS_SUFFIX",
    "TABLES",
    "TARGETS",
    "TARGET_METRICS",
    "TASKS",
    "TASK_ITEMS",
    "VENDOR_PRODUCTS",
    "VENDOR_PRODUCT_METRICS",
    "WORKFLOWS",
    "WORKFLOW_CAMPAIGNS",
    "WORKFLOW_PERFORMANCE",
    "Column",
    "ColumnChange",
    "Kind",
    "Layout",
    "TableSchema",
    "snake",
    "snapshots_of",
]
