"""Automation (spec 4.9): the account's workflows and the campaigns each processes, and the
tasks with their suggestions, as they are now."""

from warehouse.schemas.columns import Column, Kind, field
from warehouse.schemas.tables import TIMESTAMPS, snapshot
from warehouse.spec import AD_PRODUCTS, TASK_PRIORITIES

# Spec 4.9: workflows, the campaigns each really processes, tasks and their suggestions. Their
# record fields beyond those the spec names are "not shown": what the sandbox sends is read into
# typed columns, and any other field a service sends becomes a column (schema evolution).
WORKFLOW = Column("workflow", Kind.ID, (), required=True)  # from the request's path
WORKFLOWS = snapshot(
    "workflows",
    "workflows",
    "The account's own automation workflows as they are now (global templates are never "
    "listed): what each is (`description_key`), the template it was cloned from, whether it is "
    "active, and its resolved configuration: schedule, node graph and variables with their "
    "effective values and `overridden` flags, kept as JSON.",
    field("id", Kind.ID, required=True),
    field("name", Kind.STRING),
    field("name_key", Kind.STRING),
    field("description_key", Kind.STRING),
    field("template", Kind.ID),
    field("active", Kind.BOOL),
    field("selection", Kind.STRING),
    field("schedule", Kind.JSON),
    field("variables", Kind.JSON),
    field("nodes", Kind.JSON),
    *TIMESTAMPS,
)
WORKFLOW_CAMPAIGNS = snapshot(
    "workflow_campaigns",
    "workflows/{id}/campaigns",
    "The campaigns each workflow really processes, one row per workflow and campaign: `gate` "
    "says why the campaign is in (force-include, auto-selection and the workflow's filter), "
    "`optimization_config` is the campaign's effective optimizer configuration (JSON). A "
    "workflow that processes nothing has no row.",
    WORKFLOW,
    field("id", Kind.ID, required=True, name="campaign"),
    field("name", Kind.STRING),
    field("adProduct", Kind.STRING, enum=AD_PRODUCTS),
    field("state", Kind.STRING),
    field("gate", Kind.JSON),
    field("optimizationConfig", Kind.JSON),
    key=("account_id", "workflow", "campaign"),
)
TASKS = snapshot(
    "tasks",
    "tasks",
    "Tasks as they are now: a title, a priority, an expiry, a status (pending, resolved or "
    "discarded; a status after apply is not named by the spec and is kept as sent) and up to "
    "50 suggestions (task_items).",
    field("id", Kind.ID, required=True),
    field("title", Kind.STRING),
    field("description", Kind.STRING),
    field("priority", Kind.STRING, enum=TASK_PRIORITIES),
    field("status", Kind.STRING),
    field("expiresAt", Kind.TIMESTAMP),
    field("itemCount", Kind.COUNT),
    field("resolvedAt", Kind.TIMESTAMP),
    *TIMESTAMPS,
)
TASK_ITEMS = snapshot(
    "task_items",
    "task-items",
    "Suggestions of tasks, one row each: the entity it points at (`entity_type` products, "
    "campaigns, adgroups, targets, search_terms or product_ads), its status (pending, approved, "
    "rejected), the value the reviewer gave (`applied_value`) and, once applied, `applied_at` "
    "or `apply_error`. Campaign suggestions carry `field_path` (dailyBudget, state or name); the "
    "values are JSON, as their type depends on the field.",
    field("id", Kind.ID, required=True),
    field("task", Kind.ID),
    field("entityType", Kind.STRING),
    field("entity", Kind.ID),
    field("displayName", Kind.STRING),
    field("displayId", Kind.STRING),
    field("problemLabel", Kind.STRING),
    field("fieldPath", Kind.STRING),
    field("currentValue", Kind.JSON),
    field("suggestedValue", Kind.JSON),
    field("appliedValue", Kind.JSON),
    field("status", Kind.STRING),
    field("appliedAt", Kind.TIMESTAMP),
    field("applyError", Kind.STRING),
    *TIMESTAMPS,
)
