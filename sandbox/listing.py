"""Cursor lists (spec 4.1): equality filters, `search`, and pages by `starting_after`."""

from collections.abc import Callable, Mapping

import numpy as np

from sandbox.errors import bad_param
from sandbox.params import Query
from sandbox.spec import CURSOR_LIMIT

COUNT_GIVES_UP_ABOVE = 20_000
_SHARED = (
    "connection",
    "country",
    "brand",
    "asin",
    "state",
    "type",
    "campaign",
    "adGroup",
    "adProduct",
    "product",
    "target",
    "targetType",
)
SHARED_FILTERS = {name: name for name in _SHARED}  # query parameter -> record field


def search_text(query: Query) -> str | None:
    search = query.get("search")
    if search is not None and not 1 <= len(search) <= 200:
        raise bad_param("search", "search must be 1 to 200 characters.")
    return None if search is None else search.lower()


def filter_records(
    records: list[dict],
    query: Query,
    search: tuple[str, ...] = ("name", "title"),
    filters: Mapping[str, str] = SHARED_FILTERS,
) -> list[dict]:
    """Apply the equality filters (query parameter -> record field) and `search` (over the
    given fields) of a cursor list."""
    out = records
    for param, name in filters.items():
        wanted = query.all(param)
        if wanted:
            out = [r for r in out if _as_parameter(r.get(name)) in wanted]
    needle = search_text(query) if search else None  # a list without `search` ignores it
    if needle is not None:
        out = [r for r in out if any(needle in str(r.get(f) or "").lower() for f in search)]
    return out


def _as_parameter(value: object) -> object:
    """A record's value as a query parameter writes it: booleans as `true` or `false`."""
    return ("true" if value else "false") if isinstance(value, bool) else value


def _limit(query: Query) -> int:
    low, high, default = CURSOR_LIMIT
    return query.integer("limit", default, low, high)


def _total(count: int) -> int | None:
    """`total_count`: the count, or null when counting would not finish in time."""
    return count if count <= COUNT_GIVES_UP_ABOVE else None


def cursor_page(records: list[dict], query: Query) -> dict:
    """One page of a cursor list: limit, starting_after, ending_before, include_total."""
    position = {r["id"]: i for i, r in enumerate(records)}

    def after(cursor: str) -> int | None:
        return None if cursor not in position else position[cursor] + 1

    first, last, has_more = cursor_bounds(len(records), query, after, position.get)
    page: dict = {"object": "list", "data": records[first:last], "has_more": has_more}
    if query.flag("include_total"):
        page["total_count"] = _total(len(records))
    return page


Locate = Callable[[str], int | None]


def cursor_bounds(count: int, query: Query, after: Locate, before: Locate) -> tuple[int, int, bool]:
    """[first, last) of the page within `count` records, and whether more lie beyond it.

    `after(id)` is where the records after a cursor start, `before(id)` where those before it
    end; both give None for an id that is not a cursor of this list (a 400).
    """
    limit = _limit(query)
    cursors = {"starting_after": after, "ending_before": before}
    given = {name: query.get(name) for name in cursors if query.get(name) is not None}
    if len(given) == 2:
        raise bad_param("ending_before", "starting_after and ending_before are exclusive.")
    for name, cursor in given.items():
        place = cursors[name](cursor)
        if place is None:
            raise bad_param(name, f"No such object: {cursor}.")
        if name == "starting_after":
            return place, min(place + limit, count), place + limit < count
        return max(0, place - limit), place, place - limit > 0
    return 0, min(limit, count), limit < count


def position_page(
    positions: np.ndarray, query: Query, decode: Locate
) -> tuple[np.ndarray, bool, int | None]:
    """A cursor page over rows kept as sorted positions (the change log): its positions,
    has_more and total_count (None when not requested or not countable)."""

    def place(side: str) -> Locate:
        def locate(cursor: str) -> int | None:
            row = decode(cursor)
            return None if row is None else int(np.searchsorted(positions, row, side=side))

        return locate

    first, last, has_more = cursor_bounds(len(positions), query, place("right"), place("left"))
    total = _total(len(positions)) if query.flag("include_total") else None
    return positions[first:last], has_more, total
