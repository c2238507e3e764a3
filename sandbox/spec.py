"""The sandbox's own reading of the service's specification (`../shared/spec/service-api.md`).

The sandbox is the tests' oracle, so it must not share the product's reading of the spec
(`warehouse/spec.py`): were the product to misread a cap or a page size, a sandbox that
imported the same constant would agree with it, and no test could see the mistake. Every value
here is read again from the section it names; `tests/sandbox/test_sandbox_spec.py` checks the
sandbox's answers against the spec's words, and `tests/test_layers.py` bans the product's
packages from the sandbox.
"""

from datetime import time

# 2.1: "Identifier | 24-character lowercase hexadecimal string, pattern `^[a-f0-9]{24}$`"
ID_PATTERN = r"^[a-f0-9]{24}$"

# 2.1, 2.2: "Ad product codes | `SP`, `SB`, `SD`"
AD_PRODUCTS = ("SP", "SB", "SD")

# 2.5: "lookback | integer | days: 7, 14, 30, 60, 90, 180 or 365"
TARGET_LOOKBACK_DAYS = (7, 14, 30, 60, 90, 180, 365)

# 2.9 rule 2: "The economics block (fees, `net_sales`, `net_units`, `margin_before_ads`,
# refunds) ... arrives 48-72 hours late": the sandbox delivers a day's block at the late end.
ECONOMICS_LAG_DAYS = 72 // 24
# 2.9's field list: the economics block's decimal-string amounts.
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

# 1, reading rule 1: amounts are decimal strings, never converted. The spec does not say how
# many digits; the sandbox writes each currency with ISO 4217's minor units.
CURRENCY_DIGITS: dict[str, int] = {
    **dict.fromkeys(("JPY", "KRW", "CLP", "ISK", "VND", "UGX", "PYG", "XAF", "XOF"), 0),
    **dict.fromkeys(("BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND"), 3),
}
DEFAULT_CURRENCY_DIGITS = 2

# 4.1 and 8: "Cursor list page size | 1 to 100, default 20" as (smallest, largest, default).
CURSOR_LIMIT = (1, 100, 20)
# 4.2 and 8: "Metrics list page size | 1 to 1000, default 100".
METRICS_LIMIT = (1, 1000, 100)
# 4.7 and 8: "Optimization history page size | 1 to 500, default 100".
HISTORY_LIMIT = (1, 500, 100)
# 4.2 and 8: "Offset maximum | 9007199254740991".
OFFSET_MAX = 9007199254740991
# 4.1 and 8: "`expand` nesting | 4 levels".
EXPAND_DEPTH = 4
# 8: "over 2000 product-cluster memberships requires narrowing with the `cluster` filter".
CLUSTER_MEMBERSHIP_LIMIT = 2000

# 4.4 and 4.5: the metrics lists (offset lists, 4.2), each `GET /v1/<name>`.
METRICS_RESOURCES = (
    "campaign-metrics",
    "adgroup-metrics",
    "target-metrics",
    "product-ad-metrics",
    "search-term-metrics",
    "seller-product-metrics",
    "vendor-product-metrics",
)
# 4.2: "granularity | `total` (default), `daily`, `weekly`, `monthly`, `quarterly`, `yearly`".
GRANULARITIES = ("total", "daily", "weekly", "monthly", "quarterly", "yearly")

# 4.5 and 8: "Target-metrics window | 93 days for `total`, 31 days for `daily`".
TARGET_METRICS_CAPS = {"daily": 31, "total": 93}
# 4.7 and 8: "the window is capped at 90 days"; "without dates the last 90 days return".
HISTORY_WINDOW_DAYS = 90

# 8: "Change log retention | 12 months"; "Store change records retention | 12 months".
CHANGE_LOG_RETENTION_DAYS = 365
STORE_CHANGES_RETENTION_DAYS = 365
# 4.9 Stores: "GET | /v1/platform-changes | platform:read | log of changes made in stores".
STORE_CHANGES_PATH = "/v1/platform-changes"

# 2.11 and 4.9: task priorities and task-item statuses named for lists.
TASK_PRIORITIES = ("high", "medium", "low")
TASK_ITEM_STATUSES = ("pending", "approved", "rejected")
# 4.9: "a campaign suggestion with a field other than `dailyBudget`, `state`, `name` ... 400".
CAMPAIGN_FIELD_PATHS = ("dailyBudget", "state", "name")

# 4.6 rule 5 and 8: "The optimizer runs nightly at 03:00 UTC."
OPTIMIZER_RUNS_AT_UTC = time(3, 0)
