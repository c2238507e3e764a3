"""Fault injection: deterministic, seeded switches, off by default.

Each request gets a number in arrival order; whether it fails, and how, is a hash of that number
and the plan's seed, so a run's faults are reproducible and no test depends on luck.
"""

from dataclasses import dataclass
from email.utils import formatdate

from sandbox.hashing import scalar, unit

# An HTTP date long past: a Retry-After that asks for no wait at all.
PAST_HTTP_DATE = "Wed, 21 Oct 2015 07:28:00 GMT"
RETRY_AFTER_FORMS = ("seconds", "http-date", "past-date")


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
    rate_502: float = 0.0  # a 502 with an empty body, as a gateway in front of the service sends
    # How Retry-After is written (RFC 9110 10.2.3), one form per 429 drawn from these: "seconds"
    # (retry_after_seconds), "http-date" (now) or "past-date" (PAST_HTTP_DATE).
    retry_after_forms: tuple[str, ...] = ("seconds",)
    # Only requests naming one of these accounts (Service-Account) meet faults: one client
    # account of an agency in trouble while the others answer. Empty: every request.
    accounts: tuple[str, ...] = ()
    # Routes that always fail, each (path prefix, status): a retired or region-limited
    # endpoint (404), one failing past every retry (503). Limited to `accounts` when set.
    broken_routes: tuple[tuple[str, int], ...] = ()

    def broken(self, path: str, account: str | None = None) -> int | None:
        """The status `path` always answers with (naming `account`), or None."""
        if self.accounts and account not in self.accounts:
            return None
        return next(
            (status for prefix, status in self.broken_routes if path.startswith(prefix)), None
        )

    def pick(self, request_number: int, account: str | None = None) -> str | None:
        """The fault for the n-th request (naming `account`), or None."""
        if self.accounts and account not in self.accounts:
            return None
        u = unit(self.seed, "fault", request_number)
        for name, rate in (
            ("429", self.rate_429),
            ("5xx", self.rate_5xx),
            ("slow", self.rate_slow),
            ("drop", self.rate_drop),
            ("truncate", self.rate_truncate),
            ("502", self.rate_502),
        ):
            if u < rate:
                return name
            u -= rate
        return None

    def sends_retry_after(self, request_number: int) -> bool:
        return unit(self.seed, "retry-after", request_number) < self.retry_after_share

    def retry_after(self, request_number: int, now: float) -> str | None:
        """The Retry-After header of the n-th request's 429, or None when it carries none.

        Dates are never in the future (`now` or long past), so a client honouring them waits
        no longer than it would for the seconds form.
        """
        if not self.sends_retry_after(request_number):
            return None
        forms = self.retry_after_forms
        form = forms[scalar(self.seed, "retry-after-form", request_number) % len(forms)]
        if form == "http-date":
            return formatdate(int(now), usegmt=True)
        if form == "past-date":
            return PAST_HTTP_DATE
        return str(self.retry_after_seconds)


NO_FAULTS = FaultPlan()
