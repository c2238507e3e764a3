"""Sandboxes for the sandbox's own tests, and a way to ask them without the pipeline's client.

`ask` calls `SandboxService.handle` directly (no transport, no faults); `fetch` goes through
`SandboxTransport` with a plain `httpx.AsyncClient`, as a network client would.
"""

import asyncio
import re
from collections.abc import Iterator
from datetime import date

import httpx
import pytest

from sandbox.app import SandboxTransport
from sandbox.service import SandboxService

TODAY = date(2026, 11, 23)
KEY = "sandbox"
MONEY = {0: re.compile(r"^-?\d+$"), 2: re.compile(r"^-?\d+\.\d{2}$")}
EXPONENT = {"USD": 2, "EUR": 2, "GBP": 2, "JPY": 0}


def ask(
    service: SandboxService,
    path: str,
    *pairs: tuple[str, str],
    key: str | None = KEY,
    account: str | None = None,
    **params: object,
) -> tuple[int, dict | None]:
    """(status, body) of one GET; `pairs` carry repeated parameters like `group_by[]`."""
    headers = {} if key is None else {"authorization": f"Bearer {key}"}
    if account is not None:
        headers["service-account"] = account
    query = [*pairs, *((k, str(v)) for k, v in params.items())]
    status, body, _ = service.handle("GET", path, query, headers)
    return status, body


def ok(service: SandboxService, path: str, *pairs: tuple[str, str], **params: object) -> dict:
    """The body of a GET that must succeed."""
    status, body = ask(service, path, *pairs, **params)
    assert status == 200, body
    return body


def every_record(service: SandboxService, path: str, **params: object) -> list[dict]:
    """Every record of a cursor list, page by page through `starting_after`."""
    rows: list[dict] = []
    while True:
        cursor = {"starting_after": rows[-1]["id"]} if rows else {}
        page = ok(service, path, limit=100, **cursor, **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


def every_row(service: SandboxService, path: str, **params: object) -> list[dict]:
    """All rows of a metrics list, page by page through `offset`."""
    rows: list[dict] = []
    while True:
        page = ok(service, path, limit=1000, offset=len(rows), **params)
        rows += page["data"]
        if not page["has_more"]:
            return rows


def fetch(
    service: SandboxService,
    path: str,
    params: dict | None = None,
    key: str = KEY,
    account: str | None = None,
) -> httpx.Response:
    """One GET through `SandboxTransport`, as the network would carry it."""
    headers = {"authorization": f"Bearer {key}"}
    if account is not None:
        headers["service-account"] = account

    async def go() -> httpx.Response:
        transport = SandboxTransport(service)
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as client:
            return await client.get(path, params=params, headers=headers)

    return asyncio.run(go())


def is_money(value: str, currency: str) -> bool:
    return isinstance(value, str) and bool(MONEY[EXPONENT[currency]].match(value))


@pytest.fixture
def small() -> SandboxService:
    """A private small sandbox, for tests that add keys or switch faults on."""
    return SandboxService("small", TODAY)


@pytest.fixture(scope="session")
def medium() -> Iterator[SandboxService]:
    """One medium sandbox shared by read-only tests (its request log is theirs too)."""
    yield SandboxService("medium", TODAY)


@pytest.fixture(scope="session")
def large() -> SandboxService:
    return SandboxService("large", TODAY)
