"""Opening the service for a run: the real one, or the embedded sandbox when none is set."""

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import date

import httpx

from pipelines.client.accounts import (
    AccountRef,
    Credential,
    describe_credential,
    listed_accounts,
    reachable_accounts,
)
from pipelines.client.credits import CreditBudget
from pipelines.client.http import RetryPolicy, ServiceClient
from pipelines.client.windows import WindowCaps
from pipelines.home import check_address, check_holder
from pipelines.plugin import load_plugin
from pipelines.settings import DEFAULT_PRESET, Settings

SANDBOX_URL = "http://sandbox.invalid"


@dataclass
class Session:
    """A client bound to a key, the accounts to extract, and the caps learned so far."""

    client: ServiceClient
    credential: Credential
    accounts: list[AccountRef]
    caps: WindowCaps
    today: date
    warnings: list[str] = field(default_factory=list)
    # Accounts the run was given that the key no longer lists (`packed` sessions only).
    unreachable: list[str] = field(default_factory=list)


@asynccontextmanager
async def open_session(
    settings: Settings,
    *,
    max_in_flight: int = 8,
    preset: str = DEFAULT_PRESET,
    timeout: httpx.Timeout | None = None,
    retry: RetryPolicy | None = None,
    packed: bool = False,
    budget: CreditBudget | None = None,
    for_home: bool = False,
) -> AsyncIterator[Session]:
    """`packed`: the accounts come from a run's pack, not from the user; one the key no longer
    reaches fails alone (`session.unreachable`) instead of the whole run.
    `for_home`: the session reads for `settings.home`, which must belong to this service
    (`pipelines/home.py`): checked before the first request, and after `/v1/me`; the run's
    step records it (`claim`) once it writes, so a run refused later changes nothing."""
    if for_home:
        check_address(settings)
    if settings.uses_sandbox:
        transport = load_plugin(settings.sandbox).transport(preset, settings.today)
        base_url = SANDBOX_URL
    else:
        transport, base_url = None, str(settings.base_url)
    async with ServiceClient(
        base_url,
        settings.secret_key,
        transport=transport,
        max_in_flight=max_in_flight,
        timeout=timeout,
        retry=retry,
        budget=budget,
    ) as client:
        credential = await describe_credential(client)
        if for_home:
            check_holder(settings, credential)
        if packed:
            accounts, unreachable = await listed_accounts(client, credential, settings.account_ids)
        else:
            accounts = await reachable_accounts(client, credential, settings.account_ids)
            unreachable = []
        yield Session(
            client, credential, accounts, WindowCaps(), settings.today, unreachable=unreachable
        )
