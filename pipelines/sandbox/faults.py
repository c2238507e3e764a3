"""Fault injection: deterministic, seeded switches, off by default.

Each request gets a number in arrival order; whether it fails, and how, is a hash of that number
and the plan's seed, so a run's faults are reproducible and no test depends on luck.
"""

from dataclasses import dataclass

from pipelines.sandbox.hashing import unit


class ConnectionDropped(Exception):  # noqa: N818 - it names the event, not an error of ours
    """Raised inside the app to make the transport drop the connection mid-answer."""


@dataclass(frozen=True)
class FaultPlan:
    """Shares of requests (0..1) that meet each fault."""

    rate_429: float = 0.0
    retry_after_share: float = 0.5  # of the 429s, how many carry Retry-After
    retry_after_seconds: float = 0.01
    rate_5xx: float = 0.0
    rate_slow: float = 0.0
    slow_seconds: float = 2.0
    rate_drop: float = 0.0
    rate_truncate: float = 0.0
    seed: int = 7

    def pick(self, request_number: int) -> str | None:
        """The fault for the n-th request, or None."""
        u = unit(self.seed, "fault", request_number)
        for name, rate in (
            ("429", self.rate_429),
            ("5xx", self.rate_5xx),
            ("slow", self.rate_slow),
            ("drop", self.rate_drop),
            ("truncate", self.rate_truncate),
        ):
            if u < rate:
                return name
            u -= rate
        return None

    def sends_retry_after(self, request_number: int) -> bool:
        return unit(self.seed, "retry-after", request_number) < self.retry_after_share


NO_FAULTS = FaultPlan()
