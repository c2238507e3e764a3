"""What a sandbox variant changes inside records: extra fields, timestamps, money as text.

The spec names fields but never promises there are no others, and shows timestamps only as
"ISO 8601 UTC". A variant (`variants.py`) adds fields of every JSON type to every kind of
record, writes timestamps with fractional seconds or `+00:00`, and may name the change log's
entity as its filter is (`entity`) or in camelCase, so the pipeline meets what another honest
implementation could send.

Every value is a pure function of the variant's number, the field's name and the record's key
(an entity's id; for a metrics row its entity, dimensions, currency and date), so a record
carries the same extra values on every page and in every window that holds it.
"""

import re
from dataclasses import dataclass
from datetime import date, timedelta

from sandbox.assembly import Account
from sandbox.hashing import scalar
from sandbox.reference import money, quarter_start
from sandbox.variant_money import exponent_of, money_as_text

JSON_TYPES = (
    "string",
    "integer",
    "number",  # never an integer value: 12.37
    "decimal",  # a decimal string in the record's currency's digits: "12.37", "1237" in yen
    "boolean",
    "null",
    "object",
    "array",
    "date",  # YYYY-MM-DD
    "timestamp",  # in the variant's timestamp form
)
WIDENING = "widening"  # an integer on most records, a decimal string ("12.5") on some later ones
# Names per type, camelCase; snake_case kinds get them converted. None is a field the spec or
# the sandbox uses (tests/sandbox/test_sandbox_variants.py checks).
NAMES = {
    "string": ("sourceSystem", "externalRef", "ownerTeam", "regionLabel"),
    "integer": ("revisionNumber", "syncVersion", "shardIndex"),
    "number": ("qualityScore", "confidenceLevel", "weightFactor"),
    "decimal": ("exchangeRate", "taxRate", "scoreText"),
    "boolean": ("isTest", "isSynced", "hasWarnings"),
    "null": ("legacyCode", "reservedSlot", "deprecatedNote"),
    "object": ("metadata", "syncInfo", "attributes"),
    "array": ("labels", "tags", "warnings"),
    "date": ("reportDay", "effectiveDay", "snapshotDay"),
    "timestamp": ("syncedAt", "indexedAt", "refreshedAt"),
    WIDENING: ("sequenceValue", "batchWeight", "pageWeight"),
}
_WORDS = ("alpha", "north", "delta", "orbit", "cedar", "ember", "lumen", "quartz")
METRICS_KINDS = tuple(
    f"{name}_metrics"
    for name in (
        "campaign",
        "adgroup",
        "target",
        "product_ad",
        "search_term",
        "seller_product",
        "vendor_product",
    )
)
METRICS_KINDS += ("workflow_performance",)
ROW_KINDS = (  # snake_case
    *METRICS_KINDS,
    "history_row",
    "history_other",
    "advertising_change",
    "platform_change",
)
ENTITY_KINDS = (  # `object` of each cursor-list record, camelCase
    "account",
    "connection",
    "country",
    "product_brand",
    "product",
    "marketplace_seller_product",
    "marketplace_vendor_product",
    "marketplace_advertising_product",
    "cluster",
    "portfolio",
    "campaign",
    "adgroup",
    "target",
    "product_ad",
    "search_term",
    "workflow",
    "workflow_campaign",
    "task",
    "task_item",
)
# Where an entity sits in its account's list: widening values come only after the first rows.
_LISTS = {
    "connection": "connections",
    "product_brand": "brands",
    "product": "products",
    "marketplace_seller_product": "seller_products",
    "marketplace_vendor_product": "vendor_products",
    "marketplace_advertising_product": "advertising_products",
    "cluster": "clusters",
    "portfolio": "portfolios",
    "campaign": "campaigns",
    "adgroup": "adgroups",
    "target": "targets",
    "product_ad": "product_ads",
    "search_term": "search_terms",
    "workflow": "workflows",
    "task": "tasks",
    "task_item": "task_items",
}
_METRICS_KEY = (
    "object",
    "campaign",
    "ad_group",
    "target",
    "product_ad",
    "search_term",
    "product",
    "sku",
    "cluster",
    "connection",
    "country",
    "currency",
    "ad_product",
    "date",
)
WIDEN_SHARE = 0.2  # of the records past the first ones
WIDEN_AFTER_POSITION = 10  # entities: first list positions stay integers
WIDEN_RECENT_DAYS = 60  # metrics rows: only dates this recent widen (windows are read in order)
TIMESTAMP = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})Z$")
TIMESTAMP_FORMS = ("Z", "millis", "offset", "micro-offset", "millis-offset", "mixed")
# The change log row's name for its changed entity (spec 4.8 names only the filter, `entity`):
# ours first.
CHANGE_ENTITY_FIELD = "entity_id"
CHANGE_ENTITY_FIELDS = (CHANGE_ENTITY_FIELD, "entity", "entityId")


@dataclass(frozen=True)
class ExtraField:
    """A field the spec does not name, added to every record of one kind."""

    name: str
    type: str  # one of JSON_TYPES, or WIDENING
    null_share: float = 0.0  # records where it is null (all of them for type "null")


@dataclass(frozen=True)
class Scope:
    """What shaping one answer's records depends on besides the records."""

    number: int  # the variant's
    timestamps: str  # one of TIMESTAMP_FORMS
    extras: dict[str, tuple[ExtraField, ...]]  # per record kind
    account: Account | None
    reference: date
    change_entity: str = CHANGE_ENTITY_FIELD  # one of CHANGE_ENTITY_FIELDS


def snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


# ---------------------------------------------------------------------- timestamps
def retime(text: str, form: str, number: int) -> str:
    """A spec timestamp (`…T10:00:05Z`) in the variant's form, same instant to the second.

    The fraction is a hash of the timestamp itself, so equal instants stay equal and order is
    kept. "micro-offset" is Python's `isoformat()`: `+00:00`, microseconds only when not zero.
    """
    match = TIMESTAMP.match(text)
    if match is None or form == "Z":
        return text
    base, bits = match.group(1), scalar("timestamp", number, text)
    if form == "mixed":
        form = TIMESTAMP_FORMS[bits % 5]
    if form == "millis":
        return f"{base}.{bits % 1000:03d}Z"
    if form == "offset":
        return f"{base}+00:00"
    if form == "millis-offset":
        return f"{base}.{bits % 1000:03d}+00:00"
    if form == "micro-offset":
        micros = 0 if bits % 4 == 0 else (bits >> 2) % 1_000_000
        return f"{base}.{micros:06d}+00:00" if micros else f"{base}+00:00"
    return text


# ---------------------------------------------------------------------- extra values
def record_key(kind: str, record: dict) -> tuple:
    """What identifies a record across pages and windows."""
    if kind in METRICS_KINDS:
        return tuple(_identity(record.get(name)) for name in _METRICS_KEY)
    if kind == "history_other":
        return (record.get("entity_id"), record.get("change_type"))
    return (record.get("id"),)


def _identity(value: object) -> object:
    return value.get("id") if isinstance(value, dict) else value


def _late(kind: str, record: dict, scope: Scope) -> bool:
    """Whether a record comes after the first ones a reader sees (where widening may show)."""
    attribute = _LISTS.get(kind)
    if attribute is not None and scope.account is not None:
        position = scope.account.locate(attribute, record.get("id"))
        return position is not None and position >= WIDEN_AFTER_POSITION
    day = record.get("date")
    if kind in METRICS_KINDS and isinstance(day, str):
        return date.fromisoformat(day) >= scope.reference - timedelta(days=WIDEN_RECENT_DAYS)
    return True


def extra_value(field: ExtraField, bits: int, scope: Scope, late: bool, digits: int) -> object:
    """One extra value of a record, from its 64-bit hash; `digits`: its currency's."""
    if field.type == "null" or (bits >> 40) % 1000 < field.null_share * 1000:
        return None
    word = _WORDS[bits % len(_WORDS)]
    if field.type == "string":
        return f"{word}-{(bits >> 8) % 1000:03d}"
    if field.type == "integer":
        return (bits >> 8) % 10_000
    if field.type == "number":
        return ((bits >> 8) % 500 * 100 + 1 + (bits >> 20) % 99) / 100  # hundredths, never whole
    if field.type == "decimal":
        minor = (bits >> 8) % 50_000
        return money(minor, digits)
    if field.type == "boolean":
        return bits % 2 == 0
    if field.type == "object":
        return {"origin": word, "version": 1 + (bits >> 8) % 9, "flags": [word[:3]]}
    if field.type == "array":
        return [_WORDS[(bits >> (8 * k)) % len(_WORDS)] for k in range((bits >> 60) % 4)]
    # Dated from the quarter's first day, as entity attributes are (`assembly.py`): an extra
    # date does not move between two reference dates of one quarter.
    if field.type == "date":
        return str(quarter_start(scope.reference) - timedelta(days=(bits >> 8) % 400))
    if field.type == "timestamp":
        day = quarter_start(scope.reference) - timedelta(days=(bits >> 8) % 400)
        second = (bits >> 24) % 86_400
        text = f"{day}T{second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}Z"
        return retime(text, scope.timestamps, scope.number)
    # WIDENING: integers, until some later records carry a decimal string.
    if late and (bits >> 8) % 1000 < WIDEN_SHARE * 1000:
        return f"{(bits >> 20) % 500}.5"
    return (bits >> 20) % 500


def with_extras(kind: str, record: dict, scope: Scope) -> dict:
    """The record (a copy) with the variant's extra fields of its kind."""
    fields = scope.extras.get(kind)
    if not fields:
        return record
    key = record_key(kind, record)
    late = any(f.type == WIDENING for f in fields) and _late(kind, record, scope)
    digits = exponent_of(record)
    extra = {
        f.name: extra_value(
            f, scalar("extra", scope.number, kind, f.name, *key), scope, late, digits
        )
        for f in fields
    }
    return {**record, **extra}


# ---------------------------------------------------------------------- whole bodies
def shape_tree(value: object, scope: Scope) -> object:
    """A body with every record shaped: amounts as text, extras, timestamps in the variant's
    form. Nested records (an `expand`ed campaign) are shaped as their own kind. Copies."""
    if isinstance(value, list):
        return [shape_tree(item, scope) for item in value]
    if isinstance(value, dict):
        out = {name: shape_tree(item, scope) for name, item in value.items()}
        kind = out.get("object")
        if kind in ENTITY_KINDS or kind in ("advertising_change", "platform_change"):
            out = with_extras(kind, money_as_text(out), scope)
        if kind == "advertising_change":
            out = _renamed(out, CHANGE_ENTITY_FIELD, scope.change_entity)
        return out
    if isinstance(value, str):
        return retime(value, scope.timestamps, scope.number)
    return value


def _renamed(record: dict, name: str, to: str) -> dict:
    """The record with its field `name` called `to`, in the same place among its fields."""
    if name == to:
        return record
    return {to if key == name else key: value for key, value in record.items()}


def shape_history(body: dict, scope: Scope) -> dict:
    """Optimization history (spec 2.7): its data and other_changes rows have no `object`."""
    out = shape_tree(body, scope)
    out["data"] = [with_extras("history_row", row, scope) for row in out["data"]]
    out["other_changes"] = [with_extras("history_other", r, scope) for r in out["other_changes"]]
    return out


def shape_metrics(body: dict, scope: Scope) -> dict:
    """A metrics page: flat rows of strings and numbers, so only extras change."""
    rows = [with_extras(row.get("object"), row, scope) for row in body["data"]]
    return {**body, "data": rows}
