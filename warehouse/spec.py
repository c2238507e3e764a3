"""The service's rules, as its specification states them: one home for each.

The pipeline and the contracts import these, and a reader goes from a number to the section
that gives it. The sandbox does not: it keeps its own reading (`sandbox/spec.py`), so that a
misreading here is one the tests' oracle does not share. Each constant names its section of
`../shared/spec/service-api.md`. Where the spec says "not shown", nothing is fixed here: the
pipeline learns it (window caps from a 400, rate limits from a 429).
This module is the bottom of the layers: it imports nothing of ours.
"""

from datetime import time

# -- 1 Money: amounts in many currencies, never converted; rows split by currency (2.6) -------
# The codes are ISO 4217's, not the spec's: those in use (2025), without the test and "no
# currency" codes (XTS, XXX). A well-formed but unknown code is as wrong as a malformed one:
# money must never be kept in a currency no one can name.
ISO_4217 = frozenset(
    """
    AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BOV BRL BSD BTN
    BWP BYN BZD CAD CDF CHE CHF CHW CLF CLP CNY COP COU CRC CUC CUP CVE CZK DJF DKK DOP DZD EGP
    ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK
    JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK
    MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD OMR PAB PEN PGK PHP PKR PLN
    PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SLL SOS SRD SSP STN SVC SYP SZL THB
    TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD USN UYI UYU UYW UZS VED VES VND VUV WST XAF XAG
    XAU XBA XBB XBC XBD XCD XCG XDR XOF XPD XPF XPT XSU XUA YER ZAR ZMW ZWG ZWL
    """.split()  # noqa: SIM905 - a table to read, not a list to edit
)
# Digits after the decimal point where ISO 4217 says other than 2 (JPY has none).
CURRENCY_DIGITS: dict[str, int] = {
    **dict.fromkeys(("JPY", "KRW", "CLP", "ISK", "VND", "UGX", "PYG", "XAF", "XOF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}
DEFAULT_CURRENCY_DIGITS = 2


def currency_digits(currency: str) -> int:
    """The digits after the decimal point of an amount in `currency`."""
    return CURRENCY_DIGITS.get(currency, DEFAULT_CURRENCY_DIGITS)


# -- 2.1 Conventions -------------------------------------------------------------------------
ID_PATTERN = r"^[a-f0-9]{24}$"  # every identifier: 24 lowercase hexadecimal characters
CURRENCY_PATTERN = r"^[A-Z]{3}$"  # ISO 4217 alphabetic code
DATE_PATTERN = r"^\d{4}-\d{2}-\d{2}$"  # a date parameter: YYYY-MM-DD

# -- 2.2, 2.4, 2.5 Enumerations the spec closes ----------------------------------------------
AD_PRODUCTS = ("SP", "SB", "SD")  # 1, 2.2: Sponsored Products, Brands, Display
CREATABLE_AD_PRODUCTS = ("SP",)  # 4.6 rule 1: creation is limited to SP
TARGET_LOOKBACK_DAYS = (7, 14, 30, 60, 90, 180, 365)  # 2.5: a target's `lookback`

# -- 2.9 Seller economics --------------------------------------------------------------------
# The economics block arrives 48-72 hours late: a day's block may still be null until the
# reference date is 72 hours (3 days) after it.
ECONOMICS_LAG_HOURS = (48, 72)
ECONOMICS_LAG_DAYS = ECONOMICS_LAG_HOURS[1] // 24
# The block's fields, null together until it arrives: its money amounts, then its unit counts.
ECONOMICS_AMOUNTS = (
    "referral_fee",
    "fba_fulfilment_fee",
    "storage_fee",
    "other_fees",
    "amazon_fees",
    "net_sales",
    "margin_before_ads",
    "refunded_sales",
)
ECONOMICS_UNITS = ("net_units", "refunded_units")
ECONOMICS_FIELDS = (*ECONOMICS_AMOUNTS, *ECONOMICS_UNITS)
# What the warehouse says of a row's block (`economics_status`): reported; null but within the
# lag (it may still arrive); null past it.
ECONOMICS_AVAILABLE, ECONOMICS_PENDING, ECONOMICS_MISSING = ECONOMICS_STATUSES = (
    "available",
    "pending",
    "missing",
)

# -- 4.1, 4.2, 4.7 Page sizes: (smallest, largest, default) ----------------------------------
CURSOR_LIMIT = (1, 100, 20)  # 4.1 cursor lists
METRICS_LIMIT = (1, 1000, 100)  # 4.2 offset lists (metrics)
HISTORY_LIMIT = (1, 500, 100)  # 4.7 optimization history
OFFSET_MAX = 9_007_199_254_740_991  # 8: offset maximum
EXPAND_DEPTH = 4  # 8: `expand` nesting
CLUSTER_MEMBERSHIP_LIMIT = 2000  # 8: group_by=cluster over more memberships needs a filter
# Measures a grouped row (group_by) does not sum: cpc is recomputed (4.2), a seller product's
# price and rank are null and its stock summed only by country (2.9 rule 7).
NOT_SUMMED_IN_GROUPS = frozenset({"cpc", "price", "rank", "stock"})

# -- 4.2 Metrics granularities ---------------------------------------------------------------
GRANULARITIES = ("total", "daily", "weekly", "monthly", "quarterly", "yearly")

# -- 4.4, 4.5, 8 Window caps the spec states (others: "not shown", learned from a 400) --------
# (resource, granularity) -> days. Target metrics: 93 days for `total`, 31 for `daily`;
# the optimization history's window: 90 days.
TARGET_METRICS_CAPS = {"daily": 31, "total": 93}
HISTORY_WINDOW_DAYS = 90
KNOWN_WINDOW_CAPS: dict[tuple[str, str], int] = {
    ("target-metrics", "daily"): TARGET_METRICS_CAPS["daily"],
    ("target-metrics", "total"): TARGET_METRICS_CAPS["total"],
    ("optimization-history", "total"): HISTORY_WINDOW_DAYS,
}
# The strictest daily window the spec names: a range cut into windows of this size never
# exceeds a stated cap (stricter unstated ones are learned).
STRICTEST_DAILY_WINDOW_DAYS = min(TARGET_METRICS_CAPS["daily"], HISTORY_WINDOW_DAYS)

# -- 8 Credits: the two reads the spec prices, by the rows they return -------------------------
STORE_CHANGES_PATH = "/v1/platform-changes"  # the store change log: 1 credit a row
CREDITS_PER_STORE_CHANGE = 1
CREDITS_PER_GROUP = 1  # a `group_by` read: "in proportion to the groups returned", rate not shown

# -- 4.7, 8 Retention ------------------------------------------------------------------------
HISTORY_RETENTION_DAYS = 90  # the optimization history is kept 90 days
CHANGE_LOG_RETENTION_DAYS = 365  # the change log is kept 12 months
STORE_CHANGES_RETENTION_DAYS = 365  # 8: store change records are kept 12 months

# -- 4.9 Task items' entity types (the task-item list's filter values) --------------------------
TASK_ENTITY_TYPES = ("products", "campaigns", "adgroups", "targets", "search_terms", "product_ads")
TASK_STATUSES = ("pending", "resolved", "discarded")  # 3: task status values named for lists
TASK_ITEM_STATUSES = ("pending", "approved", "rejected")
TASK_PRIORITIES = ("high", "medium", "low")  # 2.11
CAMPAIGN_FIELD_PATHS = ("dailyBudget", "state", "name")  # 3, 4.9: what a campaign item applies
# 4.9: why a workflow processes no campaign
WORKFLOW_EMPTY_REASONS = ("manual-sin-enlaces", "filtro-vacio", "no-itera-campanas")

# -- 8 The optimizer's nightly run -----------------------------------------------------------
OPTIMIZER_RUNS_AT_UTC = time(3, 0)
