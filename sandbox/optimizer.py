"""The optimizer's nightly runs: every change it sent to the marketplace, and the history view.

A campaign is under the optimizer when it has a configuration and a workflow processes it: a
linked workflow, or the auto-selecting workflow 0 unless the campaign opted out (spec 4.7 rule
6). From its `optimizingSince` date, each night at 03:00 UTC the run of that workflow may move
the bid of each of its targets (raise or lower within the configured limits), and may harvest a
keyword, add a negative, adjust the top-of-search placement, or block or quarantine a target.

Bids depend on earlier nights (limits clip them), so the whole account is simulated once,
vectorised over targets night by night, into one columnar table of events. The optimization
history and the change log are two views of that table, so they always agree; every event
carries the run that sent it (`run_id`), the change log's `correlation_id`.

Some changes are rejected by the marketplace (`applied` false): they reach the change log with
`result: failed` and never the history. A raise the ACOS ceiling takes back the same night is two
applied changes with no net effect (`direction: unchanged`, `change_count: 2`).
"""

from dataclasses import dataclass
from datetime import date

import numpy as np

from sandbox.advertising import AdGroupTable, TargetTable
from sandbox.campaigns import ARCHIVED
from sandbox.hashing import Draws, hash_grid, make_id, uniform
from sandbox.reference import COUNTRY_BY_ID, money, ordinal, stamp
from sandbox.spec import OPTIMIZER_RUNS_AT_UTC

WORKFLOWS = 3  # workflow definitions of each account; workflow 0 selects campaigns itself
NIGHT = OPTIMIZER_RUNS_AT_UTC.hour * 3600  # seconds into the day of the nightly run
CHANGE_TYPES = (
    "bid",
    "harvested_keyword",
    "negative_keyword",
    "placement_adjustment",
    "target_blocked",
    "target_quarantined",
)
BID, HARVEST, NEGATIVE, PLACEMENT, BLOCKED, QUARANTINED = range(len(CHANGE_TYPES))
ENTITY_TYPES = ("campaign", "adgroup", "target", "product_ad")
CAMPAIGN, ADGROUP, TARGET, PRODUCT_AD = range(len(ENTITY_TYPES))
# (reason, scenario): raises, lowers, the ceiling's take-back, then one per other change type.
REASONS = (
    ("acos_below_target", "scale_winners"),
    ("impression_share_lost", "defend_rank"),
    ("acos_above_target", "cut_waste"),
    ("no_conversions", "trim_bleeders"),
    ("acos_ceiling", "ceiling_guard"),
    ("converting_search_term", "harvest"),
    ("spend_without_orders", "negate"),
    ("top_of_search_outperforms", "placement"),
    ("acos_far_above_target", "block"),
    ("no_impressions_14_days", "quarantine"),
)
CEILING = 4
_OTHER_REASON = {HARVEST: 5, NEGATIVE: 6, PLACEMENT: 7, BLOCKED: 8, QUARANTINED: 9}
SHARE_BID_CHANGE = 0.10  # of a managed target's nights
SHARE_OTHER_CHANGE = 0.08  # of a managed campaign's nights
SHARE_REJECTED = 0.02
SHARE_CAPPED_BACK = 0.07  # of applied raises
_SALT = 9_001
NULL = -1


@dataclass(frozen=True)
class Managed:
    """The campaigns under the optimizer, with what their runs need (one row per campaign)."""

    campaign: np.ndarray
    workflow: np.ndarray
    since: np.ndarray  # ordinal day of optimizingSince
    min_bid: np.ndarray  # minor units
    max_bid: np.ndarray


def managed_campaigns(draws: Draws, campaigns: list[dict], configs: list[dict | None]) -> Managed:
    """The campaigns (base records) whose configuration (`configs`, per campaign) puts them
    under a workflow."""
    workflow_of = {draws.id_of("workflow", w): w for w in range(WORKFLOWS)}
    rows = []
    for c, campaign in enumerate(campaigns):
        config = configs[c]
        if config is None:
            continue
        linked = config["linkedWorkflowDefinitionIds"]
        if not linked and config["workflowsOptOut"]:
            continue
        scale = 10 ** COUNTRY_BY_ID[campaign["country"]].exponent
        rows.append(
            (
                c,
                workflow_of[linked[0]] if linked else 0,
                ordinal(date.fromisoformat(config["optimizingSince"])),
                round(config["limits"]["minBid"] * scale),
                round(config["limits"]["maxBid"] * scale),
            )
        )
    columns = np.array(rows, dtype=np.int64).reshape(-1, 5).T
    return Managed(*columns)


@dataclass(frozen=True)
class OptimizerEvents:
    """Every change the optimizer sent, one row per change, in time order."""

    campaign: np.ndarray
    adgroup: np.ndarray  # -1 for campaign-level changes
    entity: np.ndarray  # index of the changed entity in its kind's list
    entity_type: np.ndarray  # index into ENTITY_TYPES
    change: np.ndarray  # index into CHANGE_TYPES
    day: np.ndarray  # ordinal day of the night
    second: np.ndarray  # seconds after midnight UTC
    old: np.ndarray  # bid (minor units), placement percent, state code, or NULL
    new: np.ndarray  # as `old`; a keyword's hash for harvested and negative keywords
    reason: np.ndarray  # index into REASONS
    applied: np.ndarray  # false: the marketplace rejected it (change log only)
    workflow: np.ndarray  # workflow definition whose run sent it
    current_bid: np.ndarray  # per target of the account: its bid after the last applied change

    @classmethod
    def build(
        cls,
        seed: int,
        reference: date,
        campaigns: int,
        managed: Managed,
        table: TargetTable,
        groups: AdGroupTable,
    ) -> "OptimizerEvents":
        """Every night from the first `optimizingSince` to the night before `reference`, over
        the `campaigns` campaigns' targets (`table`) and ad groups (`groups`)."""
        slot = np.full(campaigns, -1)
        slot[managed.campaign] = np.arange(len(managed.campaign))
        targets = np.flatnonzero(
            (slot[table.campaign] >= 0) & ~table.negative & (table.state != ARCHIVED)
        )
        bids = table.base_bid.copy()
        chunks: list[dict[str, np.ndarray]] = []
        last = ordinal(reference) - 1
        first = int(managed.since.min()) if len(managed.since) else last + 1
        for day in range(first, last + 1):
            chunks += _bid_night(seed, table, managed, slot, targets, bids, day)
            chunks += _other_night(seed, table, groups, managed, targets, day)
        if not chunks:  # nothing under the optimizer: a night without targets gives the columns
            chunks = _bid_night(seed, table, managed, slot, targets[:0], bids, last)
        events = {name: np.concatenate([chunk[name] for chunk in chunks]) for name in chunks[0]}
        order = np.lexsort((events["second"], events["day"]))
        return cls(
            **{name: column[order] for name, column in events.items()},
            current_bid=bids,
        )

    def history(
        self, draws: Draws, campaign: int, exponent: int, first: int, last: int
    ) -> "History":
        """The applied changes of one campaign (amounts of `exponent` digits) between two days,
        aggregated per entity."""
        chosen = np.flatnonzero(
            (self.campaign == campaign) & self.applied & (self.day >= first) & (self.day <= last)
        )
        bid_rows: dict[int, dict] = {}
        other_rows: dict[tuple[int, int, int], dict] = {}
        for e in chosen.tolist():
            at = stamp(self.day[e], self.second[e])
            reason, scenario = REASONS[self.reason[e]]
            if self.change[e] == BID:
                target = int(self.entity[e])
                row = bid_rows.setdefault(
                    target,
                    {"first": int(self.old[e]), "first_at": at, "count": 0, "group": 0},
                )
                row.update(last=int(self.new[e]), last_at=at, reason=reason, scenario=scenario)
                row.update(count=row["count"] + 1, group=int(self.adgroup[e]))
                continue
            key = (int(self.entity_type[e]), int(self.entity[e]), int(self.change[e]))
            other = other_rows.setdefault(key, {"count": 0})
            other.update(count=other["count"] + 1, at=at, reason=reason)
        return History(
            [_net_effect(draws, t, row, exponent) for t, row in bid_rows.items()],
            [_other_change(draws, key, row) for key, row in other_rows.items()],
        )


def run_id(draws: Draws, workflow: int, day: int) -> str:
    """The id of one nightly run of a workflow: the change log's `correlation_id`."""
    return make_id(draws.seed, draws.index, "run", int(workflow), int(day))


def _bid_night(
    seed: int,
    table: TargetTable,
    managed: Managed,
    slot: np.ndarray,
    targets: np.ndarray,
    bids: np.ndarray,
    day: int,
) -> list[dict[str, np.ndarray]]:
    """One night's bid changes; updates `bids` with those that applied and stayed."""
    owner = slot[table.campaign[targets]]
    u_change, u_up, u_size, u_fate = (uniform(seed, _SALT + k, targets, day) for k in range(4))
    old = bids[targets]
    up = u_up < 0.5
    step = 1.05 + 0.25 * u_size
    factor = np.where(up, step, 1 / step)
    new = np.clip(
        np.rint(old * factor).astype(np.int64), managed.min_bid[owner], managed.max_bid[owner]
    )
    # A proposal the limits cut back to the current bid is never sent.
    sent = (managed.since[owner] <= day) & (u_change < SHARE_BID_CHANGE) & (new != old)
    rejected = sent & (u_fate < SHARE_REJECTED)
    capped = sent & up & ~rejected & (u_fate > 1 - SHARE_CAPPED_BACK)
    bids[targets] = np.where(sent & ~rejected & ~capped, new, old)
    size = len(targets)
    events = {
        "campaign": table.campaign[targets],
        "adgroup": table.adgroup[targets],
        "entity": targets,
        "entity_type": np.full(size, TARGET),
        "change": np.full(size, BID),
        "day": np.full(size, day),
        "second": NIGHT + (u_size * 1800).astype(np.int64),
        "old": old,
        "new": new,
        "reason": np.where(up, 0, 2) + (u_fate > 0.5),
        "applied": ~rejected,
        "workflow": managed.workflow[owner],
    }
    # The ceiling takes a capped raise back 45 seconds later: old and new swap.
    takeback = events | {
        "second": events["second"] + 45,
        "old": new,
        "new": old,
        "reason": np.full(size, CEILING),
    }
    return [_select(events, sent), _select(takeback, capped)]


def _select(events: dict[str, np.ndarray], mask: np.ndarray) -> dict[str, np.ndarray]:
    return {name: column[mask] for name, column in events.items()}


def _other_night(
    seed: int,
    table: TargetTable,
    groups: AdGroupTable,
    managed: Managed,
    targets: np.ndarray,
    day: int,
) -> list[dict[str, np.ndarray]]:
    """One night's non-bid changes: at most one per managed campaign."""
    campaign = managed.campaign
    u_happen, u_kind, u_pick, u_value, u_step = (
        uniform(seed, _SALT + 10 + k, campaign, day) for k in range(5)
    )
    change = HARVEST + (u_kind * 5).astype(np.int64)
    owners = groups.campaign
    adgroup = _pick(owners, np.arange(len(owners)), campaign, u_pick)
    target = _pick(table.campaign[targets], targets, campaign, u_pick)
    on_target = change >= BLOCKED
    happen = (managed.since <= day) & (u_happen < SHARE_OTHER_CHANGE) & (~on_target | (target >= 0))
    if not happen.any():
        return []
    placement = 10 * (u_value * 10).astype(np.int64)  # top-of-search adjustment, percent
    raised = placement + 10 * (1 + (u_step * 4).astype(np.int64))
    keyword = (hash_grid(seed, _SALT + 20, campaign, day) >> np.uint64(1)).astype(np.int64)
    cases = [on_target, change == PLACEMENT]
    target_group = table.adgroup[np.maximum(target, 0)]
    columns = {
        "campaign": campaign,
        "adgroup": np.select(cases, [target_group, -1], adgroup),
        "entity": np.select(cases, [target, campaign], adgroup),
        "entity_type": np.select(cases, [TARGET, CAMPAIGN], ADGROUP),
        "change": change,
        "day": np.full(len(campaign), day),
        "second": (NIGHT + 1900 + u_pick * 600).astype(np.int64),
        "old": np.select(cases, [0, placement], NULL),
        "new": np.select(cases, [1, raised], keyword),
        "reason": np.array([_OTHER_REASON[c] for c in change.tolist()], dtype=np.int64),
        "applied": u_happen >= SHARE_OTHER_CHANGE * SHARE_REJECTED,
        "workflow": managed.workflow,
    }
    return [_select(columns, happen)]


def _pick(
    owners: np.ndarray, items: np.ndarray, campaigns: np.ndarray, u: np.ndarray
) -> np.ndarray:
    """One of each campaign's items (`owners`: their campaigns, sorted), or -1 when none."""
    if not len(items):
        return np.full(len(campaigns), -1)
    first = np.searchsorted(owners, campaigns)
    count = np.searchsorted(owners, campaigns, side="right") - first
    position = np.minimum(first + (u * count).astype(np.int64), len(items) - 1)
    return np.where(count > 0, items[position], -1)


@dataclass(frozen=True)
class History:
    """One campaign's history over a window: net effect per target, and other changes."""

    bids: list[dict]
    others: list[dict]


def _net_effect(draws: Draws, target: int, row: dict, exponent: int) -> dict:
    net = row["last"] - row["first"]
    direction = "raised" if net > 0 else "lowered" if net < 0 else "unchanged"
    return {
        "id": draws.id_of("target", target),
        "entity_type": "target",
        "adgroup": draws.id_of("adgroup", row["group"]),
        "first_bid": money(row["first"], exponent),
        "last_bid": money(row["last"], exponent),
        "net_change": money(net, exponent),
        "direction": direction,
        "change_count": row["count"],
        "first_change_at": row["first_at"],
        "last_change_at": row["last_at"],
        "last_reason": row["reason"],
        "last_scenario": row["scenario"],
    }


def _other_change(draws: Draws, key: tuple[int, int, int], row: dict) -> dict:
    entity_type, entity, change = key
    kind = ("campaign", "adgroup", "target")[entity_type]
    return {
        "entity_type": ENTITY_TYPES[entity_type],
        "entity_id": draws.id_of(kind, entity),
        "change_type": CHANGE_TYPES[change],
        "count": row["count"],
        "last_change_at": row["at"],
        "last_reason": row["reason"],
    }
