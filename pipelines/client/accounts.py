"""Who the key is and which accounts a run extracts."""

from dataclasses import dataclass, field

from pipelines.client.errors import ForbiddenError
from pipelines.client.http import ServiceClient
from pipelines.client.paging import Page, cursor_pages

REQUIRED_SCOPES = ("catalog:read", "campaigns:read", "connections:read")
ACCOUNTS = "/v1/accounts"


@dataclass(frozen=True)
class Credential:
    """What `GET /v1/me` says of the key."""

    object: str
    subject_type: str
    scopes: tuple[str, ...]
    account_required: bool
    # Who the key is, as the service tells it: the credential's id, and the accounts it
    # reaches (what a home records of its service, `pipelines/home.py`; never the key).
    id: str | None = None
    accounts: tuple[str, ...] = ()

    @property
    def missing_scopes(self) -> tuple[str, ...]:
        return tuple(s for s in REQUIRED_SCOPES if s not in self.scopes)


@dataclass(frozen=True)
class AccountRef:
    """An account to extract, the header value that selects it (agency keys only), and the
    page of `GET /v1/accounts` that listed it.

    The `accounts` table keeps each account's own row, and the service has no item route for
    one (spec 4.3). The run lists the key's accounts once anyway; each account lands the page
    that holds its row rather than asking for the whole listing again, which for an agency
    would be O(accounts) pages per account: 10 of a thousand accounts' 68 pages a day."""

    id: str
    name: str | None
    header: str | None
    listed_on: Page = field(compare=False, repr=False)


async def describe_credential(client: ServiceClient) -> Credential:
    """`GET /v1/me`, the first request of every session (spec 5.4: the cheapest check)."""
    body = (await client.first_contact("/v1/me")).body
    return Credential(
        object=str(body.get("object")),
        subject_type=str(body.get("subject_type")),
        scopes=tuple(body.get("scopes") or ()),
        account_required=bool(body.get("account_required")),
        id=str(body["id"]) if body.get("id") else None,
        accounts=tuple(
            str(account["id"])
            for account in body.get("accounts") or ()
            if isinstance(account, dict) and account.get("id")
        ),
    )


async def reachable_accounts(
    client: ServiceClient, credential: Credential, wanted: tuple[str, ...] = ()
) -> list[AccountRef]:
    """The accounts to extract: every listed one, or those `ADS_ACCOUNT_IDS` names."""
    chosen, unreachable = await listed_accounts(client, credential, wanted)
    if unreachable:
        raise ForbiddenError(
            f"GET {ACCOUNTS}",
            403,
            f"ADS_ACCOUNT_IDS names accounts this key cannot reach: {', '.join(unreachable)}",
        )
    return chosen


async def listed_accounts(
    client: ServiceClient, credential: Credential, wanted: tuple[str, ...] = ()
) -> tuple[list[AccountRef], list[str]]:
    """The accounts to extract (every listed one, or those of `wanted` the key reaches), and
    those of `wanted` it does not reach (an agency's client took its invitation back)."""
    listed: dict[str, tuple[str | None, Page]] = {}
    async for page in cursor_pages(client, ACCOUNTS):
        for row in page.rows:
            listed[row["id"]] = (row.get("name"), page)
    unreachable = [a for a in wanted if a not in listed]
    chosen = [a for a in wanted if a in listed] if wanted else list(listed)
    agency = credential.account_required or credential.subject_type == "agency"

    def ref(account: str) -> AccountRef:
        name, page = listed[account]
        return AccountRef(account, name, account if agency else None, page)

    return [ref(a) for a in chosen], unreachable


def no_longer_reached(account: str) -> ForbiddenError:
    """A packed run's account the key stopped reaching between packing and the run."""
    return ForbiddenError(
        f"GET {ACCOUNTS}", 403, f"the key no longer reaches account {account} (not listed)"
    )
