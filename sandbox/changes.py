"""The advertising change log: every change sent to the marketplace, whatever its origin.

Two sources feed it: the optimizer's nightly runs (`optimizer.OptimizerEvents`, source
`workflow`, with the run id as `correlation_id`), and changes made by people and programs on
campaigns the optimizer does not manage (sources `front`, `public-api`, `mcp`, `system`).
Rejected changes are logged with `result: failed` and the marketplace's message in `error`.
Nothing is older than 365 days (12 months' retention) or newer than the day before the
reference date.

The log is one columnar table, newest first; a page renders only its own rows. A row's id
encodes its position (an invertible permutation of it, behind a per-account prefix), so
`starting_after` needs no index of ids.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from sandbox.advertising import STATES, phrase
from sandbox.hashing import make_id
from sandbox.optimizer import (
    ADGROUP,
    BID,
    CAMPAIGN,
    ENTITY_TYPES,
    HARVEST,
    NEGATIVE,
    NULL,
    PLACEMENT,
    PRODUCT_AD,
    TARGET,
    WORKFLOWS,
    managed_campaigns,
)
from sandbox.reference import COUNTRY_BY_ID, money, ordinal, stamp
from sandbox.spec import CHANGE_LOG_RETENTION_DAYS

if TYPE_CHECKING:
    from sandbox.world import Account

SOURCES = ("front", "workflow", "system", "public-api", "mcp")
FRONT, WORKFLOW, SYSTEM, PUBLIC_API, MCP = range(len(SOURCES))
FIELDS = (
    "state",
    "dailyBudget",
    "name",
    "defaultBid",
    "bid",
    "keyword",
    "negativeKeyword",
    "placementTopOfSearch",
)
STATE, DAILY_BUDGET, NAME, DEFAULT_BID, BID_FIELD, KEYWORD, NEGATIVE_KEYWORD, PLACEMENT_FIELD = (
    range(len(FIELDS))
)
_FIELD_OF_CHANGE = {
    BID: BID_FIELD,
    HARVEST: KEYWORD,
    NEGATIVE: NEGATIVE_KEYWORD,
    PLACEMENT: PLACEMENT_FIELD,
}
MONEY_FIELDS = (DAILY_BUDGET, DEFAULT_BID, BID_FIELD)
ERRORS = {
    STATE: "The entity is archived at the marketplace; its state cannot change.",
    DAILY_BUDGET: "Daily budget exceeds the portfolio's remaining budget cap.",
    NAME: "A campaign with this name already exists in this profile.",
    DEFAULT_BID: "Bid is outside the marketplace's limits for this ad product.",
    BID_FIELD: "The target was archived at the marketplace before the change arrived.",
    KEYWORD: "The keyword already exists in this ad group.",
    NEGATIVE_KEYWORD: "The negative keyword already exists in this ad group.",
    PLACEMENT_FIELD: "Placement adjustment is not supported for this bidding strategy.",
}
PEOPLE = (
    "ana.perez@example.com",
    "li.wei@example.com",
    "marta.rossi@example.com",
    "tom.becker@example.com",
)
PROCESSES = ("system:budget-pacer", "system:dayparting", "system:archiver")
API_KEYS = 2
# Where each kind of actor starts in `actors(account)`.
_KEYS_AT = len(PEOPLE)
_GRANT_AT = _KEYS_AT + API_KEYS
_PROCESSES_AT = _GRANT_AT + 1
_WORKFLOWS_AT = _PROCESSES_AT + len(PROCESSES)
CHANGES_PER_CAMPAIGN = 10  # changes by people and programs over the year, per campaign
SHARE_FAILED = 0.06
_MASK = 2**48 - 1
_MULTIPLIERS = (0x5DEECE66D, 0xBF58476D1CE5)  # odd, so invertible modulo 2**48
_INVERSES = tuple(pow(m, -1, 2**48) for m in _MULTIPLIERS)
_OFFSET = 0x9E3779B97F4A


def _scramble(position: int) -> int:
    """An invertible 48-bit mix of a row position: ids look random and decode without a map."""
    value = ((position + _OFFSET) * _MULTIPLIERS[0]) & _MASK
    value ^= value >> 24
    return (value * _MULTIPLIERS[1]) & _MASK


def _unscramble(value: int) -> int:
    value = (value * _INVERSES[1]) & _MASK
    value ^= value >> 24
    return (value * _INVERSES[0] - _OFFSET) & _MASK


def actors(account: "Account") -> tuple[str, ...]:
    """Everyone who can change something: people, credentials, processes, workflows."""
    keys = tuple(
        f"api_key:{make_id(account.seed, account.index, 'key', k)[:8]}" for k in range(API_KEYS)
    )
    grant = f"oauth_token:{make_id(account.seed, account.index, 'grant')[:8]}"
    workflows = tuple(f"workflow:{account.id_of('workflow', w)}" for w in range(WORKFLOWS))
    return (*PEOPLE, *keys, grant, *PROCESSES, *workflows)


@dataclass(frozen=True)
class ChangeLog:
    """Every logged change of an account as columns, newest first."""

    prefix: str
    time: np.ndarray  # seconds since the epoch
    entity_type: np.ndarray  # index into ENTITY_TYPES
    entity: np.ndarray
    campaign: np.ndarray
    adgroup: np.ndarray  # -1 for campaign changes
    field: np.ndarray  # index into FIELDS
    old: np.ndarray  # state code, minor units, keyword hash or percent; NULL when none
    new: np.ndarray
    source: np.ndarray  # index into SOURCES
    actor: np.ndarray  # index into `actors(account)`
    applied: np.ndarray
    workflow: np.ndarray  # the run's workflow for `workflow` rows, else -1

    @classmethod
    def build(cls, account: "Account") -> "ChangeLog":
        parts = [_workflow_rows(account), _manual_rows(account)]
        columns = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
        order = np.lexsort((np.arange(len(columns["time"])), -columns["time"]))
        prefix = make_id(account.seed, account.index, "advertising-changes")[:12]
        return cls(prefix, **{name: column[order] for name, column in columns.items()})

    def __len__(self) -> int:
        return len(self.time)

    # ------------------------------------------------------------------ ids
    def id_of(self, position: int) -> str:
        return f"{self.prefix}{_scramble(position):012x}"

    def position_of(self, change_id: str) -> int | None:
        """The row an id names, or None when it is not one of this log's ids."""
        if len(change_id) != 24 or not change_id.startswith(self.prefix):
            return None
        try:
            encoded = int(change_id[12:], 16)
        except ValueError:
            return None
        position = _unscramble(encoded)
        return position if position < len(self) else None

    def runs(self, account: "Account") -> dict[str, tuple[int, int]]:
        """The run ids found in the log, each to its (workflow, day)."""
        logged = self.workflow >= 0
        days = (self.time[logged] // 86_400).tolist()
        pairs = set(zip(self.workflow[logged].tolist(), days, strict=True))
        return {account.optimizer.run_id(account, w, d): (w, d) for w, d in pairs}

    # ------------------------------------------------------------------ rows
    def row(self, account: "Account", k: int) -> dict:
        campaign = account.campaigns[self.campaign[k]]
        field = int(self.field[k])
        exponent = COUNTRY_BY_ID[campaign["country"]].exponent
        entity_type = int(self.entity_type[k])
        workflow = int(self.workflow[k])
        day, second = divmod(int(self.time[k]), 86_400)
        return {
            "object": "advertising_change",
            "id": self.id_of(k),
            "changed_at": stamp(day, second),
            "entity_type": ENTITY_TYPES[entity_type],
            "entity_id": _entity_id(account, entity_type, int(self.entity[k])),
            "campaign": campaign["id"],
            "adgroup": None if self.adgroup[k] < 0 else account.id_of("adgroup", self.adgroup[k]),
            "connection": campaign["connection"],
            "country": campaign["country"],
            "field": FIELDS[field],
            "old_value": _value(account, self, k, field, int(self.old[k]), exponent, old=True),
            "new_value": _value(account, self, k, field, int(self.new[k]), exponent, old=False),
            "source": SOURCES[self.source[k]],
            "actor": actors(account)[self.actor[k]],
            "result": "applied" if self.applied[k] else "failed",
            "error": None if self.applied[k] else ERRORS[field],
            "correlation_id": None
            if workflow < 0
            else account.optimizer.run_id(account, workflow, day),
        }


def _entity_id(account: "Account", entity_type: int, entity: int) -> str:
    kind = ("campaign", "adgroup", "target", "product-ad")[entity_type]
    return account.id_of(kind, entity)


def _value(
    account: "Account", log: ChangeLog, k: int, field: int, value: int, exponent: int, old: bool
) -> str | None:
    """A logged value as a string: a state, a decimal amount, a name, a keyword, a percent."""
    if value == NULL:
        return None
    if field == STATE:
        return STATES[value]
    if field in MONEY_FIELDS:
        return money(value, exponent)
    if field == NAME:
        records = account.campaigns if log.entity_type[k] == CAMPAIGN else account.adgroups
        name = records[log.entity[k]]["name"]
        return f"{name} (draft)" if old else name
    if field in (KEYWORD, NEGATIVE_KEYWORD):
        return phrase(value)
    return str(value)


def _workflow_rows(account: "Account") -> dict[str, np.ndarray]:
    """The optimizer's changes, applied or rejected, as log rows."""
    events = account.optimizer
    size = len(events.day)
    field = np.zeros(size, dtype=np.int64)
    for change, name in _FIELD_OF_CHANGE.items():
        field[events.change == change] = name
    # Blocked and quarantined targets are state changes (field 0, ENABLED → PAUSED).
    return {
        "time": events.day * 86_400 + events.second,
        "entity_type": events.entity_type,
        "entity": events.entity,
        "campaign": events.campaign,
        "adgroup": events.adgroup,
        "field": field,
        "old": events.old,
        "new": events.new,
        "source": np.full(size, WORKFLOW),
        "actor": _WORKFLOWS_AT + events.workflow,
        "applied": events.applied,
        "workflow": events.workflow,
    }


def _manual_rows(account: "Account") -> dict[str, np.ndarray]:
    """Changes by people, credentials and processes, on campaigns the optimizer leaves alone."""
    size = CHANGES_PER_CAMPAIGN * len(account.campaigns)
    u = account.columns("change-log", 9, size)
    u_day, u_second, u_type, u_pick, u_field, u_source, u_actor, u_fail, u_value = u
    last = ordinal(account.reference) - 1
    day = last - (u_day * CHANGE_LOG_RETENTION_DAYS).astype(np.int64)
    entity_type = np.select(
        [u_type < 0.4, u_type < 0.6, u_type < 0.9], [CAMPAIGN, ADGROUP, TARGET], PRODUCT_AD
    )
    links = _links(account)
    entity = np.zeros(size, dtype=np.int64)
    campaign = np.zeros(size, dtype=np.int64)
    adgroup = np.full(size, -1)
    for kind, (owners, groups) in links.items():
        here = entity_type == kind
        entity[here] = (u_pick[here] * len(owners)).astype(np.int64)
        campaign[here] = owners[entity[here]]
        adgroup[here] = groups[entity[here]]
    field, old, new = _manual_values(account, entity_type, entity, campaign, u_field, u_value)
    source = np.select(
        [u_source < 0.45, u_source < 0.65, u_source < 0.85], [FRONT, PUBLIC_API, SYSTEM], MCP
    )
    actor = np.select(
        [source == FRONT, source == PUBLIC_API, source == MCP],
        [
            (u_actor * len(PEOPLE)).astype(np.int64),
            _KEYS_AT + (u_actor * API_KEYS).astype(np.int64),
            np.full(size, _GRANT_AT),
        ],
        _PROCESSES_AT + (u_actor * len(PROCESSES)).astype(np.int64),
    )
    # Entities of a kind the account has none of are dropped, as are those the optimizer
    # manages: it refuses other writers.
    keep = np.isin(entity_type, list(links))
    keep &= ~np.isin(campaign, managed_campaigns(account).campaign)
    columns = {
        "time": day * 86_400 + _working_hours(source, u_second),
        "entity_type": entity_type,
        "entity": entity,
        "campaign": campaign,
        "adgroup": adgroup,
        "field": field,
        "old": old,
        "new": new,
        "source": source,
        "actor": actor,
        "applied": u_fail >= SHARE_FAILED,
        "workflow": np.full(size, -1),
    }
    return {name: np.asarray(column)[keep] for name, column in columns.items()}


def _links(account: "Account") -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per entity type: the campaign and the ad group (-1 for campaigns) of each entity."""
    campaigns = np.arange(len(account.campaigns))
    groups = account.adgroup_table
    targets = account.target_table
    ads = account.product_ad_table
    links = {
        CAMPAIGN: (campaigns, np.full(len(campaigns), -1)),
        ADGROUP: (groups.campaign, np.arange(len(groups.campaign))),
        TARGET: (targets.campaign, targets.adgroup),
        PRODUCT_AD: (ads.campaign, ads.adgroup),
    }
    return {kind: link for kind, link in links.items() if len(link[0])}


def _manual_values(
    account: "Account",
    entity_type: np.ndarray,
    entity: np.ndarray,
    campaign: np.ndarray,
    u_field: np.ndarray,
    u_value: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The field each change touched and its old and new values; the new value is the current
    one for money and names, so the latest change of an entity agrees with its record."""
    groups, targets = account.adgroup_table, account.target_table
    choice = (u_field * 3).astype(np.int64)
    group_bid = groups.default_bid[np.where(entity_type == ADGROUP, entity, 0)]
    positive = ~targets.negative[np.where(entity_type == TARGET, entity, 0)]
    field = np.select(
        [entity_type == CAMPAIGN, entity_type == ADGROUP, entity_type == TARGET],
        [
            np.choose(choice, (STATE, DAILY_BUDGET, NAME)),
            np.choose(choice, (STATE, DEFAULT_BID, NAME)),
            np.where(positive & (choice >= 1), BID_FIELD, STATE),
        ],
        STATE,
    )
    # SB ad groups have no default bid: such a change is refused before it is sent.
    field[(field == DEFAULT_BID) & (group_bid < 0)] = STATE
    exponent = account.campaign_table.exponent[campaign]
    budget = np.array([c["budget"]["amount"] for c in account.campaigns])[campaign] * 10**exponent
    bid = account.optimizer.current_bid[np.where(entity_type == TARGET, entity, 0)]
    current = np.select(
        [field == DAILY_BUDGET, field == DEFAULT_BID, field == BID_FIELD],
        [budget, group_bid, bid],
        NULL,
    )
    factor = 0.7 + 0.6 * u_value
    earlier = np.maximum(np.rint(current * factor).astype(np.int64), 1)
    state_old = (u_value < 0.5).astype(np.int64)
    state_new = np.where(u_value > 0.95, 2, 1 - state_old)
    old = np.select([field == STATE, field == NAME], [state_old, 1], earlier)
    new = np.select([field == STATE, field == NAME], [state_new, 1], current)
    return field, old, new


def _working_hours(source: np.ndarray, u: np.ndarray) -> np.ndarray:
    """People change things between 07:00 and 19:00 UTC; programs at any time."""
    people = source == FRONT
    return np.where(people, 7 * 3600 + u * 12 * 3600, u * 86_400).astype(np.int64)
