"""Sandbox variants: the same data, with every choice the spec leaves open made another way.

Our sandbox fills each "not shown" of the spec one way (see `service.py`); a pipeline tested
only against it could lean on those choices. `Variant.for_number(n)` seeds every open choice
from n, so the pipeline can meet as many honest implementations as we like. Variant 0 is the
sandbox as it always was. Variants 1 and up choose, from seeded hashes of n:

- money (spec 1 rule 1 says decimal strings; 2.2, 2.4 and 2.8 say numbers): per field, a
  decimal string or a JSON number with the string's digits, trailing zeros kept or dropped
  (`variant_money.py`);
- extra fields the spec does not name, of every JSON type, on every kind of record, one of
  them widening from integers to decimal strings on later records (`variant_records.py`);
- pages shorter than `limit` while `has_more` is true, on cursor and offset lists;
- `total_count` null although `include_total=true` (spec 2.1: "could not finish in time");
- window caps other than ours where the spec shows none (spec 8 pins target metrics 93/31 and
  the history's 90), told by a 400 whose wording varies but names the cap (spec 7.2);
- faults at low rates: 429 with Retry-After in seconds, as an HTTP date, or none; 502 with an
  empty body; 200 bodies cut mid-JSON (`faults.py`);
- timestamps with fractional seconds and/or `+00:00` instead of `Z`;
- marketplaces in more currencies (INR, BRL, AED, SEK, PLN, MXN, AUD);
- an agency key (spec 5.6-5.7) reaching two or three accounts, one of which shares no
  connection: its account lists none, and every list and metrics resource answers empty;
- spec 4.9's open shapes: a store change log that ignores `start_date`/`end_date` (its
  parameters are not shown) and answers its whole 12 months; `optimizing_since` as a timestamp;
  `objective_value` as a decimal string; no `empty_reason` field on a workflow's campaigns
  when there are some;
- spec 4.8's: the change log's rows name the changed entity `entity`, as its filter is named
  (like `campaign` and `adgroup`), or `entityId`, instead of our `entity_id`.

What `SandboxService.handle` returns is the variant's truth (every amount a decimal string);
writing some amounts as numbers is only an encoding, `Variant.encode`, which the app applies.
"""

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from datetime import date, timedelta
from typing import Protocol, TypeVar

import orjson

from sandbox.assembly import Account
from sandbox.errors import ApiError, not_found
from sandbox.faults import NO_FAULTS, RETRY_AFTER_FORMS, FaultPlan
from sandbox.hashing import scalar, unit
from sandbox.params import Query
from sandbox.reference import COUNTRY_BY_CODE, MORE_COUNTRIES, Country
from sandbox.spec import (
    GRANULARITIES,
    HISTORY_WINDOW_DAYS,
    METRICS_RESOURCES,
    TARGET_METRICS_CAPS,
)
from sandbox.variant_money import dumps, mark_record, money_keys
from sandbox.variant_records import (
    CHANGE_ENTITY_FIELD,
    CHANGE_ENTITY_FIELDS,
    ENTITY_KINDS,
    JSON_TYPES,
    NAMES,
    ROW_KINDS,
    TIMESTAMP_FORMS,
    WIDENING,
    ExtraField,
    Scope,
    shape_history,
    shape_metrics,
    shape_tree,
    snake,
)
from sandbox.windows import PERFORMANCE

PERFORMANCE_PATH = re.compile(r"^/v1/workflows/[^/]+/performance$")
WINDOWED = (*METRICS_RESOURCES, PERFORMANCE)  # windowed offset lists, capped per variant
STRICT = ("target-metrics", "search-term-metrics")  # spec 8: "stricter"
PINNED_CAPS = {"target-metrics": (TARGET_METRICS_CAPS["daily"], TARGET_METRICS_CAPS["total"])}
HISTORY_CAP = HISTORY_WINDOW_DAYS
CAP_CHOICES = ((14, 30, 45, 60, 62), (90, 120, 180, 365, 366))  # daily, other
STRICT_CAP_CHOICES = ((7, 14, 31), (62, 93))
CAP_WORDINGS = (
    "window too large: max {cap} days",
    "The requested range spans {days} days; the maximum for this resource is {cap}.",
    "end_date: at most {cap} days from start_date to end_date, both included",
    "Date range exceeds the {cap}-day limit ({days} days requested) for {resource}.",
    "{resource} accepts windows of up to {cap} days; got {days}.",
)
CAP_CODES = ("window_too_large", "date_range_too_long", None)
CAP_PARAMS = ("end_date", "start_date", None)
FAULT_PROFILES = (  # low rates, so a whole pipeline run still finishes quickly
    {"rate_429": 0.02, "retry_after_share": 1.0, "retry_after_forms": ("seconds",)},
    {"rate_502": 0.01, "rate_truncate": 0.01},
    {"rate_429": 0.02, "retry_after_share": 1.0, "retry_after_forms": ("http-date", "past-date")},
    {"rate_429": 0.01, "retry_after_share": 0.0, "rate_truncate": 0.005},
    {
        "rate_429": 0.01,
        "retry_after_share": 0.5,
        "retry_after_forms": RETRY_AFTER_FORMS,
        "rate_502": 0.005,
        "rate_truncate": 0.005,
    },
    {},
)
UNSHARED_ACCOUNT = 2  # the agency's client that shared no connection
# Agency keys come every other variant; rotating the reach (and the unshared account's
# connections, [] or null) over four makes agency variants meet both of each.
_SMALL_REACH, _WIDE_REACH = (0, UNSHARED_ACCOUNT), (0, 1, UNSHARED_ACCOUNT)
REACHES = (_SMALL_REACH, _SMALL_REACH, _WIDE_REACH, _WIDE_REACH)
T = TypeVar("T")


class _Context(Protocol):
    account: Account | None
    query: Query


class _Service(Protocol):
    accounts: list[Account]
    reference: date


# ---------------------------------------------------------------------- seeded choices
def _draw(number: int, *parts: object) -> int:
    return scalar("variant", number, *parts)


def _rotate(options: tuple[T, ...], number: int, name: str) -> T:
    """One option per variant, seeded by the choice's name, so that any run of len(options)
    consecutive variants holds each option once (variants 1-6 show every choice)."""
    offset = scalar("variant-rotation", name) % len(options)
    return options[(number - 1 + offset) % len(options)]


def _money(number: int) -> tuple[frozenset[str], frozenset[str]]:
    """Which money fields are JSON numbers, and of those which drop trailing zeros."""
    share = _rotate((0.25, 0.5, 0.75, 1.0), number, "money")
    trim = _rotate((0.0, 0.5, 1.0), number, "trim")
    numbers = frozenset(k for k in money_keys() if unit("variant", number, "money", k) < share)
    trimmed = frozenset(k for k in numbers if unit("variant", number, "trim", k) < trim)
    return numbers, trimmed


def _extras(number: int) -> tuple[tuple[str, tuple[ExtraField, ...]], ...]:
    """One to three extra fields per record kind (four with a widening one), distinct types."""
    widen = _rotate((True, True, False), number, "widen")
    out = []
    for kind in (*ENTITY_KINDS, *ROW_KINDS):
        start = _draw(number, "types", kind)
        types = [JSON_TYPES[(start + 3 * j) % len(JSON_TYPES)] for j in range(1 + start % 3)]
        if widen:
            types.insert(0, WIDENING)
        fields = []
        for kind_type in types:
            names = NAMES[kind_type]
            name = names[_draw(number, "name", kind, kind_type) % len(names)]
            nulls = 1.0 if kind_type == "null" else (0.0, 0.15, 0.4)[_draw(number, kind, name) % 3]
            fields.append(ExtraField(snake(name) if kind in ROW_KINDS else name, kind_type, nulls))
        out.append((kind, tuple(fields)))
    return tuple(out)


def _caps(number: int) -> tuple[tuple[str, int, int], ...]:
    """(resource, daily cap, other cap) of every metrics resource; spec 8's stay as pinned."""
    out = []
    for resource in WINDOWED:
        if resource in PINNED_CAPS:
            out.append((resource, *PINNED_CAPS[resource]))
            continue
        daily, other = STRICT_CAP_CHOICES if resource in STRICT else CAP_CHOICES
        out.append(
            (
                resource,
                daily[_draw(number, "cap-daily", resource) % len(daily)],
                other[_draw(number, "cap-other", resource) % len(other)],
            )
        )
    return tuple(out)


def _marketplaces(number: int) -> tuple[str, ...]:
    """Two or three of the extra marketplaces; variants 1-6 open all seven between them."""
    codes = [c.code for c in MORE_COUNTRIES]
    count = 2 + _draw(number, "marketplaces") % 2
    return tuple(codes[(3 * (number - 1) + k) % len(codes)] for k in range(count))


# ---------------------------------------------------------------------- the variant
@dataclass(frozen=True)
class Variant:
    """Every open choice of one variant; `Variant()` (number 0) is the sandbox unchanged."""

    number: int = 0
    money_numbers: frozenset[str] = frozenset()  # `kind:dotted.path` written as JSON numbers
    money_trimmed: frozenset[str] = frozenset()  # of those, written without trailing zeros
    extras: tuple[tuple[str, tuple[ExtraField, ...]], ...] = ()  # per record kind
    caps: tuple[tuple[str, int, int], ...] = ()  # (metrics resource, daily, other); () ours
    cap_wording: str = ""  # template naming {cap} (and {days}, {resource}); "" ours
    cap_code: str | None = "window_too_large"
    cap_param: str | None = "end_date"
    short_pages: float = 0.0  # share of list pages cut short while has_more is true
    null_totals: float = 0.0  # share of include_total answers whose total_count is null
    timestamps: str = "Z"  # one of variant_records.TIMESTAMP_FORMS
    marketplaces: tuple[str, ...] = ()  # country codes of MORE_COUNTRIES in this world
    agency: bool = False  # the default key is an agency key
    agency_reach: tuple[int, ...] = (0,)  # account indexes the default key reaches
    unshared_connections: str = "empty"  # that account's `connections`: "empty" [] or "null"
    store_log_dated: bool = True  # the store change log honours start_date/end_date
    since_as_timestamp: bool = False  # workflow performance's optimizing_since
    objective_as_text: bool = False  # workflow performance's objective_value
    omits_empty_reason: bool = False  # no empty_reason on a workflow's campaigns when some
    change_entity: str = CHANGE_ENTITY_FIELD  # the change log row's name for its entity
    faults: FaultPlan = field(default=NO_FAULTS)

    @classmethod
    def for_number(cls, number: int) -> "Variant":
        if number < 0:
            raise ValueError(f"variant numbers start at 0, got {number}")
        if number == 0:
            return cls()
        numbers, trimmed = _money(number)
        agency = _rotate((True, False), number, "agency")
        return cls(
            number=number,
            money_numbers=numbers,
            money_trimmed=trimmed,
            extras=_extras(number),
            caps=_caps(number),
            cap_wording=_rotate(CAP_WORDINGS, number, "wording"),
            cap_code=_rotate(CAP_CODES, number, "code"),
            cap_param=_rotate(CAP_PARAMS, number, "param"),
            short_pages=_rotate((0.0, 0.35, 0.7), number, "short-pages"),
            null_totals=_rotate((0.0, 0.5, 1.0, 0.0), number, "null-totals"),
            timestamps=_rotate(TIMESTAMP_FORMS, number, "timestamps"),
            marketplaces=_marketplaces(number),
            agency=agency,
            agency_reach=_rotate(REACHES, number, "reach") if agency else (0,),
            unshared_connections=_rotate(("empty", "null", "null", "empty"), number, "unshared"),
            store_log_dated=_rotate((False, True), number, "store-log-dated"),
            since_as_timestamp=_rotate((True, False), number, "since-timestamp"),
            objective_as_text=_rotate((True, False, False), number, "objective-text"),
            omits_empty_reason=_rotate((True, False), number, "empty-reason"),
            change_entity=_rotate(CHANGE_ENTITY_FIELDS, number, "change-entity"),
            faults=FaultPlan(
                **_rotate(FAULT_PROFILES, number, "faults"),
                retry_after_seconds=0,
                seed=_draw(number, "fault-seed") % 2**31,
            ),
        )

    # ------------------------------------------------------------------ what the world holds
    @property
    def countries(self) -> tuple[Country, ...]:
        return tuple(COUNTRY_BY_CODE[code] for code in self.marketplaces)

    def key(self) -> tuple[str, tuple[int, ...]]:
        """(kind, account indexes) of the service's default key."""
        return ("agency", self.agency_reach) if self.agency else ("business", (0,))

    @property
    def unshared_account(self) -> int | None:
        return UNSHARED_ACCOUNT if self.agency else None

    def extra_fields(self) -> dict[str, tuple[ExtraField, ...]]:
        return dict(self.extras)

    def cap(self, resource: str, granularity: str) -> int | None:
        """The variant's window cap of a metrics resource (None: the sandbox's own)."""
        for name, daily, other in self.caps:
            if name == resource:
                return daily if granularity == "daily" else other
        return None

    def describe(self) -> dict:
        """The choices, as plain data, for docs and tests."""
        return {
            "number": self.number,
            "money_as_numbers": sorted(self.money_numbers),
            "money_trimmed": sorted(self.money_trimmed),
            "extras": {kind: [asdict(f) for f in fields] for kind, fields in self.extras},
            "caps": {
                **{name: {"daily": d, "other": o} for name, d, o in self.caps},
                "optimization-history": {"any": HISTORY_CAP},
            }
            if self.caps
            else {},
            "cap_message": self.cap_wording,
            "cap_code": self.cap_code,
            "cap_param": self.cap_param,
            "short_pages": self.short_pages,
            "null_totals": self.null_totals,
            "timestamps": self.timestamps,
            "marketplaces": {c.code: c.currency for c in self.countries},
            "agency": {
                "accounts": list(self.agency_reach),
                "unshared": self.unshared_account,
                "unshared_connections": self.unshared_connections,
            }
            if self.agency
            else None,
            "store_log_dated": self.store_log_dated,
            "since_as_timestamp": self.since_as_timestamp,
            "objective_as_text": self.objective_as_text,
            "omits_empty_reason": self.omits_empty_reason,
            "change_entity": self.change_entity,
            "faults": asdict(self.faults),
        }

    # ------------------------------------------------------------------ answering
    def serve(
        self,
        service: _Service,
        path: str,
        ctx: _Context,
        handler: Callable[[_Context], dict | None],
    ) -> dict | None:
        """The handler's answer, as this variant gives it (variant 0: untouched)."""
        if self.number == 0:
            return handler(ctx)
        self.check_window(path, ctx.query, service.reference)
        body = handler(ctx)
        if body is None:
            return None
        unshared = self.unshared_account
        account = ctx.account
        if unshared is not None and account is service.accounts[unshared]:
            body = _nothing_shared(path, body)
        scope = Scope(
            self.number,
            self.timestamps,
            self.extra_fields(),
            account,
            service.reference,
            self.change_entity,
        )
        if _metrics_resource(path):
            body = shape_metrics(body, scope)
        elif path.endswith("/optimization-history"):
            body = shape_history(body, scope)
        else:
            body = shape_tree(body, scope)
        if path == "/v1/accounts" and unshared is not None:
            body = self._blank_connections(body, service.accounts[unshared].id)
        return self._paged(path, ctx.query, body, None if account is None else account.id)

    def encode(self, path: str, body: object) -> bytes:
        """The bytes of a body: money fields of `money_numbers` as JSON number tokens carrying
        exactly the string's digits (or without trailing zeros, per `money_trimmed`)."""
        if not self.money_numbers or not isinstance(body, dict):
            return orjson.dumps(body)
        return dumps(self._mark(path, body))

    # ------------------------------------------------------------------ helpers
    def check_window(self, path: str, query: Query, reference: date) -> None:
        """A 400 in this variant's words for a window over its cap (spec 7.2, 8)."""
        resource = _window_resource(path) or path.removeprefix("/v1/")
        if _metrics_resource(path):
            window = _metrics_window(query)
            if window is None:
                return
            days, granularity = window
            cap = self.cap(resource, granularity)
        elif path.endswith("/optimization-history"):
            days, cap = _history_days(query, reference), HISTORY_CAP
            resource = "optimization-history"
        else:
            return
        if cap is not None and days is not None and days > cap:
            message = self.cap_wording.format(cap=cap, days=days, resource=resource)
            raise ApiError(400, message, code=self.cap_code, param=self.cap_param)

    def _paged(self, path: str, query: Query, body: dict, account: str | None) -> dict:
        """Short pages and unknown totals, the same for the same request every time."""
        if body.get("object") != "list":
            return body
        request = (
            path,
            account,
            *(query.get(name) for name in ("limit", "offset", "starting_after", "ending_before")),
            *(query.get(name) for name in ("start_date", "end_date", "granularity", "order")),
        )
        out = dict(body)
        data = body["data"]
        if len(data) >= 2 and unit("short-page", self.number, *request) < self.short_pages:
            cut = 1 + scalar("short-by", self.number, *request) % max(1, len(data) // 4)
            keep = len(data) - cut  # at least three quarters of the page, at least one row
            # Backwards pages (ending_before) lose their head: what precedes them stays unread.
            out["data"] = data[-keep:] if query.get("ending_before") else data[:keep]
            out["has_more"] = True
        if out.get("total_count") is not None and (
            unit("null-total", self.number, *request) < self.null_totals
        ):
            out["total_count"] = None
        return out

    def _blank_connections(self, body: dict, unshared_id: str) -> dict:
        blank = [] if self.unshared_connections == "empty" else None
        rows = [
            {**row, "connections": blank} if row.get("id") == unshared_id else row
            for row in body["data"]
        ]
        return {**body, "data": rows}

    def _mark(self, path: str, body: dict) -> dict:
        numbers, trim = self.money_numbers, self.money_trimmed
        if path.endswith("/optimization-history"):
            rows = [mark_record(r, "history_row", numbers, trim) for r in body.get("data", ())]
            return {**body, "data": rows}
        if _metrics_resource(path) and "data" in body:
            rows = [mark_record(r, r.get("object"), numbers, trim) for r in body["data"]]
            return {**body, "data": rows}
        return _mark_tree(body, numbers, trim)


def _mark_tree(value: T, numbers: frozenset[str], trim: frozenset[str]) -> T:
    """Records anywhere in a body (a list's data, an expanded campaign) marked as their kind."""
    if isinstance(value, list):
        return [_mark_tree(item, numbers, trim) for item in value]
    if isinstance(value, dict):
        out = {name: _mark_tree(item, numbers, trim) for name, item in value.items()}
        kind = out.get("object")
        return mark_record(out, kind, numbers, trim) if isinstance(kind, str) else out
    return value


def _metrics_resource(path: str) -> bool:
    return _window_resource(path) is not None


def _window_resource(path: str) -> str | None:
    """The window caps' name of a windowed offset list (metrics, workflow performance)."""
    if PERFORMANCE_PATH.match(path):
        return PERFORMANCE
    resource = path.removeprefix("/v1/")
    return resource if path.startswith("/v1/") and resource in WINDOWED else None


def _metrics_window(query: Query) -> tuple[int, str] | None:
    """(days, granularity) of a metrics request; None when invalid (the handler says why)."""
    try:
        start, end = query.day("start_date"), query.day("end_date")
        granularity = query.choice("granularity", GRANULARITIES, "total")
    except ApiError:
        return None
    if start > end:
        return None
    return (end - start).days + 1, granularity


def _history_days(query: Query, reference: date) -> int | None:
    """The history window's length, defaulted as the handler does (`service.history_window`)."""
    try:
        start = query.day("start_date", required=False)
        end = query.day("end_date", required=False) or reference
    except ApiError:
        return None
    start = start or end - timedelta(days=HISTORY_CAP - 1)
    return None if start > end else (end - start).days + 1


def _nothing_shared(path: str, body: dict) -> dict:
    """The answer for an agency client that shared no connection: empty lists, no records.

    Countries are reference data, the same for every account (spec 4.3), so they stay.
    """
    if path.startswith("/v1/countries"):
        return body
    if body.get("object") != "list" or path.endswith("/optimization-history"):
        raise not_found("record")
    out = {**body, "data": [], "has_more": False}
    if "total_count" in body:
        out["total_count"] = 0
    return out
