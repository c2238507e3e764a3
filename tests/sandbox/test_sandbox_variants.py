"""Sandbox variants (`sandbox/variants.py`): the spec's open choices made otherwise.

Variant 0 must be the sandbox as it was, byte for byte. Variants 1-6 must show every open
choice somewhere, keep their content the same whatever the page or window, and only encode
money as numbers in the served bytes, with the decimal string's own digits.
"""

import asyncio
import dataclasses
import hashlib
import json
import re
import time
from datetime import date, timedelta
from email.utils import parsedate_to_datetime
from functools import cache

import httpx
import pytest

from launcher.cli import parser
from sandbox.app import SandboxTransport
from sandbox.embedded import embedded_service
from sandbox.faults import NO_FAULTS, PAST_HTTP_DATE, FaultPlan
from sandbox.reference import MORE_COUNTRIES
from sandbox.service import SandboxService
from sandbox.spec import METRICS_RESOURCES
from sandbox.variant_money import DECIMAL, MONEY_FIELDS, trimmed
from sandbox.variant_records import (
    CHANGE_ENTITY_FIELD,
    CHANGE_ENTITY_FIELDS,
    ENTITY_KINDS,
    JSON_TYPES,
    ROW_KINDS,
    TIMESTAMP_FORMS,
    WIDEN_AFTER_POSITION,
    WIDEN_RECENT_DAYS,
    WIDENING,
)
from sandbox.variants import HISTORY_CAP, Variant
from tests.sandbox.conftest import KEY, TODAY, fetch
from warehouse.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS

VARIANTS = range(1, 7)
METRICS = METRICS_RESOURCES
LISTS = (
    "/v1/connections",
    "/v1/countries",
    "/v1/product-brands",
    "/v1/products",
    "/v1/marketplace-seller-products",
    "/v1/marketplace-vendor-products",
    "/v1/marketplace-advertising-products",
    "/v1/clusters",
    "/v1/portfolios",
    "/v1/campaigns",
    "/v1/adgroups",
    "/v1/targets",
    "/v1/product-ads",
    "/v1/search-terms",
    "/v1/advertising-changes",
    "/v1/workflows",
    "/v1/tasks",
    "/v1/task-items",
    "/v1/platform-changes",
)
WEEK = {"start_date": "2026-10-01", "end_date": "2026-10-07", "granularity": "daily"}
# Digests of what the sandbox served before variants existed (small preset, TODAY), taken again
# when entity attributes came to be dated from the quarter's first day instead of the reference
# date (`Account.anchor`), and campaign and ad-group records to follow the change log: dates,
# budgets, names, the optimizer's history (from an anchored `optimizingSince`) and campaign
# metrics (from anchored start dates) moved then; nothing else did.
GOLDEN = (
    ("/v1/me", {}, "74e899aa951b31af", 293),
    ("/v1/accounts", {}, "0654243f8d33e080", 322),
    ("/v1/connections", {}, "84a151d85ce0ad5c", 1393),
    ("/v1/countries", {}, "daab9c0009f25bab", 513),
    ("/v1/portfolios", {}, "5cfe97245b8bd3d1", 479),
    ("/v1/campaigns", {"limit": "5"}, "64afb5e207338c31", 2630),
    ("/v1/adgroups", {"limit": "4"}, "6b45f47c25989476", 1479),
    ("/v1/targets", {"limit": "4", "include_total": "true"}, "dba877534b1e4755", 2645),
    ("/v1/marketplace-advertising-products", {"limit": "4"}, "28f8875ec3ce7fe1", 2588),
    ("/v1/campaign-metrics", {**WEEK, "limit": "50"}, "2979d179afb91f77", 25730),
    ("/v1/advertising-changes", {"limit": "5"}, "c9d1f7bb62c0fb5a", 2520),
    (
        "/v1/campaign-metrics",
        {"start_date": "2026-01-01", "end_date": "2026-11-01", "granularity": "daily"},
        "13f1d7a29177eac2",
        196,
    ),
    ("/v1/products", {"limit": "3", "starting_after": 2}, "5aa47900411104ae", 1224),
    ("history", {}, "820d57a4867c8411", 3637),
)
TIMESTAMP_SHAPES = {
    "Z": r"\d{2}Z",
    "millis": r"\d{2}\.\d{3}Z",
    "offset": r"\d{2}\+00:00",
    "millis-offset": r"\d{2}\.\d{3}\+00:00",
    "micro-offset": r"\d{2}(\.\d{6})?\+00:00",
    "mixed": r"\d{2}(\.\d{3}|\.\d{6})?(Z|\+00:00)",
}


class Token(str):
    """A JSON number exactly as written in the served bytes."""


# ---------------------------------------------------------------------- helpers
@cache
def variant_service(number: int) -> SandboxService:
    """One fault-free small sandbox per variant, shared by read-only tests."""
    return SandboxService("small", TODAY, variant=number, faults=NO_FAULTS)


def headers(service: SandboxService, account: int = 0) -> dict[str, str]:
    out = {"authorization": f"Bearer {KEY}"}
    if service.variant.agency:
        out["service-account"] = service.accounts[account].id
    return out


def get(service: SandboxService, path: str, account: int = 0, **params: object):
    """(status, body) of one GET through `handle`: the variant's truth."""
    query = [(k, str(v)) for k, v in params.items()]
    status, body, _ = service.handle("GET", path, query, headers(service, account))
    return status, body


def ok(service: SandboxService, path: str, account: int = 0, **params: object) -> dict:
    status, body = get(service, path, account, **params)
    assert status == 200, body
    return body


def served(service: SandboxService, path: str, **params: str) -> httpx.Response:
    """One GET through the app, as bytes on the wire."""

    async def go() -> httpx.Response:
        transport = SandboxTransport(service)
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as client:
            return await client.get(path, params=params, headers=headers(service))

    return asyncio.run(go())


def every_row(service: SandboxService, path: str, account: int = 0, **params) -> list[dict]:
    """All rows of an offset list, paging by `offset += len(rows)`."""
    rows: list[dict] = []
    while True:
        page = ok(service, path, account, limit=1000, offset=len(rows), **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


def every_record(service: SandboxService, path: str, limit: int = 100, **params) -> list[dict]:
    """All records of a cursor list, paging by `starting_after` (the last id received)."""
    records: list[dict] = []
    while True:
        after = {"starting_after": records[-1]["id"]} if records else {}
        page = ok(service, path, limit=limit, **after, **params)
        records += page["data"]
        if not page["has_more"]:
            return records


def history_campaign(service: SandboxService) -> str:
    """A campaign of the main account with bid changes and other changes in its history."""
    for campaign in service.main_account.campaigns:
        body = ok(service, f"/v1/campaigns/{campaign['id']}/optimization-history")
        if body["data"] and body["other_changes"]:
            return campaign["id"]
    raise AssertionError("no campaign has a history")


def records_by_kind(service: SandboxService) -> dict[str, list[dict]]:
    """A page of every kind of record the variant shapes."""
    out: dict[str, list[dict]] = {"account": ok(service, "/v1/accounts")["data"]}
    for path in LISTS:
        for record in ok(service, path, limit=30)["data"]:
            out.setdefault(record["object"], []).append(record)
    for resource in METRICS:
        window = {**WEEK, "end_date": "2026-10-03"}
        out[resource.replace("-", "_")] = ok(service, f"/v1/{resource}", limit=60, **window)["data"]
    body = ok(service, f"/v1/campaigns/{history_campaign(service)}/optimization-history")
    out["history_row"], out["history_other"] = body["data"], body["other_changes"]
    for workflow in out["workflow"]:
        path = f"/v1/workflows/{workflow['id']}"
        out.setdefault("workflow_campaign", []).extend(ok(service, f"{path}/campaigns")["data"])
        window = {**WEEK, "end_date": "2026-10-03"}
        rows = ok(service, f"{path}/performance", limit=60, **window)["data"]
        out.setdefault("workflow_performance", []).extend(rows)
    return out


def has_type(value: object, kind: str, timestamps: str) -> bool:
    if value is None:
        return True
    checks = {
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, float) and not v.is_integer(),
        "decimal": lambda v: isinstance(v, str) and re.fullmatch(r"\d+(\.\d+)?", v),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: False,
        "object": lambda v: isinstance(v, dict),
        "array": lambda v: isinstance(v, list),
        "date": lambda v: isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v),
        "timestamp": lambda v: isinstance(v, str) and is_timestamp(v, timestamps),
        WIDENING: lambda v: isinstance(v, int) or re.fullmatch(r"\d+\.5", str(v)),
    }
    return bool(checks[kind](value))


def is_timestamp(text: str, form: str) -> bool:
    return bool(re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:" + TIMESTAMP_SHAPES[form], text))


def compare(truth: object, wire: object, kind: str | None, path: str, found: dict) -> None:
    """Walk the truth and the served bytes together: equal, except money written as numbers
    (recorded in `found` as kind:path → count), which must carry the string's digits."""
    if isinstance(truth, dict):
        assert isinstance(wire, dict) and truth.keys() == wire.keys()
        envelope = truth.get("object") == "list"  # its rows are records of their own
        if isinstance(truth.get("object"), str) and not envelope:
            kind, path = truth["object"], ""
        for name in truth:
            inner = "" if envelope else f"{path}.{name}".lstrip(".")
            compare(truth[name], wire[name], kind, inner, found)
    elif isinstance(truth, list):
        assert isinstance(wire, list) and len(truth) == len(wire)
        for a, b in zip(truth, wire, strict=True):
            compare(a, b, kind, path, found)
    elif isinstance(wire, Token) and isinstance(truth, str):
        assert DECIMAL.match(truth) and wire in (truth, trimmed(truth)), (truth, wire)
        found[f"{kind}:{path}"] = found.get(f"{kind}:{path}", 0) + 1
        found.setdefault("tokens", []).append((f"{kind}:{path}", truth, str(wire)))
    elif isinstance(wire, Token):
        assert isinstance(truth, int | float) and float(wire) == truth
    else:
        assert wire == truth and type(wire) is type(truth), (path, truth, wire)


# ---------------------------------------------------------------------- variant 0
@pytest.mark.parametrize(("path", "params", "digest", "size"), GOLDEN)
def test_variant_0_is_byte_identical_to_today(small, path, params, digest, size):
    if path == "history":
        path = f"/v1/campaigns/{small.main_account.campaigns[4]['id']}/optimization-history"
    if "starting_after" in params:
        params = {**params, "starting_after": small.main_account.products[2]["id"]}
    response = fetch(small, path, params)
    assert (hashlib.sha256(response.content).hexdigest()[:16], len(response.content)) == (
        digest,
        size,
    )


def test_variant_0_is_the_sandbox_unchanged():
    variant = Variant.for_number(0)
    assert variant == Variant() and variant.describe()["extras"] == {}
    service = SandboxService("small", TODAY)
    assert service.variant == variant and service.faults == NO_FAULTS
    assert [c["code"] for c in ok(service, "/v1/countries")["data"]] == ["US", "DE", "GB", "JP"]
    with pytest.raises(ValueError):
        Variant.for_number(-1)


def test_variants_are_a_pure_function_of_their_number():
    for number in VARIANTS:
        assert Variant.for_number(number) == Variant.for_number(number)
        assert Variant.for_number(number).describe() == Variant.for_number(number).describe()
    a, b = SandboxService("small", TODAY, variant=3), SandboxService("small", TODAY, variant=3)
    assert (
        served(a, "/v1/targets", limit="7").content == served(b, "/v1/targets", limit="7").content
    )


def test_the_cli_and_the_embedded_sandbox_take_a_variant():
    args = parser().parse_args(["sandbox", "serve", "--variant", "4"])
    assert args.variant == 4
    assert parser().parse_args(["sandbox", "serve"]).variant == 0
    assert embedded_service("small", TODAY, 2).variant == Variant.for_number(2)
    assert embedded_service("small", TODAY).variant.number == 0


# ---------------------------------------------------------------------- every choice appears
def test_variants_1_to_6_make_every_open_choice_somewhere():
    variants = [Variant.for_number(n) for n in VARIANTS]
    money = {f"{kind}:{path}" for kind, paths in MONEY_FIELDS.items() for path in paths}
    numbers = set().union(*(v.money_numbers for v in variants))
    assert numbers == money  # each field is a number somewhere …
    assert any(money - v.money_numbers for v in variants)  # … and a string elsewhere
    assert any(v.money_trimmed for v in variants)
    assert any(v.money_numbers - v.money_trimmed for v in variants)
    types = {f.type for v in variants for _, fields in v.extras for f in fields}
    assert types == {*JSON_TYPES, WIDENING}
    for v in variants:
        kinds = dict(v.extras)
        assert set(kinds) == {*ENTITY_KINDS, *ROW_KINDS} and all(kinds.values())
    assert any(
        f.null_share and f.type != "null" for v in variants for _, fs in v.extras for f in fs
    )
    assert {v.short_pages > 0 for v in variants} == {True, False}
    assert {v.null_totals for v in variants} >= {0.0, 1.0}
    assert {v.timestamps for v in variants} == set(TIMESTAMP_FORMS)
    assert {v.change_entity for v in variants} == set(CHANGE_ENTITY_FIELDS)
    assert set().union(*(v.marketplaces for v in variants)) == {c.code for c in MORE_COUNTRIES}
    assert {c.currency for c in MORE_COUNTRIES} == {"INR", "BRL", "AED", "SEK", "PLN", "MXN", "AUD"}
    assert {v.agency for v in variants} == {True, False}
    agencies = [v for v in variants if v.agency]
    assert {v.unshared_connections for v in agencies} == {"empty", "null"}
    assert {len(v.agency_reach) for v in agencies} == {2, 3}
    assert len({v.cap_wording for v in variants}) >= 4
    assert {v.cap("campaign-metrics", "daily") for v in variants} - {92}
    plans = [v.faults for v in variants]
    assert any(p.rate_429 and p.retry_after_forms == ("seconds",) for p in plans)
    assert any(p.rate_429 and "http-date" in p.retry_after_forms for p in plans)
    assert any(p.rate_429 and p.retry_after_share < 1 for p in plans)  # Retry-After absent
    assert any(p.rate_502 for p in plans) and any(p.rate_truncate for p in plans)
    assert all(p.rate_429 + p.rate_502 + p.rate_truncate <= 0.03 for p in plans)


# ---------------------------------------------------------------------- extra fields
@pytest.mark.parametrize("number", VARIANTS)
def test_extra_fields_appear_on_every_kind_of_record(number):
    service = variant_service(number)
    records = records_by_kind(service)
    plain = records_by_kind(variant_service_zero())
    for kind, fields in service.variant.extras:
        rows = records[kind]
        assert rows, kind
        known = set().union(*(r.keys() for r in plain[kind]))
        for field in fields:
            assert field.name not in known, (kind, field.name)
            if kind in ROW_KINDS:  # snake_case on rows, camelCase on entities
                assert field.name == field.name.lower()
            else:
                assert "_" not in field.name
            values = [row[field.name] for row in rows]
            assert all(has_type(v, field.type, service.variant.timestamps) for v in values)
            if field.type == "null":
                assert set(values) == {None}
        assert all(set(row) >= {f.name for f in fields} for row in rows)
    nullable = [
        row[f.name] is None
        for kind, fields in service.variant.extras
        for f in fields
        if f.type != "null" and f.null_share
        for row in records[kind]
    ]
    assert any(nullable) and not all(nullable)


def test_decimal_extras_carry_their_currencys_digits():
    """A new field of amounts is written as the row's currency writes them: "1237" in yen,
    "12.37" in euros (spec 1), so a pipeline meets decimal strings without a point."""
    pointless = 0
    for number in VARIANTS:
        service = variant_service(number)
        records = records_by_kind(service)
        for kind, fields in service.variant.extras:
            for field in (f for f in fields if f.type == "decimal" and kind in ROW_KINDS):
                for row in records[kind]:
                    value, currency = row[field.name], row.get("currency")
                    if value is None or currency is None:
                        continue
                    digits = CURRENCY_DIGITS.get(currency, DEFAULT_CURRENCY_DIGITS)
                    fraction = value.partition(".")[2]
                    assert len(fraction) == digits, (number, kind, currency, value)
                    pointless += digits == 0
    assert pointless


@cache
def variant_service_zero() -> SandboxService:
    return SandboxService("small", TODAY)


def test_the_same_metrics_row_has_the_same_extras_in_two_windows():
    service = variant_service(4)
    fields = {f.name for f in dict(service.variant.extras)["campaign_metrics"]}
    key = ("campaign", "currency", "ad_product", "date")

    def rows(start: str, end: str) -> dict[tuple, dict]:
        window = {"start_date": start, "end_date": end, "granularity": "daily"}
        found = every_row(service, "/v1/campaign-metrics", **window)
        return {tuple(r[k] for k in key): r for r in found}

    first, second = rows("2026-10-01", "2026-10-07"), rows("2026-10-04", "2026-10-12")
    common = first.keys() & second.keys()
    assert len(common) > 10
    for row in common:
        assert {f: first[row][f] for f in fields} == {f: second[row][f] for f in fields}
        assert first[row] == second[row]


def test_a_widening_field_is_an_integer_first_and_a_decimal_string_later():
    number = next(n for n in VARIANTS if WIDENING in {f.type for f in extras(n, "target")})
    service = variant_service(number)
    name = next(f.name for f in extras(number, "target") if f.type == WIDENING)
    targets = every_record(service, "/v1/targets")
    values = [t[name] for t in targets]
    assert all(isinstance(v, int | None) for v in values[:WIDEN_AFTER_POSITION])
    assert any(isinstance(v, str) for v in values) and sum(isinstance(v, int) for v in values) > (
        len(values) // 2
    )
    metrics_name = next(f.name for f in extras(number, "campaign_metrics") if f.type == WIDENING)
    recent = TODAY - timedelta(days=WIDEN_RECENT_DAYS)
    for start, late in ((recent - timedelta(days=12), False), (recent + timedelta(days=1), True)):
        window = {"start_date": str(start), "end_date": str(start + timedelta(days=10))}
        found = every_row(service, "/v1/campaign-metrics", granularity="daily", **window)
        kinds = {type(r[metrics_name]) for r in found} - {type(None)}
        assert kinds == ({int, str} if late else {int})


def extras(number: int, kind: str):
    return dict(Variant.for_number(number).extras)[kind]


# ---------------------------------------------------------------------- money as numbers
@pytest.mark.parametrize("number", VARIANTS)
def test_money_numbers_in_the_served_bytes_carry_the_strings_digits(number):
    service = variant_service(number)
    history = f"/v1/campaigns/{history_campaign(service)}/optimization-history"
    requests = [
        ("/v1/campaigns", {"limit": "100", "expand[]": "optimizationConfig"}),
        ("/v1/portfolios", {}),
        ("/v1/adgroups", {"limit": "100"}),
        ("/v1/targets", {"limit": "100"}),
        ("/v1/marketplace-advertising-products", {"limit": "100"}),
        (history, {}),
        *((f"/v1/{resource}", {**WEEK, "limit": "300"}) for resource in METRICS),
    ]
    found: dict = {}
    for path, params in requests:
        status, truth, _ = service.handle("GET", path, list(params.items()), headers(service))
        response = served(service, path, **params)
        assert status == response.status_code == 200
        wire = json.loads(response.content, parse_float=Token, parse_int=Token)
        compare(truth, wire, "history_row" if path == history else None, "", found)
    tokens = found.pop("tokens")
    variant = service.variant
    assert set(found) <= variant.money_numbers and found
    assert {k: "trim" if k in variant.money_trimmed else "keep" for k in found} == {
        key: "trim" if key in variant.money_trimmed else "keep" for key, _, _ in tokens
    }
    for key, text, token in tokens:
        assert token == (trimmed(text) if key in variant.money_trimmed else text)
    assert b'"cost":"' not in served(variant_service_zero(), "/v1/targets").content


def test_entity_money_is_a_decimal_string_in_the_truth():
    service = variant_service(1)
    campaign = ok(service, "/v1/campaigns", limit=1)["data"][0]
    assert DECIMAL.match(campaign["budget"]["amount"])
    bids = [t["bid"] for t in ok(service, "/v1/targets", limit=50)["data"] if not t["negative"]]
    assert bids and all(isinstance(b, str) and DECIMAL.match(b) for b in bids)


# ---------------------------------------------------------------------- short pages, totals
def short_variant() -> int:
    return max(VARIANTS, key=lambda n: Variant.for_number(n).short_pages)


def test_short_cursor_pages_still_page_to_the_full_set():
    service = variant_service(short_variant())
    pages = []
    records: list[dict] = []
    while True:
        after = {"starting_after": records[-1]["id"]} if records else {}
        page = ok(service, "/v1/targets", limit=9, **after)
        pages.append((len(page["data"]), page["has_more"]))
        records += page["data"]
        if not page["has_more"]:
            break
    assert [r["id"] for r in records] == [t["id"] for t in service.main_account.targets]
    assert any(size < 9 and more for size, more in pages)
    backwards: list[dict] = []
    before = records[-1]["id"]
    while True:
        page = ok(service, "/v1/targets", limit=9, ending_before=before)
        backwards = page["data"] + backwards
        if not page["has_more"]:
            break
        before = page["data"][0]["id"]
    assert backwards == records[:-1]
    changes = every_record(service, "/v1/advertising-changes", limit=40)
    assert len(changes) == len(service.main_account.change_log)
    assert len({c["id"] for c in changes}) == len(changes)


def test_short_metrics_pages_still_page_to_the_full_set_by_offset():
    number = short_variant()
    service = variant_service(number)
    whole = SandboxService("small", TODAY, variant=number, faults=NO_FAULTS)
    whole.variant = dataclasses.replace(whole.variant, short_pages=0.0)
    cap = service.variant.cap("campaign-metrics", "daily")
    end = date(2026, 10, 20)
    window = {"start_date": str(end - timedelta(days=cap - 1)), "end_date": str(end)}
    rows, sizes = [], []
    while True:
        page = ok(service, "/v1/campaign-metrics", limit=50, offset=len(rows), **window)
        sizes.append(len(page["data"]))
        rows += page["data"]
        if not page["has_more"]:
            break
    assert rows == every_row(whole, "/v1/campaign-metrics", **window)
    assert any(size < 50 for size in sizes[:-1])


def test_total_count_may_be_null_even_when_asked_for():
    number = next(n for n in VARIANTS if Variant.for_number(n).null_totals == 1.0)
    service = variant_service(number)
    for path, params in (
        ("/v1/targets", {}),
        ("/v1/campaign-metrics", WEEK),
        ("/v1/advertising-changes", {}),
    ):
        page = ok(service, path, include_total="true", **params)
        assert "total_count" in page and page["total_count"] is None


# ---------------------------------------------------------------------- window caps
@pytest.mark.parametrize("number", VARIANTS)
def test_a_window_over_the_cap_is_a_400_naming_it(number):
    service = variant_service(number)
    end = date(2026, 11, 1)
    for resource in METRICS:
        for granularity in ("daily", "monthly"):
            cap = service.variant.cap(resource, granularity)
            if resource == "target-metrics":
                assert cap == (31 if granularity == "daily" else 93)  # spec 8
            over = {"start_date": str(end - timedelta(days=cap)), "end_date": str(end)}
            status, body = get(service, f"/v1/{resource}", granularity=granularity, **over)
            assert status == 400 and body["error"]["type"] == "invalid_request_error"
            assert str(cap) in re.findall(r"\d+", body["error"]["message"]), body
            within = {**over, "start_date": str(end - timedelta(days=cap - 1))}
            assert (
                get(service, f"/v1/{resource}", granularity=granularity, limit=1, **within)[0]
                == 200
            )
    campaign = service.main_account.campaigns[0]["id"]
    path = f"/v1/campaigns/{campaign}/optimization-history"
    status, body = get(service, path, start_date="2026-08-01", end_date="2026-11-01")
    assert status == 400 and str(HISTORY_CAP) in re.findall(r"\d+", body["error"]["message"])
    assert get(service, path, start_date="2026-08-04", end_date="2026-11-01")[0] == 200


# ---------------------------------------------------------------------- agency
@pytest.mark.parametrize("number", [n for n in VARIANTS if Variant.for_number(n).agency])
def test_the_agency_account_without_connections_answers_empty_lists(number):
    service = variant_service(number)
    me = ok(service, "/v1/me")
    assert me["subject_type"] == "agency" and me["account_required"] is True
    assert len(me["accounts"]) >= 2
    unshared = service.accounts[service.variant.unshared_account].id
    accounts = every_record(service, "/v1/accounts")
    assert {a["id"] for a in accounts} == {a["id"] for a in me["accounts"]}
    blank = {"empty": [], "null": None}[service.variant.unshared_connections]
    for account in accounts:
        assert (account["connections"] == blank) == (account["id"] == unshared)
    index = service.variant.unshared_account
    for path in LISTS:
        if path != "/v1/countries":
            assert ok(service, path, index)["data"] == [], path
    assert ok(service, "/v1/countries", index)["data"]
    for resource in METRICS:
        page = ok(service, f"/v1/{resource}", index, include_total="true", **WEEK)
        assert page["data"] == [] and page["has_more"] is False
        assert page["total_count"] in (0, None)
    campaign = service.accounts[index].campaigns[0]["id"]
    assert get(service, f"/v1/campaigns/{campaign}", index)[0] == 404
    assert get(service, f"/v1/campaigns/{campaign}/optimization-history", index)[0] == 404
    status, body, _ = service.handle("GET", "/v1/campaigns", [], {"authorization": f"Bearer {KEY}"})
    assert status == 403 and body["error"]["code"] == "account_required"
    assert ok(service, "/v1/campaigns")["data"]  # the main account shares its connections


# ---------------------------------------------------------------------- the change log's entity
@pytest.mark.parametrize("number", VARIANTS)
def test_the_change_log_names_its_entity_as_the_variant_does_and_filters_by_it(number):
    """Spec 4.8 names the filter `entity`, not the row's field: a variant's rows carry the
    changed entity under its name, in our field's place, and the filter finds them by it."""
    service = variant_service(number)
    name = service.variant.change_entity
    rows = ok(service, "/v1/advertising-changes", limit=20)["data"]
    plain = ok(variant_service_zero(), "/v1/advertising-changes", limit=1)["data"][0]
    at = list(plain).index(CHANGE_ENTITY_FIELD)
    others = set(CHANGE_ENTITY_FIELDS) - {name}
    assert rows and all(list(row)[at] == name and not others & set(row) for row in rows)
    found = ok(service, "/v1/advertising-changes", entity=rows[0][name], limit=100)["data"]
    assert rows[0]["id"] in {row["id"] for row in found}
    assert all(row[name] == rows[0][name] for row in found)


# ---------------------------------------------------------------------- timestamps, currencies
@pytest.mark.parametrize("number", VARIANTS)
def test_timestamps_take_the_variants_form(number):
    service = variant_service(number)
    form = service.variant.timestamps
    stamps = [c["createdAt"] for c in ok(service, "/v1/campaigns", limit=50)["data"]]
    stamps += [c["changed_at"] for c in ok(service, "/v1/advertising-changes", limit=50)["data"]]
    assert all(is_timestamp(s, form) for s in stamps), (form, stamps[:3])
    if form in ("millis", "millis-offset"):
        assert all("." in s for s in stamps)
    if form != "Z":
        assert not all(s.endswith("Z") and "." not in s for s in stamps)


@pytest.mark.parametrize("number", VARIANTS)
def test_the_variants_marketplaces_bring_their_currencies(number):
    service = variant_service(number)
    currencies = {c.currency for c in service.variant.countries}
    codes = {c["code"] for c in every_record(service, "/v1/countries")}
    assert codes >= {"US", "DE", "GB", "JP", *service.variant.marketplaces}
    window = {"start_date": "2026-10-01", "end_date": "2026-10-14", "granularity": "daily"}
    for resource in ("campaign-metrics", "seller-product-metrics"):
        rows = every_row(service, f"/v1/{resource}", **window)
        seen = {r["currency"] for r in rows}
        assert seen & currencies, (resource, seen)
        for row in rows:
            digits = 0 if row["currency"] == "JPY" else 2
            assert re.fullmatch(r"-?\d+" + (rf"\.\d{{{digits}}}" if digits else ""), row["sales"])


# ---------------------------------------------------------------------- faults
def test_502_answers_with_an_empty_body(small):
    small.faults = FaultPlan(rate_502=1.0)
    response = fetch(small, "/v1/campaigns", {"limit": "2"})
    assert response.status_code == 502 and response.content == b""


@pytest.mark.parametrize("form", ["seconds", "http-date", "past-date"])
def test_retry_after_comes_in_each_form_and_never_asks_for_a_long_wait(small, form):
    small.faults = FaultPlan(
        rate_429=1.0, retry_after_share=1.0, retry_after_forms=(form,), retry_after_seconds=0
    )
    before = time.time()
    value = fetch(small, "/v1/campaigns", {"limit": "2"}).headers["retry-after"]
    if form == "seconds":
        assert value == "0"
    else:
        moment = parsedate_to_datetime(value).timestamp()
        assert moment <= time.time() and (form == "past-date") == (value == PAST_HTTP_DATE)
        assert form == "past-date" or moment >= int(before) - 1


def test_a_variant_brings_its_fault_plan_unless_told_otherwise():
    number = next(n for n in VARIANTS if Variant.for_number(n).faults.rate_429)
    assert (
        SandboxService("small", TODAY, variant=number).faults == Variant.for_number(number).faults
    )
    assert SandboxService("small", TODAY, variant=number, faults=NO_FAULTS).faults == NO_FAULTS
    plan = Variant.for_number(number).faults
    picks = [plan.pick(n) for n in range(1, 2001)]
    assert 0 < picks.count("429") < 100
