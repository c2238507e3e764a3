"""The advertising change log: every change sent to the marketplace, whatever its origin.

Two sources feed it: the optimizer's nightly runs (`optimizer.OptimizerEvents`, source
`workflow`, with the run id as `correlation_id`), and changes made by people and programs on
campaigns the optimizer does not manage (sources `front`, `public-api`, `mcp`, `system`).
Rejected changes are logged with `result: failed` and the marketplace's message in `error`.
Nothing is older than 365 days (12 months' retention) or newer than the day before the
reference date.

Changes by people and programs to campaigns and ad groups (`Edits`) happen on absolute days,
the same whatever the reference date, and the records follow them: a campaign's or ad group's
state, budget or default bid, name and `updatedAt` are what its applied changes up to the day
before the reference left, each row's `old_value` is the value just before it. So two daily
snapshots differ exactly by the applied changes logged on the day between them. The records'
history starts at each entity's creation, before the log's retention: a change that leaves the
log leaves the records as they were. Target and product-ad changes by people are still drawn
relative to the reference date, and their records do not follow them.

The log is one columnar table, newest first; a page renders only its own rows. A row's id
encodes its position (an invertible permutation of it, behind a per-account prefix), so
`starting_after` needs no index of ids.
"""

from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, datetime

import numpy as np

from sandbox.advertising import AdGroupTable, ProductAdTable, TargetTable
from sandbox.campaigns import ARCHIVED, SB, STATES, CampaignTable, campaign_delivery, versioned
from sandbox.hashing import Draws, make_id
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
    Managed,
    OptimizerEvents,
    run_id,
)
from sandbox.reference import COUNTRY_BY_ID, amount, money, ordinal, stamp
from sandbox.spec import CHANGE_LOG_RETENTION_DAYS
from sandbox.vocabulary import phrase

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
# Where each kind of actor starts in `actors(draws)`.
_KEYS_AT = len(PEOPLE)
_GRANT_AT = _KEYS_AT + API_KEYS
_PROCESSES_AT = _GRANT_AT + 1
_WORKFLOWS_AT = _PROCESSES_AT + len(PROCESSES)
CHANGES_PER_CAMPAIGN = (
    10  # target and product-ad changes by people and programs a year, per campaign
)
# Campaign and ad-group changes by people and programs a year, per campaign: budget pacers,
# dayparting and people move a campaign or one of its ad groups every week or two.
EDITS_PER_CAMPAIGN = 30
SHARE_FAILED = 0.06
# Of the changes by people and programs: campaigns 40%, ad groups 20%, targets 30%, product ads.
TYPE_SHARES = (0.4, 0.6, 0.9)
BLOCK_DAYS = 28  # campaign and ad-group changes are drawn per absolute block of this many days
SHARE_ARCHIVING = 0.05  # of state changes by people and programs: to ARCHIVED
# About half the draws fall before their entity's creation or on an archived entity and are
# dropped: drawing twice as many keeps today's density in the log.
_OVERDRAW = 2
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


def actors(draws: Draws) -> tuple[str, ...]:
    """Everyone who can change something: people, credentials, processes, workflows."""
    keys = tuple(
        f"api_key:{make_id(draws.seed, draws.index, 'key', k)[:8]}" for k in range(API_KEYS)
    )
    grant = f"oauth_token:{make_id(draws.seed, draws.index, 'grant')[:8]}"
    workflows = tuple(f"workflow:{draws.id_of('workflow', w)}" for w in range(WORKFLOWS))
    return (*PEOPLE, *keys, grant, *PROCESSES, *workflows)


@dataclass(frozen=True)
class Names:
    """What rendering a row reads besides the log's columns: the account's ids and actors, the
    campaigns as of the reference date, and the base campaigns and ad groups (a rename's value
    is a version of the base name)."""

    draws: Draws
    actors: tuple[str, ...]
    campaigns: list[dict]
    base_campaigns: list[dict]
    base_adgroups: list[dict]


@dataclass(frozen=True)
class ChangeLog:
    """Every logged change of an account as columns, newest first."""

    names: Names
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
    actor: np.ndarray  # index into `actors(draws)`
    applied: np.ndarray
    workflow: np.ndarray  # the run's workflow for `workflow` rows, else -1

    @classmethod
    def build(
        cls,
        names: Names,
        reference: date,
        events: OptimizerEvents,
        edits: "Edits",
        managed: Managed,
        targets: TargetTable,
        product_ads: ProductAdTable,
    ) -> "ChangeLog":
        """The optimizer's `events`, the `edits` still within retention, and the target and
        product-ad changes of the campaigns `managed` leaves to people and programs."""
        draws = names.draws
        first = ordinal(reference) - CHANGE_LOG_RETENTION_DAYS
        manual = _manual_rows(
            draws, reference, len(names.base_campaigns), managed, targets, product_ads, events
        )
        parts = [_workflow_rows(events), edits.log_rows(first), manual]
        columns = {name: np.concatenate([p[name] for p in parts]) for name in parts[0]}
        order = np.lexsort((np.arange(len(columns["time"])), -columns["time"]))
        prefix = make_id(draws.seed, draws.index, "advertising-changes")[:12]
        return cls(names, prefix, **{name: column[order] for name, column in columns.items()})

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

    def runs(self) -> dict[str, tuple[int, int]]:
        """The run ids found in the log, each to its (workflow, day)."""
        logged = self.workflow >= 0
        days = (self.time[logged] // 86_400).tolist()
        pairs = set(zip(self.workflow[logged].tolist(), days, strict=True))
        return {run_id(self.names.draws, w, d): (w, d) for w, d in pairs}

    # ------------------------------------------------------------------ rows
    def row(self, k: int) -> dict:
        names, draws = self.names, self.names.draws
        campaign = names.campaigns[self.campaign[k]]
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
            "entity_id": _entity_id(draws, entity_type, int(self.entity[k])),
            "campaign": campaign["id"],
            "adgroup": None if self.adgroup[k] < 0 else draws.id_of("adgroup", self.adgroup[k]),
            "connection": campaign["connection"],
            "country": campaign["country"],
            "field": FIELDS[field],
            "old_value": _value(self, k, field, int(self.old[k]), exponent),
            "new_value": _value(self, k, field, int(self.new[k]), exponent),
            "source": SOURCES[self.source[k]],
            "actor": names.actors[self.actor[k]],
            "result": "applied" if self.applied[k] else "failed",
            "error": None if self.applied[k] else ERRORS[field],
            "correlation_id": None if workflow < 0 else run_id(draws, workflow, day),
        }


def _entity_id(draws: Draws, entity_type: int, entity: int) -> str:
    kind = ("campaign", "adgroup", "target", "product-ad")[entity_type]
    return draws.id_of(kind, entity)


def _value(log: ChangeLog, k: int, field: int, value: int, exponent: int) -> str | None:
    """A logged value as a string: a state, a decimal amount, a name, a keyword, a percent."""
    if value == NULL:
        return None
    if field == STATE:
        return STATES[value]
    if field in MONEY_FIELDS:
        return money(value, exponent)
    if field == NAME:  # a version: how many renames
        names = log.names
        kind = names.base_campaigns if log.entity_type[k] == CAMPAIGN else names.base_adgroups
        return versioned(kind[log.entity[k]]["name"], value)
    if field in (KEYWORD, NEGATIVE_KEYWORD):
        return phrase(value)
    return str(value)


def _workflow_rows(events: OptimizerEvents) -> dict[str, np.ndarray]:
    """The optimizer's changes, applied or rejected, as log rows."""
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


def _who(u_source: np.ndarray, u_actor: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(source, actor) of changes by people and programs: front, public API, system, MCP."""
    source = np.select(
        [u_source < 0.45, u_source < 0.65, u_source < 0.85], [FRONT, PUBLIC_API, SYSTEM], MCP
    )
    actor = np.select(
        [source == FRONT, source == PUBLIC_API, source == MCP],
        [
            (u_actor * len(PEOPLE)).astype(np.int64),
            _KEYS_AT + (u_actor * API_KEYS).astype(np.int64),
            np.full(len(source), _GRANT_AT),
        ],
        _PROCESSES_AT + (u_actor * len(PROCESSES)).astype(np.int64),
    )
    return source, actor


# ---------------------------------------------------------------------- campaigns, ad groups
Key = tuple[int, int, int]  # (entity type, entity, field)


@dataclass(frozen=True)
class Edits:
    """Changes by people and programs to campaigns and ad groups, from each one's creation to
    the day before the reference date, in time order, and the values they left.

    They are drawn per absolute block of `BLOCK_DAYS` days from (seed, account, block) alone,
    so a change happens on the same calendar day whatever the reference date; the reference
    only cuts the tail. Entities are those of the anchor (`assembly.py`), so within a
    quarter the history before any day is the same for every reference date.

    A record's `updatedAt` is the time of the entity's last applied change in the log, these or
    the optimizer's (a placement adjustment on a campaign, a keyword harvested into an ad
    group), so every applied campaign or ad-group row shows in the records.
    """

    rows: dict[str, np.ndarray]  # the change log's columns, oldest first
    steps: dict[Key, tuple[list[int], list[int]]]  # applied: (times, values after), in order
    touches: dict[tuple[int, int], list[int]]  # (entity type, entity): applied change times

    @classmethod
    def build(
        cls,
        draws: Draws,
        reference: date,
        campaigns: list[dict],
        campaign_table: CampaignTable,
        groups: AdGroupTable,
        managed: Managed,
        events: OptimizerEvents,
    ) -> "Edits":
        """The changes to the base `campaigns` and their ad groups (`groups`) but those
        `managed` by the optimizer, whose `events` date the records too."""
        rows = _edit_rows(draws, reference, len(campaigns), campaign_table, groups, managed)
        old, new, kept = _chain(rows, rows.pop("u_value"), campaigns, campaign_table, groups)
        rows = {name: column[kept] for name, column in rows.items()}
        rows.update(old=old[kept], new=new[kept], workflow=np.full(int(kept.sum()), -1))
        return cls(rows, _steps(rows), _touches(rows, events, campaign_table, groups))

    def log_rows(self, first_day: int) -> dict[str, np.ndarray]:
        """The rows the log still holds: from `first_day` (an ordinal) on."""
        kept = self.rows["time"] >= first_day * 86_400
        return {name: column[kept] for name, column in self.rows.items()}

    def values(self, entity_type: int, entity: int, before: str | None = None) -> dict:
        """Per field, (time, value) left by the entity's last applied change before `before`
        (a timestamp; None: all of them); fields never changed are absent."""
        limit = None if before is None else _seconds(before)
        out = {}
        for field in (STATE, DAILY_BUDGET, DEFAULT_BID, NAME):
            times, values = self.steps.get((entity_type, entity, field), ((), ()))
            count = len(times) if limit is None else bisect_left(times, limit)
            if count:
                out[field] = (times[count - 1], values[count - 1])
        return out

    def last_touch(self, entity_type: int, entity: int, before: str | None = None) -> int | None:
        """The time of the entity's last applied change (before `before`, if given), if any."""
        times = self.touches.get((entity_type, entity), [])
        count = len(times) if before is None else bisect_left(times, _seconds(before))
        return times[count - 1] if count else None

    def campaign(self, c: int, base: dict, exponent: int, before: str | None = None) -> dict:
        """The c-th campaign's base record with its applied changes (before `before`, if
        given); `exponent`: its currency's digits."""

        def updates(field: int, value: int) -> dict:
            if field == STATE:
                return {"state": STATES[value], **campaign_delivery(STATES[value])}
            if field == DAILY_BUDGET:
                scale = 10**exponent
                return {"budget": {**base["budget"], "amount": value // scale}}
            return {"name": versioned(base["name"], value)}

        return self._applied(CAMPAIGN, c, base, before, updates)

    def adgroup(self, j: int, base: dict, exponent: int, before: str | None = None) -> dict:
        """The j-th ad group's base record with its applied changes (as `campaign`)."""

        def updates(field: int, value: int) -> dict:
            if field == STATE:
                return {"state": STATES[value]}
            if field == DEFAULT_BID:
                return {"defaultBid": amount(value, exponent)}
            return {"name": versioned(base["name"], value)}

        return self._applied(ADGROUP, j, base, before, updates)

    def _applied(
        self,
        entity_type: int,
        entity: int,
        base: dict,
        before: str | None,
        updates: Callable[[int, int], dict],
    ) -> dict:
        """`base` with the fields each applied change left (before `before`, if given), as
        `updates` writes a field's value in the record, and `updatedAt` the last change's time;
        `base` itself when nothing changed it."""
        touched = self.last_touch(entity_type, entity, before)
        if touched is None:
            return base
        record = dict(base)
        for field, (_, value) in self.values(entity_type, entity, before).items():
            record.update(updates(field, value))
        record["updatedAt"] = _stamp(touched)
        return record


def _seconds(moment: str) -> int:
    """Seconds since the epoch of a spec timestamp (`…T10:00:05Z`)."""
    return int(datetime.fromisoformat(moment.replace("Z", "+00:00")).timestamp())


def _stamp(seconds: int) -> str:
    return stamp(*divmod(int(seconds), 86_400))


def _edit_rows(
    draws: Draws,
    reference: date,
    count: int,
    campaigns: CampaignTable,
    groups: AdGroupTable,
    managed: Managed,
) -> dict[str, np.ndarray]:
    """Every drawn campaign and ad-group change, from the first campaign's start to the day
    before the reference date, oldest first (old and new values not yet chained)."""
    last = ordinal(reference) - 1
    first = int(campaigns.start.min()) if len(campaigns.start) else 0
    blocks = [
        _block(draws, b, count, campaigns, groups)
        for b in range(first // BLOCK_DAYS, last // BLOCK_DAYS + 1)
    ]
    rows = {name: np.concatenate([block[name] for block in blocks]) for name in blocks[0]}
    day, since = rows.pop("day"), rows.pop("since")
    kept = (day <= last) & (day >= since)
    kept &= ~np.isin(rows["campaign"], managed.campaign)
    order = np.argsort(rows["time"][kept], kind="stable")
    return {name: column[kept][order] for name, column in rows.items()}


def _block_size(count: int) -> int:
    """Campaign and ad-group changes drawn per block for `count` campaigns: EDITS_PER_CAMPAIGN
    a year per campaign."""
    share = _OVERDRAW * BLOCK_DAYS / CHANGE_LOG_RETENTION_DAYS
    return round(EDITS_PER_CAMPAIGN * count * share)


def _block(
    draws: Draws, block: int, count: int, campaigns: CampaignTable, groups: AdGroupTable
) -> dict[str, np.ndarray]:
    """The changes drawn for one absolute block of days: the same whatever the reference."""
    size = _block_size(count)
    u = draws.columns(f"edits-{block}", 9, size)
    u_day, u_second, u_type, u_pick, u_field, u_source, u_actor, u_fail, u_value = u
    day = block * BLOCK_DAYS + (u_day * BLOCK_DAYS).astype(np.int64)
    on_group = (u_type * TYPE_SHARES[1] >= TYPE_SHARES[0]) & (len(groups.campaign) > 0)
    count = np.where(on_group, len(groups.campaign), len(campaigns.start))
    entity = (u_pick * count).astype(np.int64)
    group = np.where(on_group, entity, 0)
    campaign = np.where(on_group, groups.campaign[group] if len(groups.campaign) else 0, entity)
    source, actor = _who(u_source, u_actor)
    return {
        "day": day,
        # A change comes after its entity's creation: from a campaign's start day, from the day
        # after an ad group's creation day.
        "since": np.where(on_group, groups.created[group] + 1, campaigns.start[campaign]),
        "time": day * 86_400 + _working_hours(source, u_second),
        "entity_type": np.where(on_group, ADGROUP, CAMPAIGN),
        "entity": entity,
        "campaign": campaign,
        "adgroup": np.where(on_group, entity, -1),
        "field": _edit_fields(campaigns, on_group, group, campaign, u_field),
        "source": source,
        "actor": actor,
        "applied": u_fail >= SHARE_FAILED,
        "u_value": u_value,
    }


def _edit_fields(
    campaigns: CampaignTable,
    on_group: np.ndarray,
    group: np.ndarray,
    campaign: np.ndarray,
    u_field: np.ndarray,
) -> np.ndarray:
    """Campaigns: state, daily budget or name; ad groups: state, default bid or name (SB ad
    groups have no default bid, so that change is a state change)."""
    choice = (u_field * 3).astype(np.int64)
    money_field = np.where(on_group, DEFAULT_BID, DAILY_BUDGET)
    field = np.select([choice == 0, choice == 1], [STATE, money_field], NAME)
    no_bid = on_group & (campaigns.ad_product[campaign] == SB)
    field[(field == DEFAULT_BID) & no_bid] = STATE
    return field


def _bases(
    records: list[dict], campaigns: CampaignTable, groups: AdGroupTable
) -> dict[tuple[int, int], np.ndarray]:
    """Per (entity type, field): each entity's value before any change (minor units for money,
    a version for names); `records` the base campaigns."""
    budgets = np.array([c["budget"]["amount"] for c in records], dtype=np.int64)
    return {
        (CAMPAIGN, STATE): campaigns.state,
        (CAMPAIGN, DAILY_BUDGET): budgets * 10**campaigns.exponent,
        (ADGROUP, STATE): groups.state,
        (ADGROUP, DEFAULT_BID): groups.default_bid,
    }


def _chain(
    rows: dict[str, np.ndarray],
    u_value: np.ndarray,
    records: list[dict],
    campaigns: CampaignTable,
    groups: AdGroupTable,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(old, new, kept) per row, in time order: each change starts from the value the applied
    changes before it left, so the log's values chain and the records end on the last one. An
    archived entity takes no more changes (its later draws are dropped)."""
    bases = _bases(records, campaigns, groups)
    exponent = campaigns.exponent
    current: dict[Key, int] = {}
    size = len(rows["time"])
    old, new, kept = np.zeros(size, np.int64), np.zeros(size, np.int64), np.ones(size, bool)
    columns = (rows["entity_type"], rows["entity"], rows["campaign"], rows["field"])
    for k, (kind, e, c, field) in enumerate(zip(*(col.tolist() for col in columns), strict=True)):
        base = int(bases[kind, field][e]) if (kind, field) in bases else 0
        if current.get((kind, e, STATE), int(bases[kind, STATE][e])) == ARCHIVED:
            kept[k] = False
            continue
        before = current.get((kind, e, field), base)
        step = 10 ** int(exponent[c]) if field == DAILY_BUDGET else 1
        old[k], new[k] = before, _next(field, before, base, float(u_value[k]), step)
        if rows["applied"][k]:
            current[kind, e, field] = int(new[k])
    return old, new, kept


def _next(field: int, before: int, base: int, u: float, step: int) -> int:
    """The value a change sets: a state flip (now and then an archiving), the next name, or an
    amount within 30% of the base value, in whole `step`s, never the current one (a change to
    the same value is never sent)."""
    if field == STATE:
        return ARCHIVED if u > 1 - SHARE_ARCHIVING else 1 - before
    if field == NAME:
        return before + 1
    value = max(round(base * (0.7 + 0.6 * u) / step), 1) * step
    return value + step if value == before else value


def _steps(rows: dict[str, np.ndarray]) -> dict[Key, tuple[list[int], list[int]]]:
    """Applied changes per (entity type, entity, field): their times and the values they set."""
    steps: dict[Key, tuple[list[int], list[int]]] = {}
    applied = np.flatnonzero(rows["applied"])
    columns = ("entity_type", "entity", "field", "time", "new")
    for kind, e, field, time, value in zip(
        *(rows[name][applied].tolist() for name in columns), strict=True
    ):
        times, values = steps.setdefault((kind, e, field), ([], []))
        times.append(time)
        values.append(value)
    return steps


def _touches(
    rows: dict[str, np.ndarray],
    events: OptimizerEvents,
    campaigns: CampaignTable,
    groups: AdGroupTable,
) -> dict[tuple[int, int], list[int]]:
    """Per campaign and ad group: the times of its applied changes, by people and programs
    (`rows`) and by the optimizer (`events`), in order. The optimizer's runs start from
    `optimizingSince`, which may come before a campaign's start or an ad group's creation:
    those earlier rows do not date the record (it did not exist yet)."""
    mine = rows["applied"]
    created = np.where(
        events.entity_type == CAMPAIGN,
        campaigns.start[events.campaign] - 1,
        groups.created[np.maximum(events.adgroup, 0)],
    )
    theirs = events.applied & (events.entity_type <= ADGROUP) & (events.day > created)
    kinds = np.concatenate([rows["entity_type"][mine], events.entity_type[theirs]])
    entities = np.concatenate([rows["entity"][mine], events.entity[theirs]])
    times = np.concatenate([rows["time"][mine], (events.day * 86_400 + events.second)[theirs]])
    touches: dict[tuple[int, int], list[int]] = {}
    for k in np.argsort(times, kind="stable").tolist():
        touches.setdefault((int(kinds[k]), int(entities[k])), []).append(int(times[k]))
    return touches


# ---------------------------------------------------------------------- targets, product ads
def _manual_rows(
    draws: Draws,
    reference: date,
    campaigns: int,
    managed: Managed,
    targets: TargetTable,
    product_ads: ProductAdTable,
    events: OptimizerEvents,
) -> dict[str, np.ndarray]:
    """Changes by people and programs to targets and product ads, on campaigns the optimizer
    leaves alone, over the log's year before the reference date. Their records do not follow
    them (a target's bid is the optimizer's, `events.current_bid`)."""
    size = CHANGES_PER_CAMPAIGN * campaigns
    u = draws.columns("change-log", 9, size)
    u_day, u_second, u_type, u_pick, u_field, u_source, u_actor, u_fail, u_value = u
    last = ordinal(reference) - 1
    day = last - (u_day * CHANGE_LOG_RETENTION_DAYS).astype(np.int64)
    # The draws below TYPE_SHARES[1] were campaign and ad-group changes: `Edits` has them now.
    entity_type = np.select(
        [u_type < TYPE_SHARES[1], u_type < TYPE_SHARES[2]], [CAMPAIGN, TARGET], PRODUCT_AD
    )
    links = _links(targets, product_ads)
    entity = np.zeros(size, dtype=np.int64)
    campaign = np.zeros(size, dtype=np.int64)
    adgroup = np.full(size, -1)
    for kind, (owners, groups) in links.items():
        here = entity_type == kind
        entity[here] = (u_pick[here] * len(owners)).astype(np.int64)
        campaign[here] = owners[entity[here]]
        adgroup[here] = groups[entity[here]]
    field, old, new = _manual_values(
        targets, events.current_bid, entity_type, entity, u_field, u_value
    )
    source, actor = _who(u_source, u_actor)
    # Entities of a kind the account has none of are dropped, as are those the optimizer
    # manages: it refuses other writers.
    keep = np.isin(entity_type, list(links))
    keep &= ~np.isin(campaign, managed.campaign)
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


def _links(targets: TargetTable, ads: ProductAdTable) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Per entity type of `_manual_rows`: the campaign and the ad group of each entity."""
    links = {
        TARGET: (targets.campaign, targets.adgroup),
        PRODUCT_AD: (ads.campaign, ads.adgroup),
    }
    return {kind: link for kind, link in links.items() if len(link[0])}


def _manual_values(
    targets: TargetTable,
    bids: np.ndarray,
    entity_type: np.ndarray,
    entity: np.ndarray,
    u_field: np.ndarray,
    u_value: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The field each target or product-ad change touched and its old and new values; a bid's
    new value is the current one (`bids`, per target)."""
    choice = (u_field * 3).astype(np.int64)
    positive = ~targets.negative[np.where(entity_type == TARGET, entity, 0)]
    field = np.where((entity_type == TARGET) & positive & (choice >= 1), BID_FIELD, STATE)
    bid = bids[np.where(entity_type == TARGET, entity, 0)]
    current = np.where(field == BID_FIELD, bid, NULL)
    factor = 0.7 + 0.6 * u_value
    earlier = np.maximum(np.rint(current * factor).astype(np.int64), 1)
    state_old = (u_value < 0.5).astype(np.int64)
    state_new = np.where(u_value > 0.95, 2, 1 - state_old)
    old = np.where(field == STATE, state_old, earlier)
    new = np.where(field == STATE, state_new, current)
    return field, old, new


def _working_hours(source: np.ndarray, u: np.ndarray) -> np.ndarray:
    """People change things between 07:00 and 19:00 UTC; programs at any time."""
    people = source == FRONT
    return np.where(people, 7 * 3600 + u * 12 * 3600, u * 86_400).astype(np.int64)
