"""Recent days' attributed figures still moving, as a real service's do: restatements.

A real service revises a day's attributed orders and sales for days after it (its attribution
window): a conversion is credited to the ad click days earlier. The sandbox's figures are a pure
function of (seed, entity, day, reference date), so the same figures come back whenever a day
is fetched; with `Restating(days=N)` the chosen measures of a day less than N days before the
reference date report only part of their final value, the more the younger the day. Two runs on
consecutive reference dates then see the same day differently, and the warehouse's
`restatements` record what moved.

The revision is applied to each entity-day's generated values, before any aggregation, so every
endpoint and its totals (any granularity, `group_by`) agree with each other, as a real service's
would. Off by default: the sandbox's figures of a day are then the same whatever the reference.
"""

import os
from dataclasses import dataclass

import numpy as np

# What a real service's attribution moves: the conversions credited to ads, and their money.
ATTRIBUTED = ("orders", "units", "sales", "new_to_brand_sales", "new_to_brand_purchases")
# A day's share of its final value still missing when it is a day old; it shrinks linearly
# to nothing past the window.
FIRST_DAY_MISSING_PERCENT = 20
# The environment's setting, for the in-process sandbox (`adwh sandbox serve --restate-days`
# sets it for the served one).
RESTATE_DAYS_VARIABLE = "ADWH_SANDBOX_RESTATE_DAYS"


@dataclass(frozen=True)
class Restating:
    """Which measures of recent days are revised between reference dates, and for how long."""

    days: int = 0  # the attribution window; 0: nothing is revised
    measures: tuple[str, ...] = ATTRIBUTED

    def __post_init__(self) -> None:
        if self.days < 0:
            raise ValueError(f"restating days must be 0 or more, not {self.days}")

    def kept_percent(self, age: int) -> int:
        """The percent of its final value a measure reports on a day `age` days before the
        reference date (1: yesterday)."""
        if age > self.days:
            return 100
        return 100 - FIRST_DAY_MISSING_PERCENT * (self.days - age + 1) // self.days

    def revise(
        self, values: dict[str, np.ndarray], day: int, reference: int, null: int
    ) -> dict[str, np.ndarray]:
        """Each chosen measure of one day's entities (integers; `null` where unreported) as
        reported on the reference date: floor(final x percent / 100), exact integers."""
        kept = self.kept_percent(reference - day)
        if kept == 100:
            return values
        revised = dict(values)
        for name in self.measures:
            if name in values:
                column = values[name]
                revised[name] = np.where(column == null, null, column * kept // 100)
        return revised


NO_RESTATING = Restating()


def from_environment() -> Restating:
    """`ADWH_SANDBOX_RESTATE_DAYS` as a Restating; unset or 0: none."""
    value = os.environ.get(RESTATE_DAYS_VARIABLE, "").strip() or "0"
    try:
        return Restating(int(value))
    except ValueError:
        raise ValueError(
            f"{RESTATE_DAYS_VARIABLE} must be a whole number of days, 0 or more, not {value!r}"
        ) from None
