"""What changed, and who changed it: the optimizer's history per campaign and day (spec 2.7,
4.7), the advertising change log (4.8) and the stores' change log (4.9). Dated by the day of
the change, and kept for as long as the warehouse is, past what the service remembers."""

from warehouse.schemas.columns import Column, Kind, field
from warehouse.schemas.tables import ACCOUNT_ID, EXTRACTED_AT, PLACE, Layout, TableSchema

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
    *PLACE,
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
