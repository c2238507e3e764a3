"""An account's automation (spec 2.11, 4.9): workflows, the campaigns each really processes,
tasks with their suggestions, and the connected stores' change log.

Workflows 0-2 are the optimizer's (`optimizer.py`): campaign membership is `managed_campaigns`,
so a workflow's campaigns and its performance agree with the optimization history and the
change log. Workflow 3 acts on the catalog, not on campaigns. Tasks and store changes are drawn
from hashes of (seed, account, kind, index), like every other record.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np

from sandbox.changes import Edits
from sandbox.hashing import Draws, make_id, scalar
from sandbox.optimizer import Managed
from sandbox.reference import timestamp
from sandbox.spec import (
    CAMPAIGN_FIELD_PATHS,
    STORE_CHANGES_RETENTION_DAYS,
    TASK_ITEM_STATUSES,
    TASK_PRIORITIES,
)


@dataclass(frozen=True)
class WorkflowKind:
    name: str
    name_key: str
    description_key: str
    selection: str  # "auto": picks campaigns itself; "manual": only those linked to it
    acts_on_campaigns: bool = True


WORKFLOW_KINDS = (  # index = the optimizer's workflow number; 0 selects campaigns itself
    WorkflowKind("Bid optimizer", "workflows.bid_optimizer", "bid_optimization", "auto"),
    WorkflowKind("Budget pacing", "workflows.budget_pacing", "budget_pacing", "manual"),
    WorkflowKind("Keyword harvesting", "workflows.harvesting", "keyword_harvesting", "manual"),
    WorkflowKind(
        "Catalog health report", "workflows.catalog_report", "catalog_report", "manual", False
    ),
)
PROBLEMS = {
    "campaigns": ("Budget runs out before noon", "ACOS far above target", "No sales in 14 days"),
    "adgroups": ("Default bid below the market", "No impressions in 7 days"),
    "targets": ("Spend without orders", "Bid above the ceiling"),
    "products": ("Missing A+ content", "Suppressed listing", "Low stock"),
    "product_ads": ("Ad on an out-of-stock product",),
    "search_terms": ("Converting term not targeted", "Irrelevant term spending"),
}
# How a task's suggestions were decided, by the task's status: a resolved task's were mostly
# approved (and applied), a discarded one's left pending (frozen) or rejected.
ITEM_STATUS_BY_TASK = {
    "resolved": ("approved", "approved", "rejected"),
    "discarded": ("pending", "pending", "rejected"),
}
STORE_FIELDS = {
    "product": ("title", "price", "status"),
    "variant": ("price", "sku"),
    "inventory": ("available",),
    "page": ("body_html", "title"),
}
EDITORS = ("maria.lopez", "j.chen", "ops-team")
# Tasks are created in the 60 days before the anchor (the first day of the reference date's
# quarter), resolved two days later, and expire half a year after creation: every reference
# date of the quarter sees the same tasks, none resolved in its future, none pending past its
# expiry. Statuses do not follow "now".
TASK_AGES = range(3, 63)
TASK_LIFETIME = timedelta(days=180)
RESOLVED_AFTER = timedelta(days=2)


def template_id(kind: int) -> str:
    """A global template: the same for every account, never listed itself."""
    return make_id("workflow-template", kind)


def workflow_records(draws: Draws, name: str, anchor: date) -> list[dict]:
    """The account's workflows (`name`: the account's), one per kind."""
    created = anchor - timedelta(days=200)
    records = []
    for w, kind in enumerate(WORKFLOW_KINDS):
        overridden = w % 2 == 1
        records.append(
            {
                "object": "workflow",
                "id": draws.id_of("workflow", w),
                "name": f"{kind.name} ({name})",
                "name_key": kind.name_key,
                "description_key": kind.description_key,
                "template": template_id(w),
                "active": kind.acts_on_campaigns,
                "selection": kind.selection,
                "schedule": {"cron": "0 3 * * *", "timezone": "UTC"},
                "variables": [
                    {
                        "name": "max_bid_change_pct",
                        "value": 30 if overridden else 20,
                        "overridden": overridden,
                    },
                    {"name": "lookback_days", "value": 14, "overridden": False},
                ],
                "nodes": [
                    {"id": "trigger", "type": "schedule", "next": ["select"]},
                    {"id": "select", "type": "campaign_filter", "next": ["act"]},
                    {"id": "act", "type": kind.description_key, "next": []},
                ],
                "createdAt": timestamp(created, 3600 * w),
                "updatedAt": timestamp(anchor - timedelta(days=1 + w), 60 * w),
            }
        )
    return records


def workflow_members(managed: Managed) -> dict[int, list[int]]:
    """Campaign positions each workflow processes: the optimizer's own assignment."""
    members: dict[int, list[int]] = {w: [] for w in range(len(WORKFLOW_KINDS))}
    for campaign, workflow in zip(
        managed.campaign.tolist(), managed.workflow.tolist(), strict=True
    ):
        members[workflow].append(campaign)
    return members


def empty_reason(members: dict[int, list[int]], workflow: int) -> str | None:
    """Why a workflow processes no campaign (spec 4.9), or None when it processes some."""
    if members[workflow]:
        return None
    kind = WORKFLOW_KINDS[workflow]
    if not kind.acts_on_campaigns:
        return "no-itera-campanas"
    return "filtro-vacio" if kind.selection == "auto" else "manual-sin-enlaces"


def workflow_campaign_records(
    members: list[int], campaigns: list[dict], configs: list[dict | None]
) -> list[dict]:
    """The campaigns (`members`, positions) a workflow processes, as of the reference date,
    with their optimizer configuration (`configs`, per campaign)."""
    records = []
    for c in members:
        campaign = campaigns[c]
        config = configs[c]
        linked = bool(config["linkedWorkflowDefinitionIds"])
        records.append(
            {
                "object": "workflow_campaign",
                "id": campaign["id"],
                "name": campaign["name"],
                "adProduct": campaign["adProduct"],
                "state": campaign["state"],
                "gate": {
                    "reason": "force_include" if linked else "auto_selection",
                    "force_include": linked,
                    "force_exclude": False,
                    "opted_out": config["workflowsOptOut"],
                    "passes_filter": True,
                },
                "optimizationConfig": config,
            }
        )
    return records


# ---------------------------------------------------------------------- tasks
@dataclass(frozen=True)
class Entity:
    type: str  # the task-item entity type (spec 4.9's filter value)
    id: str
    name: str
    display_id: str


# Per task-item entity type: the fields shown as name and display id. Its records are the base
# campaigns and ad groups, read as they were when the task was created (`Revisions.as_of`), and
# the targets, product ads, search terms and products as they are.
ENTITY_FIELDS = {
    "campaigns": ("name", "campaignId"),
    "adgroups": ("name", "adGroupId"),
    "targets": ("expression", "targetId"),
    "product_ads": ("asin", "adId"),
    "search_terms": ("searchTerm", "searchTerm"),
    "products": ("title", "asin"),
}


@dataclass(frozen=True)
class Revisions:
    """Campaigns' and ad groups' applied changes (`edits`), and the currency digits of each
    campaign (`exponent`) and ad group's campaign (`adgroup_campaign`)."""

    edits: Edits
    exponent: np.ndarray
    adgroup_campaign: np.ndarray

    def as_of(self, kind: str, position: int, record: dict, moment: str) -> dict:
        """A campaign or ad group as it was at `moment` (the changes logged before it applied),
        so a task shows what its author saw, whatever the reference date; other kinds as they
        are."""
        if kind == "campaigns":
            exponent = int(self.exponent[position])
            return self.edits.campaign(position, record, exponent, before=moment)
        if kind == "adgroups":
            exponent = int(self.exponent[self.adgroup_campaign[position]])
            return self.edits.adgroup(position, record, exponent, before=moment)
        return record


def _entity(
    entities: Mapping[str, list[dict]], revisions: Revisions, kind: str, pick: int, moment: str
) -> tuple[Entity, dict]:
    """The entity a suggestion points at, and its record as of the task's creation."""
    name, display_id = ENTITY_FIELDS[kind]
    records = entities[kind]
    position = pick % len(records)
    record = revisions.as_of(kind, position, records[position], moment)
    return Entity(kind, record["id"], record[name], record[display_id]), record


def _campaign_change(campaign: dict, field_path: str, bits: int) -> tuple:
    """(current, suggested, reviewer's) values of a suggestion on a campaign (as of the task)."""
    if field_path == "dailyBudget":
        budget = campaign["budget"]["amount"]
        return budget, round(budget * 1.2), (round(budget * 1.1) if bits % 3 == 0 else None)
    if field_path == "state":
        return campaign["state"], "PAUSED" if campaign["state"] == "ENABLED" else "ENABLED", None
    return campaign["name"], f"{campaign['name']} - focus", None


def task_records(
    draws: Draws, anchor: date, entities: Mapping[str, list[dict]], revisions: Revisions
) -> tuple[list[dict], list[dict]]:
    """(tasks, task items): a task per four campaigns, with 1 to 12 suggestions each.
    `entities`: the records of each task-item entity type (`ENTITY_FIELDS`), base records for
    campaigns and ad groups."""
    tasks, items = [], []
    kinds = ("campaigns", "campaigns", "campaigns", *PROBLEMS)
    for t in range(4 + len(entities["campaigns"]) // 4):
        u = draws.unit("task", t)
        status = "pending" if u < 0.55 else "resolved" if u < 0.9 else "discarded"
        age = TASK_AGES[scalar(draws.index, "age", t) % len(TASK_AGES)]
        created_day = anchor - timedelta(days=age)
        created = timestamp(created_day, 7 * 3600 + t)
        resolved = (
            None if status == "pending" else timestamp(created_day + RESOLVED_AFTER, 9 * 3600)
        )
        task_id = draws.id_of("task", t)
        count = 1 + scalar(draws.seed, draws.index, "task-items", t) % 12
        for j in range(count):
            bits = scalar(draws.seed, draws.index, "task-item", t, j)
            kind = kinds[bits % len(kinds)]
            entity, record = _entity(entities, revisions, kind, bits >> 8, created)
            field_path = (
                CAMPAIGN_FIELD_PATHS[(bits >> 4) % 3] if entity.type == "campaigns" else None
            )
            current, suggested, reviewed = (
                _campaign_change(record, field_path, bits) if field_path else (None, None, None)
            )
            item_status = ITEM_STATUS_BY_TASK.get(status, TASK_ITEM_STATUSES)[(bits >> 12) % 3]
            applied = status == "resolved" and item_status == "approved" and field_path
            failed = applied and (bits >> 16) % 6 == 0
            problems = PROBLEMS[entity.type]
            items.append(
                {
                    "object": "task_item",
                    "id": draws.id_of("task_item", t * 50 + j),
                    "task": task_id,
                    "entityType": entity.type,
                    "entity": entity.id,
                    "displayName": entity.name,
                    "displayId": entity.display_id,
                    "problemLabel": problems[(bits >> 20) % len(problems)],
                    "fieldPath": field_path,
                    "currentValue": current,
                    "suggestedValue": suggested,
                    "appliedValue": reviewed if item_status == "approved" else None,
                    "status": item_status,
                    "appliedAt": resolved if applied and not failed else None,
                    "applyError": "The marketplace rejected the change: budget below the "
                    "country minimum"
                    if failed
                    else None,
                    "createdAt": created,
                    "updatedAt": resolved or created,
                }
            )
        tasks.append(
            {
                "object": "task",
                "id": task_id,
                "title": f"Review {count} suggestion{'s' * (count > 1)} ({t})",
                "description": "Suggestions from the nightly analysis.",
                "priority": TASK_PRIORITIES[scalar(draws.index, "priority", t) % 3],
                "status": status,
                "expiresAt": timestamp(created_day + TASK_LIFETIME, 7 * 3600),
                "itemCount": count,
                "resolvedAt": resolved,
                "createdAt": created,
                "updatedAt": resolved or created,
            }
        )
    return tasks, items


# ---------------------------------------------------------------------- stores
def store_changes(draws: Draws, name: str, reference: date, connections: list[dict]) -> list[dict]:
    """The stores' change log over its 12 months, newest first: 0 to 3 changes a day per active
    store, by an editor (an e-mail address at the account's `name`), an API key or an
    assistant."""
    stores = [c for c in connections if c["type"] in ("store_a", "store_b") and c["active"]]
    rows = []
    for store in stores:
        for back in range(STORE_CHANGES_RETENTION_DAYS):
            day: date = reference - timedelta(days=back)
            for n in range(scalar(draws.seed, draws.index, "store-day", day.toordinal()) % 4):
                bits = scalar(draws.seed, store["id"], "store-change", day.toordinal(), n)
                resource = tuple(STORE_FIELDS)[bits % len(STORE_FIELDS)]
                fields = STORE_FIELDS[resource]
                action = ("update", "update", "update", "create", "delete")[(bits >> 4) % 5]
                field_name = fields[(bits >> 8) % len(fields)] if action == "update" else None
                who = (bits >> 12) % 5
                actor, source = (
                    (f"{EDITORS[who]}@{name.split()[0].lower()}.example", "front")
                    if who < 3
                    else ("api_key:ak_" + format(bits >> 20, "x")[:6], "public-api")
                    if who == 3
                    else ("oauth_token:ot_" + format(bits >> 24, "x")[:6], "mcp")
                )
                old, new = {
                    "price": (f"{10 + (bits >> 28) % 90}.99", f"{10 + (bits >> 36) % 90}.99"),
                    "status": (None, "active"),
                }.get(field_name, (None, None))
                rows.append(
                    {
                        "object": "platform_change",
                        "id": make_id(
                            draws.seed,
                            draws.index,
                            "store-change",
                            store["id"],
                            day.toordinal(),
                            n,
                        ),
                        "changed_at": timestamp(day, 8 * 3600 + (bits >> 40) % 36_000),
                        "connection": store["id"],
                        "platform": store["type"],
                        "resource_type": resource,
                        "resource_id": f"{resource}_{(bits >> 44) % 100_000}",
                        "action": action,
                        "field": field_name,
                        "old_value": old,
                        "new_value": new,
                        "source": source,
                        "actor": actor,
                    }
                )
    rows.sort(key=lambda r: (r["changed_at"], r["id"]), reverse=True)
    return rows
