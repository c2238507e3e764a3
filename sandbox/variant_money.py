"""Money in a sandbox variant: which fields hold it, as decimal strings, and as JSON numbers.

The spec contradicts itself: rule 1 of section 1 says amounts are decimal strings, never
numbers, while 2.2, 2.4 and 2.8 type a campaign's budget, bids and a basis price as numbers. An
honest implementation may pick either, field by field. A variant (`variants.py`) therefore keeps
every amount as a decimal string in the body `SandboxService.handle` returns (the truth), and
writes some of them as JSON number tokens when the app serializes, with the string's own digits
(never through a float, which would turn "0.10" into 0.1000000000000000055...).
"""

import re
from collections.abc import Callable
from decimal import Decimal

import orjson

from sandbox.reference import COUNTRY_BY_ID
from sandbox.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS, ECONOMICS_AMOUNTS

ADVERTISING_MONEY = ("cost", "sales", "cpc", "new_to_brand_sales")  # spec 2.6
SELLER_MONEY = ("sales", *ECONOMICS_AMOUNTS, "price", "b2b_sales")  # spec 2.9
VENDOR_MONEY = ("ordered_revenue", "shipped_revenue", "shipped_cogs", "net_received_revenue")
OPTIMIZATION_MONEY = tuple(
    f"optimizationConfig.{name}"
    for name in (
        "limits.minBid",
        "limits.maxBid",
        "limits.minSpendBeforeNegative",
        "budget.dailyBudget",
        "budget.monthlyBudget",
    )
)
# Record kind (its `object`, or `history_row` for optimization-history data rows) → the dotted
# paths of its amounts.
ENTITY_MONEY = {
    "campaign": ("budget.amount", *OPTIMIZATION_MONEY),
    "portfolio": ("budget.amount",),
    "adgroup": ("defaultBid",),
    "target": ("bid",),
    "marketplace_advertising_product": ("basisPrice.amount",),
}
MONEY_FIELDS = {
    **{
        f"{name}_metrics": ADVERTISING_MONEY
        for name in ("campaign", "adgroup", "target", "product_ad", "search_term")
    },
    "seller_product_metrics": SELLER_MONEY,
    "vendor_product_metrics": VENDOR_MONEY,
    "workflow_performance": ADVERTISING_MONEY,
    "workflow_campaign": OPTIMIZATION_MONEY,
    "history_row": ("first_bid", "last_bid", "net_change"),  # spec 2.7
    **ENTITY_MONEY,
}
DECIMAL = re.compile(r"^-?\d+(\.\d+)?$")
_OPEN, _CLOSE = "\ue000", "\ue001"  # private-use characters no sandbox text contains
_MARKED = re.compile(
    re.escape(f'"{_OPEN}').encode() + rb"(-?\d+(?:\.\d+)?)" + re.escape(f'{_CLOSE}"').encode()
)


def money_keys() -> tuple[str, ...]:
    """Every money field as `kind:dotted.path`: the unit a variant chooses string or number for."""
    return tuple(f"{kind}:{path}" for kind, paths in MONEY_FIELDS.items() for path in paths)


def replace_at(record: dict, dotted: str, change: Callable[[object], object]) -> dict:
    """The record with the value at a dotted path changed; copies only what it changes, so the
    sandbox's cached records stay untouched. Absent paths leave the record as it is."""
    head, _, rest = dotted.partition(".")
    if head not in record:
        return record
    value = record[head]
    if rest:
        new = replace_at(value, rest, change) if isinstance(value, dict) else value
    else:
        new = change(value)
    return record if new is value else {**record, head: new}


# ---------------------------------------------------------------------- the truth: strings
def exponent_of(record: dict) -> int:
    """Digits of the record's currency: a metrics row's own, its budget's or basis price's,
    else its country's.

    A portfolio names none (spec 2.11: "the currency is the marketplace's"): two digits.
    """
    currency = (
        record.get("currency")
        or (record.get("budget") or {}).get("currency")
        or (record.get("basisPrice") or {}).get("currency")
    )
    if isinstance(currency, str):
        return CURRENCY_DIGITS.get(currency, DEFAULT_CURRENCY_DIGITS)
    country = record.get("country")
    found = COUNTRY_BY_ID.get(country.get("id") if isinstance(country, dict) else country)
    return found.exponent if found else DEFAULT_CURRENCY_DIGITS


def decimal_text(value: object, exponent: int) -> object:
    """A numeric amount as the spec's decimal string ("12.30", "1500" in yen); others as given.

    `str` of a float is its shortest repr, so Decimal sees the digits the sandbox meant.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        return value
    return f"{Decimal(str(value)):.{exponent}f}"


def money_as_text(record: dict) -> dict:
    """An entity record (spec 2.2, 2.8, 2.11) with its numeric amounts as decimal strings."""
    exponent = exponent_of(record)
    for dotted in ENTITY_MONEY.get(record.get("object"), ()):
        record = replace_at(record, dotted, lambda v: decimal_text(v, exponent))
    return record


# ---------------------------------------------------------------------- the bytes: numbers
def trimmed(text: str) -> str:
    """The same amount without trailing fractional zeros: "12.30" → "12.3", "1500.00" → "1500"."""
    if "." not in text:
        return text
    text = text.rstrip("0").rstrip(".")
    return "0" if text in ("", "-", "-0") else text


def as_token(text: object, trim: bool) -> object:
    """A decimal string marked to be written as a bare JSON number (see `dumps`)."""
    if not isinstance(text, str) or not DECIMAL.match(text):
        return text
    return f"{_OPEN}{trimmed(text) if trim else text}{_CLOSE}"


def mark_record(record: dict, kind: str, numbers: frozenset[str], trim: frozenset[str]) -> dict:
    """The record with the amounts the variant writes as numbers marked for `dumps`."""
    for dotted in MONEY_FIELDS.get(kind, ()):
        key = f"{kind}:{dotted}"
        if key in numbers:
            record = replace_at(record, dotted, lambda v, t=key in trim: as_token(v, t))
    return record


def dumps(body: object) -> bytes:
    """orjson's bytes with every marked amount turned into a number token of the same digits."""
    return _MARKED.sub(rb"\1", orjson.dumps(body))
