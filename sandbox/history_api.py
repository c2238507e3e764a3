"""A campaign's optimization history (spec 2.7, 4.7): the net effect per target of the
optimizer's applied changes over a window, and its other changes (`optimizer.py`).

- a data row's `id` is the target's; `entity_type` is "target"; `direction` is raised, lowered
  or unchanged only; `last_reason` and `last_scenario` come from `optimizer.REASONS`; rows are
  ordered by last_change_at (`order`), then id; `total_count` is always present;
- `other_changes` is not paged: one row per (entity, change_type), change_type one of
  harvested_keyword and negative_keyword (on ad groups), placement_adjustment (on the campaign),
  target_blocked and target_quarantined (on targets), ordered like the data rows;
- window: no dates, the 90 days ending on the reference date; only end_date, the 90 days ending
  then; only start_date, up to the reference date;
- a campaign without configuration, or whose configuration opts out with no linked workflow,
  has an empty history.
"""

from datetime import date, timedelta

from sandbox.errors import ApiError, bad_param, not_found
from sandbox.params import Query
from sandbox.reference import ordinal
from sandbox.routing import CAMPAIGNS, Context, route
from sandbox.spec import HISTORY_LIMIT, HISTORY_WINDOW_DAYS, OFFSET_MAX


def optimization_history(ctx: Context) -> dict:
    """Net effect per target of the optimizer's applied changes over a window (spec 2.7)."""
    account, q = ctx.account, ctx.query
    campaign = account.locate("campaigns", ctx.params["id"])
    if campaign is None:
        raise not_found("campaign")
    start, end = history_window(q, ctx.host.reference)
    low, high, default = HISTORY_LIMIT
    limit = q.integer("limit", default, low, high)
    offset = q.integer("offset", 0, 0, OFFSET_MAX)
    descending = q.choice("order", ("asc", "desc"), "desc") == "desc"
    exponent = int(account.structure.campaign_table.exponent[campaign])
    history = account.optimizer.history(
        account.draws, campaign, exponent, ordinal(start), ordinal(end)
    )
    rows = sorted(history.bids, key=lambda r: (r["last_change_at"], r["id"]), reverse=descending)
    others = sorted(
        history.others,
        key=lambda r: (r["last_change_at"], r["entity_id"], r["change_type"]),
        reverse=descending,
    )
    directions = [r["direction"] for r in rows]
    return {
        "object": "list",
        "data": rows[offset : offset + limit],
        "has_more": offset + limit < len(rows),
        "total_count": len(rows),
        "other_changes": others,
        "summary": {
            "targets_touched": len(rows),
            "bid_changes": sum(r["change_count"] for r in rows),
            "raised": directions.count("raised"),
            "lowered": directions.count("lowered"),
            "unchanged": directions.count("unchanged"),
            "other_changes": sum(r["count"] for r in others),
            "window": {"start_date": str(start), "end_date": str(end)},
        },
    }


def history_window(query: Query, reference: date) -> tuple[date, date]:
    """The history's window: the last 90 days by default, never longer (400 naming it)."""
    start, end = query.day("start_date", required=False), query.day("end_date", required=False)
    span = timedelta(days=HISTORY_WINDOW_DAYS - 1)
    if end is None:
        end = reference
    if start is None:
        start = end - span
    if start > end:
        raise bad_param("start_date", "start_date must not be after end_date.")
    days = (end - start).days + 1
    if days > HISTORY_WINDOW_DAYS:
        raise ApiError(
            400,
            f"The window of {days} days exceeds the limit of {HISTORY_WINDOW_DAYS} days for "
            "optimization-history.",
            code="window_too_large",
            param="start_date",
        )
    return start, end


ROUTES = (
    route(r"/v1/campaigns/(?P<id>[^/]+)/optimization-history", optimization_history, CAMPAIGNS),
)
