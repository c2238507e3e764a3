"""The daily facts (spec 2.6, 2.9, 2.10, 4.9): advertising performance per entity, seller and
vendor figures per product, and each workflow's performance; one row per entity, currency and
day, partitioned by both in the lake."""

from warehouse.schemas.automation import WORKFLOW
from warehouse.schemas.columns import Column, Kind, field
from warehouse.schemas.tables import ACCOUNT_ID, EXTRACTED_AT, PLACE, Layout, TableSchema
from warehouse.spec import AD_PRODUCTS, ECONOMICS_AMOUNTS, ECONOMICS_STATUSES, ECONOMICS_UNITS

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


ADVERTISING_KEY = ("ad_product", "currency", "date")


def advertising_fact(
    name: str, resource: str, entity_key: str, description: str, *entity: Column
) -> TableSchema:
    return daily_fact(
        name,
        resource,
        description,
        (*entity, *PLACE),
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
