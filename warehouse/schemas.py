"""One registry of table schemas: every column's type, where it comes from, and the table's keys.

Types follow the contract: money DECIMAL (exact), dates DATE, timestamps TIMESTAMP (UTC), ratios
DOUBLE, counts BIGINT, known nested objects flattened with `_`, free-form objects kept as JSON.
"""

import re
from dataclasses import dataclass
from enum import StrEnum

import polars as pl

from warehouse.spec import (
    AD_PRODUCTS,
    ECONOMICS_AMOUNTS,
    ECONOMICS_STATUSES,
    ECONOMICS_UNITS,
    TASK_PRIORITIES,
)

MONEY_PRECISION, MONEY_SCALE = 18, 4


class Kind(StrEnum):
    ID = "id"  # the service's 24-hex identifier
    STRING = "string"
    MONEY = "money"  # a decimal string, or a JSON number read from its digits (spec 1, 2.2)
    RATIO = "ratio"  # a fraction, null on a zero denominator
    NUMBER = "number"
    COUNT = "count"
    DATE = "date"
    TIMESTAMP = "timestamp"
    BOOL = "bool"
    JSON = "json"
    STRINGS = "strings"
    NULL = "null"  # a field the service sent, so far only ever null: typed by its first value


POLARS_TYPES: dict[Kind, pl.DataType] = {
    Kind.ID: pl.String(),
    Kind.STRING: pl.String(),
    Kind.MONEY: pl.Decimal(MONEY_PRECISION, MONEY_SCALE),
    Kind.RATIO: pl.Float64(),
    Kind.NUMBER: pl.Float64(),
    Kind.COUNT: pl.Int64(),
    Kind.DATE: pl.Date(),
    Kind.TIMESTAMP: pl.Datetime("us"),
    Kind.BOOL: pl.Boolean(),
    Kind.JSON: pl.String(),
    Kind.STRINGS: pl.List(pl.String()),
    Kind.NULL: pl.Null(),
}

DUCKDB_TYPES: dict[Kind, str] = {
    Kind.ID: "VARCHAR",
    Kind.STRING: "VARCHAR",
    Kind.MONEY: f"DECIMAL({MONEY_PRECISION},{MONEY_SCALE})",
    Kind.RATIO: "DOUBLE",
    Kind.NUMBER: "DOUBLE",
    Kind.COUNT: "BIGINT",
    Kind.DATE: "DATE",
    Kind.TIMESTAMP: "TIMESTAMP",
    Kind.BOOL: "BOOLEAN",
    Kind.JSON: "JSON",
    Kind.STRINGS: "VARCHAR[]",
    Kind.NULL: "VARCHAR",  # DuckDB columns need a type; every value is NULL
}


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    source: tuple[str, ...]  # path in the service's record; () for columns we add
    enum: tuple[str, ...] = ()
    required: bool = False
    # Other paths a service may send the same value under, where the spec leaves the field's
    # name open: read when `source` holds nothing (`transforms/records.py`), and never taken
    # for a field of its own (`transforms/evolution.py`).
    also: tuple[tuple[str, ...], ...] = ()

    @property
    def sources(self) -> tuple[tuple[str, ...], ...]:
        """Every path the value may arrive under, `source` first; () for columns we add."""
        return (self.source, *self.also) if self.source else ()


def snake(name: str) -> str:
    """`adProduct` → `ad_product`, `optimizationConfig.objective.type` → `..._objective_type`."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name.replace(".", "_")).lower()


def field(
    path: str,
    kind: Kind,
    *,
    enum: tuple[str, ...] = (),
    required: bool = False,
    name: str | None = None,
    also: tuple[str, ...] = (),
) -> Column:
    """A column read from the service's field `path` (dots descend into nested objects), or
    from any path of `also` when the spec leaves the field's name open."""
    others = tuple(tuple(other.split(".")) for other in also)
    return Column(name or snake(path), kind, tuple(path.split(".")), enum, required, others)


@dataclass(frozen=True)
class ColumnChange:
    """A column the service's records added to a table, or widened (schema evolution)."""

    column: Column
    previous: Kind | None  # None: new


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
    # The lake table the warehouse loads it from, when not the one of its own name (the dated
    # snapshots of a current-state table: `snapshots_of`).
    lake_table: str = ""

    @property
    def column_names(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def polars_schema(self) -> dict[str, pl.DataType]:
        return {c.name: POLARS_TYPES[c.kind] for c in self.columns}

    def concat(self, frames: list[pl.DataFrame]) -> pl.DataFrame:
        """The frames as one; with none, an empty frame of this table's columns."""
        return pl.concat(frames) if frames else pl.DataFrame(schema=self.polars_schema)

    @property
    def lake_partitions(self) -> tuple[str, ...]:
        return ("date", "currency") if self.layout is Layout.DAILY_FACT else ("date",)

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def conformed(self, rows: pl.LazyFrame) -> pl.LazyFrame:
        """`rows` in this schema: a column they lack is NULL (written before the service sent
        it), a held one is cast straight to its type (never through a common supertype, which
        for integers and decimals would be a float)."""
        held = rows.collect_schema()
        return rows.select(
            pl.col(name).cast(dtype) if name in held else pl.lit(None, dtype).alias(name)
            for name, dtype in self.polars_schema.items()
        )

    def extended(self, extra: tuple[Column, ...]) -> "TableSchema":
        """This table with columns the service added (schema evolution) after the registry's;
        an extra column of a name already held replaces it in place (a widened type)."""
        if not extra:
            return self
        replacing = {c.name: c for c in extra}
        kept = tuple(replacing.pop(c.name, c) for c in self.columns)
        return TableSchema(
            self.name,
            self.resource,
            self.layout,
            kept + tuple(replacing.values()),
            self.natural_key,
            self.description,
            self.lake_table,
        )


ACCOUNT_ID = Column("account_id", Kind.ID, (), required=True)
EXTRACTED_AT = Column("_extracted_at", Kind.TIMESTAMP, (), required=True)
SNAPSHOT_DATE = Column("date", Kind.DATE, ())
SNAPSHOTS_SUFFIX = "_snapshots"
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
        field("budget.amount", Kind.MONEY),
        field("budget.currency", Kind.STRING),
        field("budget.period", Kind.STRING),
        field("bidStrategy", Kind.STRING),
        field("portfolioId", Kind.STRING),  # spec 2.2: a string, not an identifier
        field("createdAt", Kind.TIMESTAMP),
        field("updatedAt", Kind.TIMESTAMP),
        field(_OPT + "aiEnabled", Kind.BOOL),
        field(_OPT + "objective.type", Kind.STRING),
        field(_OPT + "objective.value", Kind.NUMBER),
        field(_OPT + "objective.maxAcosPct", Kind.NUMBER),
        field(_OPT + "limits.minBid", Kind.MONEY),
        field(_OPT + "limits.maxBid", Kind.MONEY),
        field(_OPT + "limits.placementCapPercent", Kind.NUMBER),
        field(_OPT + "limits.minSpendBeforeNegative", Kind.MONEY),
        field(_OPT + "budget.dailyBudget", Kind.MONEY),
        field(_OPT + "budget.monthlyBudget", Kind.MONEY),
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


def snapshot(
    name: str,
    resource: str,
    description: str,
    *columns: Column,
    key: tuple[str, ...] = ("account_id", "id"),
) -> TableSchema:
    """A current-state table: one row per record of a cursor list."""
    return TableSchema(
        name, resource, Layout.SNAPSHOT, (ACCOUNT_ID, *columns, EXTRACTED_AT), key, description
    )


def snapshots_of(schema: TableSchema) -> TableSchema:
    """Every dated snapshot the lake keeps of current-state table `schema`, one per account and
    day a run took it, as the warehouse holds them for the entity history models
    (`warehouse/dbt/models/history/`): the table's columns, dated by the snapshot's day."""
    account, *rest = schema.columns
    return TableSchema(
        f"{schema.name}{SNAPSHOTS_SUFFIX}",
        schema.resource,
        Layout.DATED,
        (account, SNAPSHOT_DATE, *rest),
        (*schema.natural_key, "date"),
        f"Every snapshot of `{schema.name}` the runs took, one per account and day (`date`): "
        f"the history models read it. {schema.description}",
        lake_table=schema.name,
    )


def daily_fact(
    name: str,
    resource: str,
    description: str,
    entity: tuple[Column, ...],
    measures: tuple[Column, ...],
    key: tuple[str, ...],
) -> TableSchema:
    """A daily fact: entity fields, the date and currency keys, the measures."""
    return TableSchema(
        name,
        resource,
        Layout.DAILY_FACT,
        (ACCOUNT_ID, *entity, *_fact_keys(), *measures, EXTRACTED_AT),
        key,
        description,
    )


TIMESTAMPS = (field("createdAt", Kind.TIMESTAMP), field("updatedAt", Kind.TIMESTAMP))
PLACE = (field("connection", Kind.ID), field("country", Kind.ID))

ACCOUNTS = snapshot(
    "accounts",
    "accounts",
    "The accounts extracted, one row each, with their names (spec 2.8). An agency key reaches "
    "several; `connections` lists the connections each one shares.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    field("connections", Kind.STRINGS),
)
CONNECTIONS = snapshot(
    "connections",
    "connections",
    "Connections of the account (seller, vendor, advertising profiles, stores) as they are now.",
    field("id", Kind.ID, required=True),
    field("type", Kind.STRING),
    field("name", Kind.STRING),
    field("active", Kind.BOOL),
    field("countries", Kind.STRINGS),
    field("createdAt", Kind.TIMESTAMP),
)
COUNTRIES = snapshot(
    "countries",
    "countries",
    "Marketplace countries: two-letter code, name, marketplace id.",
    field("id", Kind.ID, required=True),
    field("code", Kind.STRING),
    field("name", Kind.STRING),
    field("marketplaceId", Kind.STRING),
)
BRANDS = snapshot(
    "brands",
    "product-brands",
    "Product brands of the account's catalog.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
)
PRODUCTS = snapshot(
    "products",
    "products",
    "Catalog products: identifiers (ASIN, SKU, EAN …), brand, place.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("ean", Kind.STRING),
    field("upc", Kind.STRING),
    field("gtin", Kind.STRING),
    field("platform", Kind.STRING),
    field("type", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *TIMESTAMPS,
)
SELLER_PRODUCTS = snapshot(
    "seller_products",
    "marketplace-seller-products",
    "Seller listings as the marketplace shows them; the named blobs (pricing, buy box, FBA "
    "inventory …) are kept as JSON because their inner shape is not specified.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *(
        field(blob, Kind.JSON)
        for blob in (
            "sellerCentralInfo",
            "catalogPublicInfo",
            "pricing",
            "buyboxB2C",
            "buyboxB2B",
            "fbaInventory",
            "aplusContent",
            "competitivePriceSummary",
            "fbaLocalStock",
            "salesRanks",
        )
    ),
    field("suppressed", Kind.BOOL),
    field("amazonStatus", Kind.STRING),
    field("publicParentSKU", Kind.STRING),
    field("publicParentASIN", Kind.STRING),
    field("publicIsParentASIN", Kind.BOOL),
    field("backendParentSKU", Kind.STRING),
    field("backendParentASIN", Kind.STRING),
    field("backendIsParentASIN", Kind.BOOL),
    *TIMESTAMPS,
)
VENDOR_PRODUCTS = snapshot(
    "vendor_products",
    "marketplace-vendor-products",
    "Vendor listings; free-form blobs kept as JSON.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    *(
        field(blob, Kind.JSON)
        for blob in (
            "vendorCentralInfo",
            "catalogPublicInfo",
            "aplusContent",
            "inventory",
            "salesRanks",
            "customerFeedback",
        )
    ),
    *TIMESTAMPS,
)
ADVERTISING_PRODUCTS = snapshot(
    "advertising_products",
    "marketplace-advertising-products",
    "Products as the advertising console sees them: availability, eligibility, basis price.",
    field("id", Kind.ID, required=True),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("title", Kind.STRING),
    field("active", Kind.BOOL),
    *PLACE,
    field("brand", Kind.ID),
    field("availability", Kind.STRING),
    field("eligibilityStatus", Kind.STRING),
    field("ineligibilityCodes", Kind.STRINGS),
    field("ineligibilityReasons", Kind.STRINGS),
    field("basisPrice.amount", Kind.MONEY),
    field("basisPrice.currency", Kind.STRING),
    field("bestSellerRank", Kind.COUNT),
    field("firstAvailabilityDate", Kind.TIMESTAMP),
    field("categoryName", Kind.STRING),
    field("brandName", Kind.STRING),
    field("variationList", Kind.STRINGS),
    *TIMESTAMPS,
)
PORTFOLIOS = snapshot(
    "portfolios",
    "portfolios",
    "Portfolios: budget caps shared by campaigns, in the marketplace's currency.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    field("state", Kind.STRING),
    field("budget.policy", Kind.STRING),
    field("budget.amount", Kind.MONEY),
    field("budget.startDate", Kind.DATE),
    field("budget.endDate", Kind.DATE),
    field("createdAt", Kind.TIMESTAMP),
)
ADGROUPS = snapshot(
    "adgroups",
    "adgroups",
    "Ad groups; `default_bid` is NULL for SB, which has none.",
    field("id", Kind.ID, required=True),
    field("adGroupId", Kind.STRING),
    field("name", Kind.STRING),
    field("campaign", Kind.ID),
    field("adProduct", Kind.STRING, enum=AD_PRODUCTS),
    *PLACE,
    field("state", Kind.STRING),  # spec 3: values beyond those named: not shown
    field("defaultBid", Kind.MONEY),
    *TIMESTAMPS,
)
TARGETS = snapshot(
    "targets",
    "targets",
    "Targets (keywords, products, categories, audiences …); negative targets have no bid.",
    field("id", Kind.ID, required=True),
    field("targetId", Kind.STRING),
    field("adProduct", Kind.STRING, enum=AD_PRODUCTS),
    field("campaign", Kind.ID),
    field("adGroup", Kind.ID),
    *PLACE,
    field("state", Kind.STRING),  # spec 3: values beyond those named: not shown
    field("targetType", Kind.STRING),
    field("negative", Kind.BOOL),
    field("keywordText", Kind.STRING),
    field("matchType", Kind.STRING),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("productMatchType", Kind.STRING),
    field("category", Kind.STRING),
    field("productBrand", Kind.STRING),
    field("productPriceGreaterThan", Kind.NUMBER),
    field("productPriceLessThan", Kind.NUMBER),
    field("productRatingGreaterThan", Kind.NUMBER),
    field("productRatingLessThan", Kind.NUMBER),
    field("productAgeRange", Kind.STRING),
    field("productPrimeShippingEligible", Kind.BOOL),
    field("themeMatchType", Kind.STRING),
    field("event", Kind.STRING),
    field("lookback", Kind.COUNT),
    field("audienceId", Kind.STRING),
    field("contentCategoryId", Kind.STRING),
    field("locationId", Kind.STRING),
    field("expression", Kind.STRING),
    field("bid", Kind.MONEY),
    *TIMESTAMPS,
)
PRODUCT_ADS = snapshot(
    "product_ads",
    "product-ads",
    "Product ads (SP and SD; SB has none).",
    field("id", Kind.ID, required=True),
    field("adProduct", Kind.STRING, enum=("SP", "SD")),
    field("adId", Kind.STRING),
    *PLACE,
    field("campaign", Kind.ID),
    field("adGroup", Kind.ID),
    field("product", Kind.ID),
    field("asin", Kind.STRING),
    field("sku", Kind.STRING),
    field("state", Kind.STRING, enum=STATES),
    field("adType", Kind.STRING),
    field("deliveryStatus", Kind.STRING),
    field("deliveryReasons", Kind.STRINGS),
    *TIMESTAMPS,
)
SEARCH_TERMS = snapshot(
    "search_terms",
    "search-terms",
    "Shopper search terms that triggered the account's ads.",
    field("id", Kind.ID, required=True),
    field("searchTerm", Kind.STRING),
    field("adProduct", Kind.STRING, enum=AD_PRODUCTS),
    field("campaign", Kind.ID),
    field("adGroup", Kind.ID),
    field("target", Kind.ID),
    *PLACE,
    field("targetType", Kind.STRING),
    field("matchType", Kind.STRING),
    field("createdAt", Kind.TIMESTAMP),
)
CLUSTERS = snapshot(
    "clusters",
    "clusters",
    "Keyword clusters kept by the service: a named group of products with keywords.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    *TIMESTAMPS,
)
CLUSTER_PRODUCTS = snapshot(
    "cluster_products",
    "clusters",
    "One row per cluster and product. A product may sit in several clusters and counts in "
    "full in each one's figures.",
    field("cluster", Kind.ID, required=True),
    field("product", Kind.ID, required=True),
    key=("account_id", "cluster", "product"),
)
CLUSTER_KEYWORDS = snapshot(
    "cluster_keywords",
    "clusters",
    "One row per cluster and keyword; `polarity` is positive or negative.",
    field("cluster", Kind.ID, required=True),
    field("polarity", Kind.STRING, enum=("positive", "negative"), required=True),
    field("keyword", Kind.STRING, required=True),
    field("language", Kind.STRING),
    field("score", Kind.NUMBER),
    field("purpose", Kind.STRING),
    key=("account_id", "cluster", "polarity", "keyword"),
)

# Spec 4.9: workflows, the campaigns each really processes, tasks and their suggestions. Their
# record fields beyond those the spec names are "not shown": what the sandbox sends is read into
# typed columns, and any other field a service sends becomes a column (schema evolution).
WORKFLOW = Column("workflow", Kind.ID, (), required=True)  # from the request's path
WORKFLOWS = snapshot(
    "workflows",
    "workflows",
    "The account's own automation workflows as they are now (global templates are never "
    "listed): what each is (`description_key`), the template it was cloned from, whether it is "
    "active, and its resolved configuration: schedule, node graph and variables with their "
    "effective values and `overridden` flags, kept as JSON.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    field("name_key", Kind.STRING),
    field("description_key", Kind.STRING),
    field("template", Kind.ID),
    field("active", Kind.BOOL),
    field("selection", Kind.STRING),
    field("schedule", Kind.JSON),
    field("variables", Kind.JSON),
    field("nodes", Kind.JSON),
    *TIMESTAMPS,
)
WORKFLOW_CAMPAIGNS = snapshot(
    "workflow_campaigns",
    "workflows/{id}/campaigns",
    "The campaigns each workflow really processes, one row per workflow and campaign: `gate` "
    "says why the campaign is in (force-include, auto-selection and the workflow's filter), "
    "`optimization_config` is the campaign's effective optimizer configuration (JSON). A "
    "workflow that processes nothing has no row.",
    WORKFLOW,
    field("id", Kind.ID, required=True, name="campaign"),
    field("name", Kind.STRING),
    field("adProduct", Kind.STRING, enum=AD_PRODUCTS),
    field("state", Kind.STRING),
    field("gate", Kind.JSON),
    field("optimizationConfig", Kind.JSON),
    key=("account_id", "workflow", "campaign"),
)
TASKS = snapshot(
    "tasks",
    "tasks",
    "Tasks as they are now: a title, a priority, an expiry, a status (pending, resolved or "
    "discarded; a status after apply is not named by the spec and is kept as sent) and up to "
    "50 suggestions (task_items).",
    field("id", Kind.ID, required=True),
    field("title", Kind.STRING),
    field("description", Kind.STRING),
    field("priority", Kind.STRING, enum=TASK_PRIORITIES),
    field("status", Kind.STRING),
    field("expiresAt", Kind.TIMESTAMP),
    field("itemCount", Kind.COUNT),
    field("resolvedAt", Kind.TIMESTAMP),
    *TIMESTAMPS,
)
TASK_ITEMS = snapshot(
    "task_items",
    "task-items",
    "Suggestions of tasks, one row each: the entity it points at (`entity_type` products, "
    "campaigns, adgroups, targets, search_terms or product_ads), its status (pending, approved, "
    "rejected), the value the reviewer gave (`applied_value`) and, once applied, `applied_at` "
    "or `apply_error`. Campaign suggestions carry `field_path` (dailyBudget, state or name); the "
    "values are JSON, as their type depends on the field.",
    field("id", Kind.ID, required=True),
    field("task", Kind.ID),
    field("entityType", Kind.STRING),
    field("entity", Kind.ID),
    field("displayName", Kind.STRING),
    field("displayId", Kind.STRING),
    field("problemLabel", Kind.STRING),
    field("fieldPath", Kind.STRING),
    field("currentValue", Kind.JSON),
    field("suggestedValue", Kind.JSON),
    field("appliedValue", Kind.JSON),
    field("status", Kind.STRING),
    field("appliedAt", Kind.TIMESTAMP),
    field("applyError", Kind.STRING),
    *TIMESTAMPS,
)

AD_PLACE = (field("connection", Kind.ID), field("country", Kind.ID))
ADVERTISING_KEY = ("ad_product", "currency", "date")


def advertising_fact(
    name: str, resource: str, entity_key: str, description: str, *entity: Column
) -> TableSchema:
    return daily_fact(
        name,
        resource,
        description,
        (*entity, *AD_PLACE),
        (field("ad_product", Kind.STRING, enum=AD_PRODUCTS, required=True), *ADVERTISING_MEASURES),
        ("account_id", entity_key, *ADVERTISING_KEY),
    )


ADGROUP_METRICS = advertising_fact(
    "adgroup_metrics",
    "adgroup-metrics",
    "ad_group",
    "Daily advertising performance per ad group, currency and ad product.",
    field("ad_group", Kind.ID, required=True),
    field("campaign", Kind.ID),
)
TARGET_METRICS = advertising_fact(
    "target_metrics",
    "target-metrics",
    "target",
    "Daily advertising performance per target, currency and ad product.",
    field("target", Kind.ID, required=True),
    field("target_type", Kind.STRING),
    field("match_type", Kind.STRING),
    field("target_expression", Kind.STRING),
    field("campaign", Kind.ID),
    field("ad_group", Kind.ID),
)
PRODUCT_AD_METRICS = advertising_fact(
    "product_ad_metrics",
    "product-ad-metrics",
    "product_ad",
    "Daily advertising performance per product ad; `cluster` is one of the product's clusters.",
    field("product_ad", Kind.ID, required=True),
    field("product", Kind.ID),
    field("asin", Kind.STRING),
    field("campaign", Kind.ID),
    field("ad_group", Kind.ID),
    field("cluster", Kind.ID),
    field("cluster_name", Kind.STRING),
)
SEARCH_TERM_METRICS = advertising_fact(
    "search_term_metrics",
    "search-term-metrics",
    "search_term",
    "Daily advertising performance per shopper search term, keyed as the service keys rows.",
    field("search_term", Kind.STRING, required=True),  # spec 2.6: row fields not shown
    field("search_term_text", Kind.STRING),
    field("target", Kind.ID),
    field("match_type", Kind.STRING),
    field("campaign", Kind.ID),
    field("ad_group", Kind.ID),
)
SELLER_PRODUCT_METRICS = daily_fact(
    "seller_product_metrics",
    "seller-product-metrics",
    "Daily seller sales, traffic and economics per product. Traffic is NULL when the "
    "marketplace did not report it; the economics block arrives 48-72 hours late: "
    "`economics_status` says available, pending (may still arrive) or missing.",
    (
        field("product", Kind.ID),
        field("asin", Kind.STRING, required=True),
        field("sku", Kind.STRING),
        field("connection", Kind.ID, required=True),
        field("country", Kind.ID, required=True),
        field("cluster", Kind.ID),
        field("cluster_name", Kind.STRING),
    ),
    (
        field("sales", Kind.MONEY),
        field("units", Kind.COUNT),
        field("orders", Kind.COUNT),
        field("sessions", Kind.COUNT),
        field("page_views", Kind.COUNT),
        field("buy_box_percentage", Kind.RATIO),
        field("conversion_rate", Kind.RATIO),
        field("rank", Kind.COUNT),
        *(field(name, Kind.MONEY) for name in ECONOMICS_AMOUNTS),
        # (net_units, refunded_units): net units go negative when refunds exceed sales
        *(field(n, k) for n, k in zip(ECONOMICS_UNITS, (Kind.NUMBER, Kind.COUNT), strict=True)),
        Column("economics_status", Kind.STRING, (), ECONOMICS_STATUSES, True),
        field("stock", Kind.COUNT),
        field("fulfillment_channel", Kind.STRING),
        field("price", Kind.MONEY),
        field("days_of_coverage", Kind.NUMBER),
        field("b2b_sales", Kind.MONEY),
        field("b2b_units", Kind.COUNT),
        field("b2b_order_items", Kind.COUNT),
        field("b2b_sessions", Kind.COUNT),
        field("b2b_page_views", Kind.COUNT),
        field("b2b_buy_box_percentage", Kind.RATIO),
    ),
    ("account_id", "asin", "sku", "connection", "country", "currency", "date"),
)
VENDOR_PRODUCT_METRICS = daily_fact(
    "vendor_product_metrics",
    "vendor-product-metrics",
    "Daily vendor figures per product: ordered, shipped and net received (sourcing reports no "
    "ordered figures); glance views are the traffic measure. There is no single sales field.",
    (
        field("product", Kind.ID),
        field("asin", Kind.STRING, required=True),
        field("program", Kind.STRING),
        field("connection", Kind.ID, required=True),
        field("country", Kind.ID, required=True),
        field("cluster", Kind.ID),
        field("cluster_name", Kind.STRING),
    ),
    (
        field("ordered_revenue", Kind.MONEY),
        field("ordered_units", Kind.COUNT),
        field("shipped_revenue", Kind.MONEY),
        field("shipped_cogs", Kind.MONEY),
        field("shipped_units", Kind.COUNT),
        field("net_received_revenue", Kind.MONEY),
        field("net_received_units", Kind.NUMBER),
        field("glance_views", Kind.COUNT),
        field("rank", Kind.COUNT),
        field("on_hand_sellable_units", Kind.COUNT),
        field("open_order_sellable_units", Kind.COUNT),
    ),
    ("account_id", "asin", "connection", "country", "currency", "date"),
)
WORKFLOW_PERFORMANCE = daily_fact(
    "workflow_performance",
    "workflows/{id}/performance",
    "Daily performance of the campaigns each workflow processes, per workflow, campaign, "
    "currency and ad product, with the objective the optimizer works to beside it "
    "(`objective_type`, `objective_value`) and `optimizing_since`: figures before that day are "
    "not the workflow's doing (mart_workflow_performance leaves them out).",
    (WORKFLOW, field("campaign", Kind.ID, required=True)),
    (
        field("ad_product", Kind.STRING, enum=AD_PRODUCTS),
        field("objective_type", Kind.STRING),
        field("objective_value", Kind.NUMBER),
        field("optimizing_since", Kind.DATE),
        *ADVERTISING_MEASURES,
    ),
    ("account_id", "workflow", "campaign", "ad_product", "currency", "date"),
)
# The campaign and the day a history page was asked for: constants of the request.
HISTORY_DAY = Column("date", Kind.DATE, (), required=True)
HISTORY_CAMPAIGN = Column("campaign", Kind.ID, (), required=True)
OPTIMIZATION_HISTORY = TableSchema(
    "optimization_history",
    "campaigns/{id}/optimization-history",
    Layout.DATED,
    (
        ACCOUNT_ID,
        HISTORY_CAMPAIGN,
        HISTORY_DAY,
        field("id", Kind.ID, required=True),
        field("entity_type", Kind.STRING),
        field("adgroup", Kind.ID),
        field("first_bid", Kind.MONEY),
        field("last_bid", Kind.MONEY),
        field("net_change", Kind.MONEY),
        field("direction", Kind.STRING),
        field("change_count", Kind.COUNT),
        field("first_change_at", Kind.TIMESTAMP),
        field("last_change_at", Kind.TIMESTAMP),
        field("last_reason", Kind.STRING),
        field("last_scenario", Kind.STRING),
        EXTRACTED_AT,
    ),
    ("account_id", "campaign", "id", "date"),
    "The optimizer's bid changes per target and day, net of the day's moves (a bid raised then "
    "capped back is `unchanged` with 2 changes). Kept for as long as you keep the warehouse; "
    "the service forgets after 90 days.",
)
OPTIMIZATION_OTHER_CHANGES = TableSchema(
    "optimization_other_changes",
    "campaigns/{id}/optimization-history",
    Layout.DATED,
    (
        ACCOUNT_ID,
        HISTORY_CAMPAIGN,
        HISTORY_DAY,
        field("entity_type", Kind.STRING, required=True),
        field("entity_id", Kind.ID, required=True),
        field("change_type", Kind.STRING, required=True),
        field("count", Kind.COUNT),
        field("last_change_at", Kind.TIMESTAMP),
        field("last_reason", Kind.STRING),
        EXTRACTED_AT,
    ),
    ("account_id", "campaign", "entity_type", "entity_id", "change_type", "date"),
    "The optimizer's non-bid changes per day: harvested keywords, negatives, placement "
    "adjustments, blocked or quarantined targets.",
)


def change_log(name: str, resource: str, description: str, *columns: Column) -> TableSchema:
    """A change log: one row per change (`id`), dated by the day of its `changed_at`."""
    return TableSchema(
        name,
        resource,
        Layout.DATED,
        (
            ACCOUNT_ID,
            field("id", Kind.ID, required=True),
            Column("date", Kind.DATE, (), required=True),
            field("changed_at", Kind.TIMESTAMP, required=True),
            *columns,
            EXTRACTED_AT,
        ),
        ("account_id", "id"),
        description,
    )


ADVERTISING_CHANGES = change_log(
    "advertising_changes",
    "advertising-changes",
    "Every change sent to the marketplace, applied or failed, whatever its origin; "
    "`correlation_id` joins the optimizer's history. E-mail addresses in `actor` are stored as "
    "keyed pseudonyms (`person:…`), never in clear.",
    field("entity_type", Kind.STRING),
    # Spec 4.8 names the log's filters, not its rows' fields (`campaign` and `adgroup` are
    # both): a service may name the changed entity as its filter is, `entity`.
    field("entity_id", Kind.ID, also=("entity", "entityId")),
    field("campaign", Kind.ID),
    field("adgroup", Kind.ID),
    *AD_PLACE,
    field("field", Kind.STRING),
    field("old_value", Kind.STRING),
    field("new_value", Kind.STRING),
    field("source", Kind.STRING),
    field("actor", Kind.STRING),
    field("result", Kind.STRING),
    field("error", Kind.STRING),
    field("correlation_id", Kind.STRING),
)

PLATFORM_CHANGES = change_log(
    "platform_changes",
    "platform-changes",
    "Changes made in the connected online stores (the store change log), kept for as long as "
    "you keep the warehouse; the service forgets after 12 months. E-mail addresses are stored "
    "as keyed pseudonyms (`person:…`), never in clear.",
    field("connection", Kind.ID),
    field("platform", Kind.STRING),
    field("resource_type", Kind.STRING),
    field("resource_id", Kind.STRING),
    field("action", Kind.STRING),
    field("field", Kind.STRING),
    field("old_value", Kind.STRING),
    field("new_value", Kind.STRING),
    field("source", Kind.STRING),
    field("actor", Kind.STRING),
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
    )
}

# What a replace changed in a day already published (transforms/restatements.py): not read from
# the service, but recorded by the runs as they replace days, before each commit.
RESTATEMENT_KINDS = ("appeared", "disappeared", "arrival", "correction")
RESTATEMENTS = TableSchema(
    "restatements",
    "",
    Layout.DATED,
    (
        Column("table_name", Kind.STRING, (), required=True),
        ACCOUNT_ID,
        Column("date", Kind.DATE, (), required=True),
        Column("currency", Kind.STRING, (), required=True),
        Column("row_key", Kind.JSON, (), required=True),
        Column("column_name", Kind.STRING, (), required=True),
        Column("value_before", Kind.STRING, ()),
        Column("value_after", Kind.STRING, ()),
        Column("kind", Kind.STRING, (), RESTATEMENT_KINDS, True),
        Column("before_extracted_at", Kind.TIMESTAMP, ()),
        Column("run_id", Kind.STRING, ()),
        EXTRACTED_AT,
    ),
    ("table_name", "account_id", "date", "currency", "row_key", "column_name", "_extracted_at"),
    "What the service said about a day and what it says now: one row per cell a run changed in "
    "a day it had already published (append-only). `kind` is `correction` (the service revised "
    "a figure), `arrival` (seller economics first reported, spec 2.9: they come 48-72 hours "
    "late), `appeared` or `disappeared` (a row the day newly has, or no longer has: each of its "
    "reported cells). Values are exact text (cast a money column's to DECIMAL); "
    "`before_extracted_at` and `_extracted_at` say when each was fetched, `run_id` which run "
    "restated it. `date` is the day restated.",
)
TABLES[RESTATEMENTS.name] = RESTATEMENTS
