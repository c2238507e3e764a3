"""The advertising change log (spec 4.8, /v1/advertising-changes): every change sent to the
marketplace (`changes.py`), newest first, filtered and paged by cursor.

- row: object "advertising_change", id, changed_at, entity_type (campaign, adgroup, target,
  product_ad), entity_id, campaign, adgroup (null for campaign changes), connection, country,
  field (state, dailyBudget, name, defaultBid, bid, keyword, negativeKeyword,
  placementTopOfSearch), old_value and new_value (strings: a state, a decimal amount, a name, a
  keyword, a percent; null when there is none), source, actor, result, error (null when
  applied), correlation_id (the nightly run's id on workflow rows, else null);
- actor: `front`, the person's e-mail; `public-api`, `api_key:<prefix>`; `mcp`,
  `oauth_token:<prefix>`; `system`, `system:<process>`; `workflow`, `workflow:<definition id>`;
- newest first; unknown ids or field names match nothing; `entity_type`, `source` and `result`
  must be known values (400 otherwise).
"""

import numpy as np

from sandbox.assembly import Account
from sandbox.changes import FIELDS, SOURCES, ChangeLog
from sandbox.errors import bad_param
from sandbox.expand import expand_page
from sandbox.listing import position_page
from sandbox.optimizer import ENTITY_TYPES
from sandbox.params import Query
from sandbox.reference import ordinal
from sandbox.routing import CAMPAIGNS, Context, route


def advertising_changes(ctx: Context) -> dict:
    """The change log (spec 4.8), newest first, filtered and paged by cursor."""
    account = ctx.account
    log = account.change_log
    positions = np.flatnonzero(change_mask(log, account, ctx.query))
    chosen, has_more, total = position_page(positions, ctx.query, log.position_of)
    page = {
        "object": "list",
        "data": [log.row(int(k)) for k in chosen],
        "has_more": has_more,
    }
    if ctx.query.flag("include_total"):
        page["total_count"] = total
    return expand_page(account, ctx.query, page)  # spec 2.1, 4.1


def change_mask(log: ChangeLog, account: Account, query: Query) -> np.ndarray:
    """Rows kept by the change log's filters; unknown ids and values keep nothing."""
    mask = np.ones(len(log), dtype=bool)
    for name, attribute, column in (
        ("campaign", "campaigns", log.campaign),
        ("adgroup", "adgroups", log.adgroup),
    ):
        wanted = query.all(name)
        if wanted:
            mask &= np.isin(column, _positions(account, attribute, wanted))
    entities = query.all("entity")
    if entities:
        found = np.zeros(len(log), dtype=bool)
        kinds = ("campaigns", "adgroups", "targets", "product_ads")
        for entity_type, attribute in enumerate(kinds):
            positions = _positions(account, attribute, entities)
            found |= (log.entity_type == entity_type) & np.isin(log.entity, positions)
        mask &= found
    for name, values, column in (
        ("entity_type", ENTITY_TYPES, log.entity_type),
        ("source", SOURCES, log.source),
    ):
        value = query.choice(name, values, None)
        if value is not None:
            mask &= column == values.index(value)
    result = query.choice("result", ("applied", "failed"), None)
    if result is not None:
        mask &= log.applied == (result == "applied")
    field_name = query.get("field")
    if field_name is not None:
        mask &= log.field == (FIELDS.index(field_name) if field_name in FIELDS else -1)
    correlation = query.get("correlation_id")
    if correlation is not None:
        workflow, day = log.runs().get(correlation, (-2, -2))
        mask &= (log.workflow == workflow) & (log.time // 86_400 == day)
    start, end = query.day("start_date", required=False), query.day("end_date", required=False)
    if start is not None and end is not None and start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    day = log.time // 86_400
    if start is not None:
        mask &= day >= ordinal(start)
    if end is not None:
        mask &= day <= ordinal(end)
    return mask


def _positions(account: Account, attribute: str, ids: list[str]) -> list[int]:
    """Positions of the ids that name records of the account (others are dropped)."""
    found = (account.locate(attribute, i) for i in ids)
    return [p for p in found if p is not None]


ROUTES = (route(r"/v1/advertising-changes", advertising_changes, CAMPAIGNS),)
