"""The service client against the sandbox: paging, windows, retries, errors, read-only, secrets."""

import asyncio
import itertools
import logging
from datetime import UTC, date, datetime, timedelta
from email.utils import format_datetime

import pytest
from pydantic import SecretStr

from bench.deployment import free_port
from pipelines.client.accounts import describe_credential, reachable_accounts
from pipelines.client.errors import (
    AuthenticationError,
    BadRequestError,
    ForbiddenError,
    NotFoundError,
    PaginationError,
    ReadOnlyViolationError,
    TransientError,
)
from pipelines.client.http import RetryPolicy, ServiceClient, _retry_after
from pipelines.client.paging import cursor_pages, offset_pages
from pipelines.client.windowed import windowed_pages
from pipelines.client.windows import WindowCaps, split
from sandbox.faults import NO_FAULTS, FaultPlan
from sandbox.service import SandboxService
from tests.conftest import SECRET, TODAY, direct, make_client
from warehouse.spec import METRICS_LIMIT, TARGET_METRICS_CAPS


def run(coro):
    return asyncio.run(coro)


async def collect(pages):
    return [page async for page in pages]


def test_cursor_pages_return_every_campaign_once(sandbox):
    async def go():
        async with make_client(sandbox) as client:
            pages = await collect(cursor_pages(client, "/v1/campaigns"))
            return [row["id"] for page in pages for row in page.rows]

    ids = run(go())
    expected = [c["id"] for c in sandbox.main_account.campaigns]
    assert ids == expected
    assert all(("limit", "100") in r.query for r in sandbox.requests if r.path == "/v1/campaigns")


def test_offset_pages_fetch_every_row_concurrently_when_total_is_known(sandbox):
    params = {"start_date": "2026-10-01", "end_date": "2026-10-31", "granularity": "daily"}

    async def go():
        async with make_client(sandbox) as client:
            pages = await collect(
                offset_pages(client, "/v1/campaign-metrics", params, page_size=50)
            )
            return [row for page in pages for row in page.rows]

    rows = run(go())
    total = direct(sandbox, "/v1/campaign-metrics", **params, include_total="true", limit=1).json()[
        "total_count"
    ]
    assert len(rows) == total > 100
    keys = {(r["campaign"], r["date"]) for r in rows}
    assert len(keys) == len(rows)


def test_window_split_has_no_gap_or_overlap():
    windows = split(date(2026, 1, 1), date(2026, 3, 15), 31)
    assert windows[0][0] == date(2026, 1, 1) and windows[-1][1] == date(2026, 3, 15)
    for (_, end), (start, _) in itertools.pairwise(windows):
        assert (start - end).days == 1
    assert all((e - s).days + 1 <= 31 for s, e in windows)


def test_a_cap_learned_from_a_400_splits_the_window_without_loss(sandbox):
    caps = WindowCaps()

    async def go():
        async with make_client(sandbox) as client:
            pages = await collect(
                windowed_pages(
                    client, caps, "campaign-metrics", date(2026, 1, 1), date(2026, 10, 31)
                )
            )
            return pages

    pages = run(go())
    rows = [row for _, page in pages for row in page.rows]
    assert caps.cap("campaign-metrics", "daily") == 92
    assert {w for w, _ in pages} == set(split(date(2026, 1, 1), date(2026, 10, 31), 92))
    refused = [r for r in sandbox.requests if r.status == 400]
    assert len(refused) == 1  # learned once, never exceeded again
    by_day = {}
    for row in rows:
        by_day.setdefault(row["date"], set()).add(row["campaign"])
    for day in ("2026-04-01", "2026-04-02", "2026-07-01", "2026-07-02"):  # window seams
        expected = direct(
            sandbox,
            "/v1/campaign-metrics",
            start_date=day,
            end_date=day,
            granularity="daily",
            limit=1000,
        ).json()["data"]
        assert by_day.get(day, set()) == {r["campaign"] for r in expected}
    assert len({(r["campaign"], r["date"]) for r in rows}) == len(rows)


def test_faults_give_exactly_the_rows_of_a_fault_free_fetch(sandbox):
    params = {"start_date": "2026-09-01", "end_date": "2026-10-31", "granularity": "daily"}

    async def fetch():
        async with make_client(sandbox) as client:
            pages = await collect(
                offset_pages(client, "/v1/campaign-metrics", params, page_size=20)
            )
            return sorted(
                (r["campaign"], r["date"], r["cost"]) for p in pages for r in p.rows
            ), client.stats

    clean, _ = run(fetch())
    sandbox.faults = FaultPlan(
        rate_429=0.3, rate_5xx=0.05, rate_truncate=0.05, rate_drop=0.03, retry_after_seconds=0.001
    )
    faulty, stats = run(fetch())
    assert faulty == clean
    assert stats.retries > 0 and stats.rate_limited > 0


def test_transient_faults_give_up_after_bounded_attempts(sandbox):
    sandbox.faults = FaultPlan(rate_5xx=1.0)

    async def go():
        async with make_client(
            sandbox, retry=RetryPolicy(attempts=3, backoff_base=0.001, backoff_max=0.001)
        ) as client:
            await client.get("/v1/campaigns")

    with pytest.raises(TransientError, match=r"GET /v1/campaigns: 503"):
        run(go())


def test_client_refuses_every_method_but_get(sandbox):
    async def go(method):
        async with make_client(sandbox) as client:
            await client.request(method, "/v1/campaigns")

    for method in ("POST", "PATCH", "DELETE", "PUT"):
        with pytest.raises(ReadOnlyViolationError):
            run(go(method))
    assert sandbox.requests == []


@pytest.mark.parametrize(
    ("key", "path", "error", "fragment"),
    [
        ("wrong-key", "/v1/campaigns", AuthenticationError, "401"),
        ("narrow", "/v1/campaigns", ForbiddenError, "campaigns:read"),
        (SECRET, "/v1/campaigns/ffffffffffffffffffffffff", NotFoundError, "404"),
        (SECRET, "/v1/campaign-metrics", BadRequestError, "start_date"),
    ],
)
def test_errors_name_the_request_and_never_the_key(sandbox, key, path, error, fragment):
    sandbox.add_key("narrow", scopes=frozenset({"catalog:read"}))

    async def go():
        async with make_client(sandbox, key=key) as client:
            await client.get(path, {"limit": 5})

    with pytest.raises(error) as raised:
        run(go())
    message = str(raised.value)
    assert f"GET {path}?limit=5" in message and fragment in message
    assert SECRET not in message and SECRET not in repr(raised.value)


def test_agency_key_sends_the_service_account_header(sandbox):
    sandbox.add_key("agency-key", kind="agency", accounts=(0, 1))

    async def go():
        async with make_client(sandbox, key="agency-key") as client:
            credential = await describe_credential(client)
            accounts = await reachable_accounts(client, credential)
            for account in accounts:
                await collect(cursor_pages(client, "/v1/campaigns", account=account.header))
            return accounts

    accounts = run(go())
    assert [a.id for a in accounts] == [sandbox.accounts[0].id, sandbox.accounts[1].id]
    sent = {r.account for r in sandbox.requests if r.path == "/v1/campaigns"}
    assert sent == {sandbox.accounts[0].id, sandbox.accounts[1].id}


def test_an_account_the_key_cannot_reach_is_refused_by_name(sandbox):
    async def go():
        async with make_client(sandbox) as client:
            credential = await describe_credential(client)
            await reachable_accounts(client, credential, ("0123456789abcdef01234567",))

    with pytest.raises(ForbiddenError, match="0123456789abcdef01234567"):
        run(go())


def test_misbehaving_cursor_is_a_clear_error_not_a_hang(sandbox, monkeypatch):
    original = sandbox.handle

    def stuck(method, path, query, headers):
        """A service that ignores starting_after and always claims there is more."""
        kept = [q for q in query if q[0] != "starting_after"]
        status, body, extra = original(method, path, kept, headers)
        return status, {**body, "has_more": True}, extra

    monkeypatch.setattr(sandbox, "handle", stuck)

    async def go():
        async with make_client(sandbox) as client:
            await collect(cursor_pages(client, "/v1/campaigns", {"limit": 5}))

    with pytest.raises(PaginationError, match="does not advance"):
        run(go())


def test_client_repr_and_logs_hold_no_key(sandbox, caplog):
    caplog.set_level(logging.DEBUG)
    sandbox.faults = FaultPlan(rate_429=0.5, retry_after_seconds=0.001)

    async def go():
        async with make_client(sandbox) as client:
            await collect(cursor_pages(client, "/v1/campaigns"))
            return repr(client)

    text = run(go())
    assert SECRET not in text and SECRET not in caplog.text


# ---------------------------------------------------------------------------- open shapes
@pytest.mark.parametrize(
    ("variant", "seen"),
    [
        (3, lambda page: len(page.rows) < 40 and page.body["has_more"]),  # short pages
        (4, lambda page: "total_count" in page.body and page.body["total_count"] is None),
    ],
    ids=["short pages", "unknown totals"],
)
def test_short_offset_pages_and_unknown_totals_lose_and_double_nothing(variant, seen):
    """A service may answer fewer rows than asked while more remain, or a null total: every
    row arrives once, fetched concurrently or walked."""
    service = SandboxService("small", TODAY, key=SECRET, variant=variant, faults=NO_FAULTS)
    params = {"start_date": "2026-10-01", "end_date": "2026-10-14", "granularity": "daily"}
    account = service.accounts[0].id  # some variants' keys are agency keys

    async def go():
        async with make_client(service) as client:
            pages = await collect(
                offset_pages(client, "/v1/campaign-metrics", params, account, page_size=40)
            )
            return pages

    pages = run(go())
    rows = [row for page in pages for row in page.rows]
    assert any(seen(page) for page in pages)
    keys = [(r["campaign"], r["date"], r["currency"], r["ad_product"]) for r in rows]
    expected, offset, more = [], 0, True
    while more:  # the truth, one row at a time: a page of one cannot be cut short
        _, body, _ = service.handle(
            "GET",
            "/v1/campaign-metrics",
            [*params.items(), ("limit", "1"), ("offset", str(offset))],
            {"authorization": f"Bearer {SECRET}", "service-account": account},
        )
        expected += [
            (r["campaign"], r["date"], r["currency"], r["ad_product"]) for r in body["data"]
        ]
        offset, more = offset + len(body["data"]), body["has_more"]
    assert len(keys) == len(set(keys)) and set(keys) == set(expected)


@pytest.mark.parametrize(
    ("header", "seconds"),
    [
        ("3", 3.0),
        ("0", 0.0),
        (format_datetime(datetime(2000, 1, 1, tzinfo=UTC), usegmt=True), 0.0),
        ("not a date", None),
        (None, None),
    ],
)
def test_retry_after_is_read_as_seconds_or_as_an_http_date(header, seconds):
    assert _retry_after(header) == seconds


def test_retry_after_as_a_future_http_date_waits_until_then():
    soon = datetime.now(UTC) + timedelta(seconds=30)
    wait = _retry_after(format_datetime(soon, True))
    assert 28 <= wait <= 30


@pytest.mark.parametrize(
    "message",
    [
        "The window of 40 days exceeds the limit of 14 days for campaign-metrics.",
        "window too large: max 14 days",
        "The requested range spans 40 days; the maximum for this resource is 14.",
        "end_date: at most 14 days after start_date (2026-10-01)",
        "Window 2026-10-01..2026-11-09 is over the cap (14)",
    ],
)
def test_a_window_cap_is_read_from_any_wording_that_names_it(message):
    assert BadRequestError("GET /v1/x", 400, message).window_limit(40) == 14


def test_a_400_cut_short_is_asked_again_and_its_cap_still_learned(sandbox):
    """Half an error body is a transport fault: the cap it names may be in the lost half."""
    sandbox.faults = FaultPlan(rate_truncate=0.5, seed=3)
    caps = WindowCaps()

    async def go():
        async with make_client(sandbox) as client:
            return await collect(
                windowed_pages(
                    client, caps, "campaign-metrics", date(2026, 1, 1), date(2026, 10, 31)
                )
            )

    pages = run(go())
    assert caps.cap("campaign-metrics", "daily") == 92
    assert len([r for r in sandbox.requests if r.status == 400]) >= 2  # one came cut short
    assert {w for w, _ in pages} == set(split(date(2026, 1, 1), date(2026, 10, 31), 92))


def test_the_specs_caps_and_page_sizes_are_used_before_any_400(sandbox):
    """Spec 4.2, 4.5 and 8: target metrics take daily windows of at most 31 days and metrics
    pages of up to 1000 rows; the client asks for exactly that and is never refused."""
    caps = WindowCaps()

    async def go():
        async with make_client(sandbox) as client:
            return await collect(
                windowed_pages(client, caps, "target-metrics", date(2026, 8, 1), date(2026, 10, 31))
            )

    run(go())
    asked = [dict(r.query) for r in sandbox.requests if r.path == "/v1/target-metrics"]
    assert asked and all(r.status == 200 for r in sandbox.requests)
    for query in asked:
        first, last = date.fromisoformat(query["start_date"]), date.fromisoformat(query["end_date"])
        assert (last - first).days + 1 <= TARGET_METRICS_CAPS["daily"]
        assert int(query["limit"]) == METRICS_LIMIT[1]


def test_the_proxy_the_environment_names_is_used_unless_no_proxy_exempts_the_host(
    served, monkeypatch
):
    """HTTP(S)_PROXY as httpx honours it: read once, when the client is made, not per request.
    A proxy where nothing listens fails the request naming it; NO_PROXY for the host bypasses it."""
    _, url = served
    dead = f"127.0.0.1:{free_port()}"
    monkeypatch.setenv("HTTP_PROXY", f"http://{dead}")
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)

    async def me() -> dict:
        async with ServiceClient(url, SecretStr(SECRET), retry=RetryPolicy(attempts=1)) as c:
            return (await c.get("/v1/me")).body

    with pytest.raises(TransientError, match=f"cannot connect to {dead}"):
        run(me())
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert run(me())["object"]


# ---------------------------------------------------------------------------- on the wire
async def answering(answer: bytes, heads: list[bytes]) -> tuple[asyncio.Server, str]:
    """A server on 127.0.0.1 that keeps each request's head in `heads` and sends `answer`
    (a reset when empty)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(await reader.readuntil(b"\r\n\r\n"))
        if not answer:
            writer.transport.abort()
            return
        writer.write(answer)
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    return server, f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/api/"


def test_over_the_network_the_query_is_written_as_httpx_writes_it():
    """The request line a page's recorded path and params stand for: the base URL's path
    kept, reserved characters escaped, a boolean written `true`; the key in its header."""
    body = b'{"data": []}'
    heads: list[bytes] = []

    async def go() -> None:
        server, url = await answering(
            b"HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n" + body, heads
        )
        async with server, ServiceClient(url, SecretStr(SECRET)) as client:
            query = {"limit": 5, "starting_after": "a+b/c=", "include_total": True}
            assert (await client.get("/v1/campaigns", {**query, "group_by[]": "day"})).body

    run(go())
    line, *headers = heads[0].decode().lower().splitlines()
    assert line == (
        "get /api/v1/campaigns?limit=5&starting_after=a%2bb/c%3d&include_total=true"
        "&group_by%5b%5d=day http/1.1"
    )
    assert {"accept: application/json", f"authorization: bearer {SECRET}"} <= set(headers)


@pytest.mark.parametrize(
    ("answer", "fault"),
    [(b"", "ServerDisconnectedError"), (b"NOT HTTP\r\n\r\n", "ClientResponseError")],
    ids=["reset", "not HTTP"],
)
def test_a_network_fault_is_said_in_aiohttps_words_and_retried(answer, fault):
    """httpx-aiohttp calls a reset `ConnectTimeout`, and lets an answer that is not HTTP out as
    aiohttp raised it: each is said as aiohttp met it, and asked again."""
    heads: list[bytes] = []

    async def go() -> None:
        server, url = await answering(answer, heads)
        retry = RetryPolicy(attempts=2, backoff_base=0.001)
        async with server, ServiceClient(url, SecretStr(SECRET), retry=retry) as client:
            await client.get("/v1/me")

    with pytest.raises(TransientError, match=f"GET /v1/me: no answer {fault}: ") as raised:
        run(go())
    assert "Timeout" not in str(raised.value) and "(gave up after 2 attempts)" in str(raised.value)
