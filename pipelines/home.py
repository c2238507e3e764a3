"""A home belongs to one service: the one its first run read.

A scheduled job that lost its environment reads the embedded sandbox (no `ADS_API_BASE_URL`),
and one pointed at another service reads that: into a home of real data, either would replace
days with another service's figures, and record the difference as restatements. So a home
keeps, in `service.json`, the service it was filled from: its address (or the embedded
sandbox's name) and who the service says the key is (`GET /v1/me`: the credential's id and the
accounts it reaches; never the key). A run of another service is refused before its first
request when the address differs, and after `/v1/me` when the service at the same address says
the key is someone else's. A new key reaching the same accounts is the same service (a key
revoked and replaced, spec 5.2); `move` takes the home to a new address of the same service.

A home filled before homes recorded their service is recorded by its next run, if the accounts
the lake holds are among those the key reaches.
"""

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from urllib.parse import urlsplit

from pipelines.client.accounts import Credential
from pipelines.settings import ConfigurationError, HomeSettings, Settings

RECORD_FILE = "service.json"
EMBEDDED = "the embedded sandbox"
# What a home holds once a run has written into it (a lake elsewhere still leaves these).
WRITTEN = ("warehouse.duckdb", "raw", "lake", "dagster")


class ForeignServiceError(ConfigurationError):
    """The run reads another service than the one its home belongs to."""


@dataclass(frozen=True)
class ServiceIdentity:
    """The service a home belongs to: where it is, and who it says the key is."""

    address: str | None  # None: an embedded stand-in, named by `embedded`
    embedded: str | None = None
    credential: str | None = None
    kind: str = ""  # the credential's object and subject type, as `/v1/me` says them
    accounts: tuple[str, ...] = ()
    recorded_at: str = field(default="", compare=False)

    @property
    def name(self) -> str:
        """The service as a person knows it: its address, or the embedded sandbox."""
        if self.address is not None:
            return self.address
        return EMBEDDED if self.embedded == "sandbox" else f"{EMBEDDED} {self.embedded!r}"

    def same_place(self, other: "ServiceIdentity") -> bool:
        return (self.address, self.embedded) == (other.address, other.embedded)

    def same_holder(self, other: "ServiceIdentity") -> bool:
        """The same credential, or one reaching an account of the other (a key replaced);
        whatever the service does not say cannot tell them apart."""
        if self.credential and other.credential and self.credential == other.credential:
            return True
        if self.accounts and other.accounts:
            return not set(self.accounts).isdisjoint(other.accounts)
        return not (self.credential and other.credential)


FIELDS = set(ServiceIdentity.__dataclass_fields__)


def normalized(url: str) -> str:
    """An address as compared: scheme and host in lower case, no default port, no final
    slash (`https://API.example.com:443/` is `https://api.example.com`)."""
    parts = urlsplit(url.strip())
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port not in (None, default) else ""
    host = (parts.hostname or "").lower()
    path = parts.path.rstrip("/")
    return f"{parts.scheme.lower()}://{host}{port}{path}"


def service_of(settings: Settings, credential: Credential | None = None) -> ServiceIdentity:
    """The service `settings` read, and who it says the key is when `credential` is known."""
    place = (
        ServiceIdentity(None, settings.sandbox)
        if settings.uses_sandbox
        else ServiceIdentity(normalized(str(settings.base_url)))
    )
    if credential is None:
        return place
    return replace(
        place,
        credential=credential.id,
        kind=f"{credential.object} ({credential.subject_type})",
        accounts=tuple(sorted(credential.accounts)),
        recorded_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def recorded(home: Path) -> ServiceIdentity | None:
    """The service `home` belongs to, or None before its first run."""
    try:
        body = json.loads((home / RECORD_FILE).read_text())
    except (FileNotFoundError, NotADirectoryError):
        return None
    except (OSError, ValueError) as error:
        raise ConfigurationError(
            f"{home / RECORD_FILE} cannot be read ({error}); it names the service this home "
            "belongs to: restore it, or adwh home move --to the service's address"
        ) from None
    body["accounts"] = tuple(body.get("accounts") or ())
    return ServiceIdentity(**{k: v for k, v in body.items() if k in FIELDS})


def record(home: Path, identity: ServiceIdentity) -> None:
    """Write the record whole or not at all: a crash leaves the previous one."""
    try:
        home.mkdir(parents=True, exist_ok=True)
        # A name of its own: a run's steps may record the same service at once.
        with tempfile.NamedTemporaryFile("w", dir=home, prefix=".service-", delete=False) as f:
            f.write(json.dumps(asdict(identity), indent=2) + "\n")
        os.replace(f.name, home / RECORD_FILE)
    except OSError as error:
        raise ConfigurationError(f"ADWH_HOME {home} is not writable: {error.strerror}") from None


def refusal(home: Path, holder: str, reader: ServiceIdentity, move: bool = False) -> str:
    """One line: the home, both services, what to do."""
    moved = f"; if the service moved, adwh home move --to {reader.address}" if move else ""
    return (
        f"refused: the home {home} belongs to {holder}, and this run reads {reader.name}: set "
        "that service's ADS_API_BASE_URL and ADS_API_KEY, or give this one a home of its own "
        f"(ADWH_HOME){moved}"
    )


def moved_between_addresses(holder: ServiceIdentity, reader: ServiceIdentity) -> bool:
    """Both are services at addresses: a home may move between them (never to or from an
    embedded stand-in)."""
    return holder.address is not None and reader.address is not None


def check_address(settings: Settings) -> None:
    """Before any request: refuse a run of another address than the home's service."""
    holder = recorded(settings.home)
    if holder is not None:
        refuse_another_place(settings.home, holder, service_of(settings))


def refuse_another_place(home: Path, holder: ServiceIdentity, reader: ServiceIdentity) -> None:
    if not holder.same_place(reader):
        move = moved_between_addresses(holder, reader)
        raise ForeignServiceError(refusal(home, holder.name, reader, move))


def claim(settings: Settings, credential: Credential) -> None:
    """Before the run's first read: refuse another holder (`check_holder`); record the
    service at a home's first run, and a replaced key or newly reached accounts since."""
    reader, holder = check_holder(settings, credential)
    if holder != reader:
        record(settings.home, reader)


def check_holder(
    settings: Settings, credential: Credential
) -> tuple[ServiceIdentity, ServiceIdentity | None]:
    """After `/v1/me`: refuse a service the home does not belong to; the service read, and
    the home's record."""
    home = settings.home
    reader, holder = service_of(settings, credential), recorded(home)
    if holder is None:
        held = accounts_held(settings)
        if held and reader.accounts and held.isdisjoint(reader.accounts):
            shown = f"the service of the {counted(len(held), 'account')} its lake holds"
            raise ForeignServiceError(refusal(home, shown, reader))
        return reader, holder
    refuse_another_place(home, holder, reader)
    if not reader.same_holder(holder):
        shown = f"{holder.name} as {holder.kind} {holder.credential}".rstrip()
        raise ForeignServiceError(
            refusal(home, shown, replace(reader, address=f"{reader.name} as another key"))
        )
    return reader, holder


def standing(settings: Settings, credential: Credential) -> tuple[bool, str]:
    """Whether a run of `settings` may write into its home, and why, in words: what `adwh
    check` says (`check_holder`'s judgement); nothing is recorded."""
    home = settings.home
    try:
        _, holder = check_holder(settings, credential)
    except ForeignServiceError:
        holder = recorded(home)
        owner = holder.name if holder is not None else "another service"
        return False, f"home {home}: belongs to {owner}; a run of this service is refused"
    if holder is None:
        return True, f"home {home}: no service recorded yet; the first run records this one"
    return True, f"home {home}: this service's"


def counted(number: int, thing: str) -> str:
    return f"{number} {thing}{'' if number == 1 else 's'}"


def accounts_held(settings: HomeSettings) -> set[str]:
    """The accounts a home's lake holds (the days it recorded publishing, else its `accounts`
    table), for a home filled before homes recorded their service; none before any write."""
    from pipelines.destination import Destination
    from warehouse.coverage import read_coverage

    if not any((settings.home / name).exists() for name in WRITTEN):
        return set()
    lake = Destination.of(settings).lake
    held = {account for account, _ in read_coverage(lake)}
    rows = lake.scan("accounts") if not held else None
    if rows is not None:
        held = set(rows.select("account_id").unique().collect()["account_id"].to_list())
    return held


def move(settings: Settings, credential: Credential) -> tuple[ServiceIdentity, ServiceIdentity]:
    """Take the home to `settings`' address, after the service there said the key is the
    home's holder's; returns the record before and after."""
    holder, reader = recorded(settings.home), service_of(settings, credential)
    if holder is None:
        raise ConfigurationError(
            f"the home {settings.home} records no service yet: its first run records the "
            "one it reads"
        )
    if not moved_between_addresses(holder, reader):
        raise ForeignServiceError(
            f"refused: the home {settings.home} belongs to {holder.name}; a home moves between "
            "addresses of one service, never to or from the embedded sandbox (set "
            "ADS_API_BASE_URL to the new address)"
        )
    if not reader.same_holder(holder):
        raise ForeignServiceError(
            f"refused: {reader.name} says the key reaches none of the accounts of the home "
            f"{settings.home} ({holder.name}): it is not the same service"
        )
    record(settings.home, reader)
    return holder, reader
