"""The read endpoints of spec 4.9 over an account's automation (`automation.py`): workflows,
their campaigns and performance, tasks, task items, and the stores' change log.

What the spec leaves "not shown" is answered per the service's variant (`variants.py`):
whether the store change log honours `start_date`/`end_date`, whether `optimizing_since` is a
date or a timestamp and `objective_value` a number or a decimal string, and whether a list of
workflow campaigns that is not empty carries `empty_reason: null` or no such field.
"""

from dataclasses import replace
from datetime import date

import numpy as np

from sandbox.automation import empty_reason, workflow_campaign_records
from sandbox.errors import bad_param, not_found
from sandbox.listing import cursor_page, filter_records
from sandbox.metrics import ADVERTISING, metric_rows
from sandbox.reference import ordinal
from sandbox.routing import Context, route
from sandbox.spec import STORE_CHANGES_PATH
from sandbox.windows import PERFORMANCE, metrics_request, offset_page

# Equality filters of each list: query parameter -> record field.
WORKFLOW_FILTERS = {name: name for name in ("description_key", "template", "active")}
TASK_FILTERS = {"status": "status", "priority": "priority"}
STORE_LOG_FILTERS = {"connection": "connection"}
TASK_ITEM_FILTERS = {
    "task": "task",
    "entity": "entity",
    "entity_type": "entityType",
    "status": "status",
}


def workflows(ctx: Context) -> dict:
    """The account's own workflows; filters `description_key`, `template` and `active`."""
    ctx.query.choice("active", ("true", "false"), None)  # a boolean filter: 400 otherwise
    records = filter_records(ctx.account.workflows, ctx.query, (), WORKFLOW_FILTERS)
    return cursor_page(records, ctx.query)


def _position(ctx: Context, attribute: str, what: str) -> int:
    """Where the record the path names is in the account's `attribute` list; 404 naming
    `what` when the account has none of that id."""
    position = ctx.account.locate(attribute, ctx.params["id"])
    if position is None:
        raise not_found(what)
    return position


def _workflow(ctx: Context) -> int:
    return _position(ctx, "workflows", "workflow")


def workflow(ctx: Context) -> dict:
    return ctx.account.workflows[_workflow(ctx)]


def workflow_campaigns(ctx: Context) -> dict:
    """The campaigns a workflow really processes, with `empty_reason` when there are none."""
    number = _workflow(ctx)
    account = ctx.account
    members = account.workflow_members
    records = workflow_campaign_records(
        members[number], account.campaigns, account.structure.configs
    )
    page = cursor_page(records, ctx.query)
    reason = empty_reason(members, number)
    if reason is not None or not ctx.host.variant.omits_empty_reason:
        page["empty_reason"] = reason
    return page


def workflow_performance(ctx: Context) -> dict:
    """Daily (or any granularity) figures of the workflow's campaigns, each row with the
    campaign's objective and `optimizing_since`; the figures are its campaign metrics'."""
    account, q, variant = ctx.account, ctx.query, ctx.host.variant
    number = _workflow(ctx)
    window, limit, offset = metrics_request(q, PERFORMANCE, ctx.host.reference)
    campaigns = account.campaigns

    def fields(i: int) -> dict:
        config = account.optimization_config(i)
        since = config["optimizingSince"]
        value = config["objective"]["value"]
        return {
            "object": "workflow_performance",
            "campaign": campaigns[i]["id"],
            "objective_type": config["objective"]["type"],
            "objective_value": str(value) if variant.objective_as_text else value,
            "optimizing_since": f"{since}T00:00:00Z" if variant.since_as_timestamp else since,
        }

    pop = replace(
        account.population("campaign-metrics"),
        entity_fields=fields,
        measures=ADVERTISING,
    )
    members = np.array(sorted(account.workflow_members[number]), dtype=np.int64)
    sections = metric_rows(ctx.host.seed, pop, window, members, None)
    return offset_page(sections, q, limit, offset)


def tasks(ctx: Context) -> dict:
    records = filter_records(ctx.account.tasks, ctx.query, ("title",), TASK_FILTERS)
    return cursor_page(records, ctx.query)


def task(ctx: Context) -> dict:
    return ctx.account.tasks[_position(ctx, "tasks", "task")]


def task_items(ctx: Context) -> dict:
    searched = ("displayName", "displayId", "problemLabel")
    records = filter_records(ctx.account.task_items, ctx.query, searched, TASK_ITEM_FILTERS)
    return cursor_page(records, ctx.query)


def task_item(ctx: Context) -> dict:
    return ctx.account.task_items[_position(ctx, "task_items", "task item")]


def platform_changes(ctx: Context) -> dict:
    """The stores' change log, newest first; filters `connection`, and `start_date` and
    `end_date` (both included) unless the variant's service ignores them."""
    records = filter_records(ctx.account.platform_changes, ctx.query, (), STORE_LOG_FILTERS)
    start = ctx.query.day("start_date", required=False)
    end = ctx.query.day("end_date", required=False)
    if start is not None and end is not None and start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    if ctx.host.variant.store_log_dated:
        first = ordinal(start) if start else None
        last = ordinal(end) if end else None
        records = [
            r
            for r in records
            if (first is None or _day(r) >= first) and (last is None or _day(r) <= last)
        ]
    return cursor_page(records, ctx.query)


def _day(record: dict) -> int:
    return ordinal(date.fromisoformat(record["changed_at"][:10]))


WORKFLOWS, TASKS, PLATFORM = "workflows:read", "tasks:read", "platform:read"
ROUTES = (  # spec 4.9
    route(r"/v1/workflows", workflows, WORKFLOWS),
    route(r"/v1/workflows/(?P<id>[^/]+)", workflow, WORKFLOWS),
    route(r"/v1/workflows/(?P<id>[^/]+)/campaigns", workflow_campaigns, WORKFLOWS),
    route(r"/v1/workflows/(?P<id>[^/]+)/performance", workflow_performance, WORKFLOWS),
    route(r"/v1/tasks", tasks, TASKS),
    route(r"/v1/tasks/(?P<id>[^/]+)", task, TASKS),
    route(r"/v1/task-items", task_items, TASKS),
    route(r"/v1/task-items/(?P<id>[^/]+)", task_item, TASKS),
    route(STORE_CHANGES_PATH, platform_changes, PLATFORM),
)
