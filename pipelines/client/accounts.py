"""Who the key is and which accounts a run extracts."""

from dataclasses import dataclass

from pipelines.client.errors import ForbiddenError
from pipelines.client.http import ServiceClient
from pipelines.client.paging import cursor_pages

REQUIRED_SCOPES = ("catalog:read", "campaigns:read", "connections:read")


@dataclass(frozen=True)
class Credential:
    """What `GET /v1/me` says of the key."""

    object: str
    subject_type: str
    scopes: tuple[str, ...]
    account_required: bool

    @property
    def missing_scopes(self) -> tuple[str, ...]:
        return tuple(s for s in REQUIRED_SCOPES if s not in self.scopes)


@dataclass(frozen=True)
class AccountRef:
    """An account to extract, and the header value that selects it (agency keys only)."""

    id: str
    name: str | None
    header: str | None


async def describe_credential(client: ServiceClient) -> Credential:
    body = (await client.get("/v1/me")).body
    return Credential(
        object=str(body.get("object")),
        subject_type=str(body.get("subject_type")),
        scopes=tuple(body.get("scopes") or ()),
        account_required=bool(body.get("account_required")),
    )


async def reachable_accounts(
    client: ServiceClient, credential: Credential, wanted: tuple[str, ...] = ()
) -> list[AccountRef]:
    """The accounts to extract: every listed one, or those `ADS_ACCOUNT_IDS` names."""
    listed: dict[str, str | None] = {}
    async for page in cursor_pages(client, "/v1/accounts"):
        for row in page.rows:
            listed[row["id"]] = row.get("name")
    unknown = [a for a in wanted if a not in listed]
    if unknown:
        raise ForbiddenError(
            "GET /v1/accounts",
            403,
            f"ADS_ACCOUNT_IDS names accounts this key cannot reach: {', '.join(unknown)}",
        )
    chosen = wanted or tuple(listed)
    agency = credential.account_required or credential.subject_type == "agency"
    return [AccountRef(a, listed[a], a if agency else None) for a in chosen]
