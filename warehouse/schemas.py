"""One registry of table schemas: every column's type, where it comes from, and the table's keys.

Types follow the contract: money DECIMAL (exact), dates DATE, timestamps TIMESTAMP (UTC), ratios
DOUBLE, counts BIGINT, known nested objects flattened with `_`, free-form objects kept as JSON.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

import polars as pl

MONEY_PRECISION, MONEY_SCALE = 18, 4


class Kind(StrEnum):
    ID = "id"  # the service's 24-hex identifier
    STRING = "string"
    MONEY = "money"  # a decimal string
    DECIMAL_NUMBER = "decimal_number"  # money the spec sends as a JSON number (budgets)
    RATIO = "ratio"  # a fraction, null on a zero denominator
    NUMBER = "number"
    COUNT = "count"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOL = "bool"
    JSON = "json"
    STRINGS = "strings"


POLARS_TYPES: dict[Kind, pl.DataType] = {
    Kind.ID: pl.String(),
    Kind.STRING: pl.String(),
    Kind.MONEY: pl.Decimal(MONEY_PRECISION, MONEY_SCALE),
    Kind.DECIMAL_NUMBER: pl.Decimal(MONEY_PRECISION, MONEY_SCALE),
    Kind.RATIO: pl.Float64(),
    Kind.NUMBER: pl.Float64(),
    Kind.COUNT: pl.Int64(),
    Kind.DATE: pl.Date(),
    Kind.TIMESTAMP: pl.Datetime("us"),
    Kind.BOOL: pl.Boolean(),
    Kind.JSON: pl.String(),
    Kind.STRINGS: pl.List(pl.String()),
}

DUCKDB_TYPES: dict[Kind, str] = {
    Kind.ID: "VARCHAR",
    Kind.STRING: "VARCHAR",
    Kind.MONEY: f"DECIMAL({MONEY_PRECISION},{MONEY_SCALE})",
    Kind.DECIMAL_NUMBER: f"DECIMAL({MONEY_PRECISION},{MONEY_SCALE})",
    Kind.RATIO: "DOUBLE",
    Kind.NUMBER: "DOUBLE",
    Kind.COUNT: "BIGINT",
    Kind.DATE: "DATE",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.BOOL: "BOOLEAN",
    Kind.JSON: "JSON",
    Kind.STRINGS: "VARCHAR[]",
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    source: tuple[str, ...]  # path in the service's record; () for columns we add
    enum: tuple[str, ...] = ()
    required: bool = False


def snake(name: str) -> str:
    """`adProduct` → `ad_product`, `optimizationConfig.objective.type` → `..._objective_type`."""
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name.replace(".", "_")).lower()


def field(
    path: str,
    kind: Kind,
    *,
    enum: tuple[str, ...] = (),
    required: bool = False,
    name: str | None = None,
) -> Column:
    """A column read from the service's field `path` (dots descend into nested objects)."""
    return Column(name or snake(path), kind, tuple(path.split(".")), enum, required)


class Layout(StrEnum):
    DAILY_FACT = "daily_fact"  # lake/<t>/date=/currency=/
    DATED = "dated"  # lake/<t>/date=/
    SNAPSHOT = "snapshot"  # current state; lake keeps one dated snapshot per run


@dataclass(frozen=True)
class TableSchema:
    name: str
    resource: str  # the service path below /v1/
    layout: Layout
    columns: tuple[Column, ...]
    natural_key: tuple[str, ...]
    description: str

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def polars_schema(self) -> dict[str, pl.DataType]:
        return {c.name: POLARS_TYPES[c.kind] for c in self.columns}

    @property
    def lake_partitions(self) -> tuple[str, ...]:
        return ("date", "currency") if self.layout is Layout.DAILY_FACT else ("date",)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)


ACCOUNT_ID = Column("account_id", Kind.ID, (), required=True)
EXTRACTED_AT = Column("_extracted_at", Kind.TIMESTAMP, (), required=True)
SNAPSHOT_DATE = Column("date", Kind.DATE, ())
AD_PRODUCTS = ("SP", "SB", "SD")
STATES = ("ENABLED", "PAUSED", "ARCHIVED", "OTHER")

ADVERTISING_MEASURES = (
    field("impressions", Kind.COUNT),
    field("clicks", Kind.COUNT),
    field("orders", Kind.COUNT),
    field("units", Kind.COUNT),
    field("cost", Kind.MONEY),
    field("sales", Kind.MONEY),
    field("cpc", Kind.MONEY),
    field("ctr", Kind.RATIO),
    field("acos", Kind.RATIO),
    field("roas", Kind.RATIO),
    field("conversion_rate", Kind.RATIO),
    field("new_to_brand_sales", Kind.MONEY),
    field("new_to_brand_purchases", Kind.COUNT),
    field("detail_page_views", Kind.COUNT),
    field("viewable_impressions", Kind.COUNT),
)


def _fact_keys() -> tuple[Column, ...]:
    return (
        field("date", Kind.DATE, required=True),
        field("currency", Kind.STRING, required=True),
    )


_OPT = "optimizationConfig."

CAMPAIGNS = TableSchema(
    name="campaigns",
    resource="campaigns",
    layout=Layout.SNAPSHOT,
    description="Campaigns as they are now, one row per campaign, with the optimizer "
    "configuration the service keeps for it flattened into optimization_config_* columns.",
    natural_key=("account_id", "id"),
    columns=(
        ACCOUNT_ID,
        field("id", Kind.ID, required=True),
        field("adProduct", Kind.STRING, enum=AD_PRODUCTS, required=True),
        field("campaignId", Kind.STRING),
        field("name", Kind.STRING),
        field("state", Kind.STRING, enum=STATES),
        field("connection", Kind.ID),
        field("country", Kind.ID),
        field("startDate", Kind.DATE),
        field("endDate", Kind.DATE),
        field("deliveryStatus", Kind.STRING),
        field("deliveryReasons", Kind.STRINGS),
        field("budget.amount", Kind.DECIMAL_NUMBER),
        field("budget.currency", Kind.STRING),
        field("budget.period", Kind.STRING),
        field("bidStrategy", Kind.STRING),
        field("portfolioId", Kind.ID),
        field("createdAt", Kind.TIMESTAMP),
        field("updatedAt", Kind.TIMESTAMP),
        field(_OPT + "aiEnabled", Kind.BOOL),
        field(_OPT + "objective.type", Kind.STRING),
        field(_OPT + "objective.value", Kind.NUMBER),
        field(_OPT + "objective.maxAcosPct", Kind.NUMBER),
        field(_OPT + "limits.minBid", Kind.DECIMAL_NUMBER),
        field(_OPT + "limits.maxBid", Kind.DECIMAL_NUMBER),
        field(_OPT + "limits.placementCapPercent", Kind.NUMBER),
        field(_OPT + "limits.minSpendBeforeNegative", Kind.DECIMAL_NUMBER),
        field(_OPT + "budget.dailyBudget", Kind.DECIMAL_NUMBER),
        field(_OPT + "budget.monthlyBudget", Kind.DECIMAL_NUMBER),
        field(_OPT + "harvesting.discoveryLevel", Kind.STRING),
        field(_OPT + "harvesting.competitorAsinTargeting", Kind.BOOL),
        field(_OPT + "harvesting.crossCampaign.enabled", Kind.BOOL),
        field(_OPT + "harvesting.crossCampaign.harvestGroupKey", Kind.STRING),
        field(_OPT + "harvesting.crossCampaign.role", Kind.STRING),
        field(_OPT + "linkedWorkflowDefinitionIds", Kind.STRINGS),
        field(_OPT + "excludedWorkflowDefinitionIds", Kind.STRINGS),
        field(_OPT + "workflowsOptOut", Kind.BOOL),
        field(_OPT + "warmingModeUntil", Kind.STRING),
        field(_OPT + "optimizeDate", Kind.STRING),
        field(_OPT + "optimizingSince", Kind.STRING),
        EXTRACTED_AT,
    ),
)

CAMPAIGN_METRICS = TableSchema(
    name="campaign_metrics",
    resource="campaign-metrics",
    layout=Layout.DAILY_FACT,
    description="Daily advertising performance per campaign, currency and ad product. Money is "
    "exact DECIMAL in the row's currency; ratios are fractions, NULL when their denominator is 0.",
    natural_key=("account_id", "campaign", "ad_product", "currency", "date"),
    columns=(
        ACCOUNT_ID,
        field("campaign", Kind.ID, required=True),
        field("connection", Kind.ID),
        field("country", Kind.ID),
        *_fact_keys(),
        field("ad_product", Kind.STRING, enum=AD_PRODUCTS, required=True),
        *ADVERTISING_MEASURES,
        field("top_of_search_is", Kind.RATIO),
        EXTRACTED_AT,
    ),
)

TABLES: dict[str, TableSchema] = {t.name: t for t in (CAMPAIGNS, CAMPAIGN_METRICS)}
