"""What the service bills for a read (spec 8), and a run's budget of credits.

Spec 8 prices two of the reads we make: the store change log (`/v1/platform-changes`) costs one
credit per row returned, and metrics with `group_by` cost "in proportion to the groups
returned" (the rate is not shown: we count one credit per group). Every other read's price is
"not shown" and counts as none. Both priced reads are billed by the rows they return, so the
most a request can cost is its `limit` times its rate: the budget grants a request only the
page size it can afford, and refuses one it cannot afford at all, before anything is sent.
"""

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field

from warehouse.spec import CREDITS_PER_GROUP, CREDITS_PER_STORE_CHANGE, STORE_CHANGES_PATH

GROUP_BY = ("group_by", "group_by[]")


def credits_per_row(path: str, params: Mapping[str, object]) -> int:
    """What each row of this read's answer costs; 0 where the spec prices nothing."""
    if path == STORE_CHANGES_PATH:
        return CREDITS_PER_STORE_CHANGE
    if any(params.get(name) for name in GROUP_BY):
        return CREDITS_PER_GROUP
    return 0


class CreditBudgetError(RuntimeError):
    """The run's next priced read could pass `ADWH_MAX_CREDITS`: it was not sent."""


@dataclass
class CreditBudget:
    """The credits a run spent, and the most it may spend (`None`: no cap).

    Requests in flight hold what they could cost until their answer says what they did cost,
    so concurrent pages never overshoot together; a request that fails costs nothing."""

    maximum: int | None = None
    spent: int = 0
    _held: int = 0
    _settled: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    async def grant(self, rate: int, limit: int, request: str) -> int:
        """The page size (at most `limit`) this request may ask for, held until `settle`."""
        while True:
            affordable = limit if self.maximum is None else self._left() // rate
            if affordable > 0:
                granted = min(limit, affordable)
                self._held += granted * rate
                return granted
            if not self._held:
                raise CreditBudgetError(
                    f"the run's credit budget is spent ({self.spent} of "
                    f"ADWH_MAX_CREDITS={self.maximum}): stopped before {request}; what was "
                    "fetched before it is published"
                )
            self._settled.clear()
            await self._settled.wait()  # what is in flight may cost less than it holds

    def settle(self, rate: int, granted: int, rows: int) -> None:
        """Release what a request held and count what its answer costs."""
        self._held -= granted * rate
        self.spent += rows * rate
        self._settled.set()

    def _left(self) -> int:
        assert self.maximum is not None
        return self.maximum - self.spent - self._held
