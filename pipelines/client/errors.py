"""Errors of the service, each naming the request (method, path, query) and never the key."""

import re
from urllib.parse import urlencode


class ServiceError(Exception):
    """The service refused a request, or could not be reached after bounded retries."""

    def __init__(
        self,
        request: str,
        status: int | None,
        message: str,
        *,
        code: str | None = None,
        param: str | None = None,
    ) -> None:
        self.request = request
        self.status = status
        self.code = code
        self.param = param
        self.reason = message
        super().__init__(f"{request}: {status or 'no answer'} {message}".strip())


class AuthenticationError(ServiceError):
    """401: the key is invalid or revoked."""


class CreditsExhaustedError(ServiceError):
    """402: the account has no credits left for this read."""


class ForbiddenError(ServiceError):
    """403: a missing scope, a plan that forbids it, or an account the key cannot reach."""


class NotFoundError(ServiceError):
    """404: the entity is absent or belongs to another account."""


class BadRequestError(ServiceError):
    """400: the request is invalid; `param` names the parameter when the service says."""

    def window_limit(self, requested_days: int) -> int | None:
        """The window limit (days) a 'window too large' answer names, if it names one smaller
        than the window asked for.

        Spec 8 says the 400 names the exact limit but not in which words ("max 14 days", "the
        maximum for this resource is 14.", "at most 14 days after start_date"), so every
        number of the message counts except those inside a date; when several are smaller
        than the request, the smallest is safe: a narrower window is only more requests."""
        text = _DATE.sub(" ", self.reason)
        numbers = [int(n) for n in re.findall(r"(?<![\d.])\d+(?![\d.]*\d)", text)]
        smaller = [n for n in numbers if 0 < n < requested_days]
        return min(smaller) if smaller else None


_DATE = re.compile(r"\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?")


class TransientError(ServiceError):
    """Worth retrying: 429, 5xx, timeouts, dropped connections, truncated or invalid JSON."""

    def __init__(self, *args, retry_after: float | None = None, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.retry_after = retry_after

    def gave_up(self, attempts: int) -> "TransientError":
        """The same fault, saying that retrying it `attempts` times did not help."""
        return TransientError(
            self.request,
            self.status,
            f"{self.reason} (gave up after {attempts} attempts)",
            code=self.code,
            param=self.param,
        )


class UnreachableError(ServiceError):
    """Nothing answered the run's first request: a wrong `ADS_API_BASE_URL`, or the service
    (or the network to it) is down. Named by the base URL, since every request would fail."""

    def __init__(self, base_url: str, error: ServiceError) -> None:
        super().__init__(error.request, None, error.reason)
        self.base_url = base_url
        self.args = (f"cannot reach the service at {base_url} ({error})",)


class PaginationError(ServiceError):
    """The service's paging misbehaved (a cursor that does not advance, an endless list)."""


class ReadOnlyViolationError(RuntimeError):
    """Something asked the client for a method other than GET."""


BY_STATUS: dict[int, type[ServiceError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    402: CreditsExhaustedError,
    403: ForbiddenError,
    404: NotFoundError,
}


def describe(method: str, path: str, params: dict | None) -> str:
    """'GET /v1/x?a=1' — what every error names."""
    query = urlencode(params or {}, doseq=True)
    return f"{method} {path}{'?' + query if query else ''}"
