"""The HTTP session: bearer auth, GET only, bounded concurrency, retries, and error mapping."""

import asyncio
import logging
import random
import ssl
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

import httpx
import orjson
from pydantic import SecretStr
from tenacity import (
    AsyncRetrying,
    RetryCallState,
    RetryError,
    retry_if_exception_type,
    stop_after_attempt,
    stop_before_delay,
)

from pipelines.client.credits import CreditBudget, credits_per_row
from pipelines.client.errors import (
    BY_STATUS,
    ReadOnlyViolationError,
    ServiceError,
    TransientError,
    UnreachableError,
    describe,
)
from pipelines.client.fetch import UNANSWERED, http_client, said
from pipelines.client.limiter import AdaptiveLimiter
from pipelines.client.stats import RunStats, current_stats
from warehouse.spec import METRICS_LIMIT

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try before a transient fault becomes an error.

    Sleeps are "full jitter" exponential (uniform in 0..base*2^n, capped at `backoff_max`), so
    a burst of failures does not come back in lockstep; a `Retry-After` is honoured up to
    `backoff_max`. `total_seconds` bounds the whole request, sleeps included.
    """

    attempts: int = 8
    total_seconds: float = 300.0
    backoff_base: float = 0.25
    backoff_max: float = 30.0

    def backoff(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to sleep after failed attempt number `attempt` (1-based)."""
        if retry_after is not None:
            return min(retry_after, self.backoff_max)
        return random.uniform(0, min(self.backoff_max, self.backoff_base * 2 ** (attempt - 1)))


DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
# How long a run's first request may go unanswered (no connection, or no answer) before the
# run fails naming the base URL: a service down or a wrong address would fail every request.
FIRST_CONTACT_SECONDS = 10.0


def attempt_deadline(timeout: httpx.Timeout) -> float:
    """Seconds one attempt may take end to end: connecting plus reading the whole answer.

    The libraries apply their read timeout per socket read, and only on the network (not to
    the in-process sandbox), so a trickling or stalled answer could otherwise hold a run
    forever.
    """
    parts = [t for t in (timeout.connect, timeout.read) if t is not None]
    return sum(parts) if parts else DEFAULT_TIMEOUT.read + DEFAULT_TIMEOUT.connect


@dataclass(frozen=True)
class Response:
    """A decoded answer, and its bytes exactly as they came: JSON numbers lose digits once
    decoded to floats, so money sent as a number is re-read from `content`."""

    body: dict
    content: bytes
    # The query as sent, where the client changed it (a priced page's affordable `limit`).
    params: dict | None = None

    @property
    def nbytes(self) -> int:
        return len(self.content)


class ServiceClient:
    """Asynchronous, read-only client of the service.

    One connection pool, timeouts on connect and read, a bounded (adaptive) number of requests
    in flight, and retries with backoff for what is transient. The key lives in a `SecretStr`
    and only ever in the Authorization header.
    """

    def __init__(
        self,
        base_url: str,
        api_key: SecretStr,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
        max_in_flight: int = 8,
        timeout: httpx.Timeout | None = None,
        retry: RetryPolicy | None = None,
        verify_tls: bool = True,
        budget: CreditBudget | None = None,
    ) -> None:
        self._key = api_key
        timeout = timeout or DEFAULT_TIMEOUT
        self._base_url = base_url.rstrip("/")
        self._http = http_client(
            self._base_url,
            transport,
            max_in_flight=max_in_flight,
            timeout=timeout,
            verify=verify_tls,
        )
        self.deadline = attempt_deadline(timeout)
        self.limiter = AdaptiveLimiter(max_in_flight)
        self.retry = retry or RetryPolicy()
        self._own_stats = RunStats()
        self.budget = budget or CreditBudget()

    @property
    def stats(self) -> RunStats:
        """The counters of the source this task extracts (see `counting`), else the client's."""
        return current_stats() or self._own_stats

    def __repr__(self) -> str:
        return f"ServiceClient(base_url={self.base_url!r})"

    async def __aenter__(self) -> "ServiceClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._http.aclose()

    async def request(self, method: str, path: str, **kwargs: object) -> Response:
        """The one door to the network, and it only opens for GET."""
        if method.upper() != "GET":
            raise ReadOnlyViolationError(f"the warehouse only reads; refused {method} {path}")
        return await self.get(path, **kwargs)

    @property
    def base_url(self) -> str:
        return self._base_url

    async def first_contact(self, path: str, within: float = FIRST_CONTACT_SECONDS) -> Response:
        """GET `path` as a run's first request: a service that does not answer (nothing
        listens, the connection is never made, or nothing comes back on it) fails the run
        within `within` seconds, every attempt and wait included, naming the base URL, instead
        of after a whole retry policy's backoff (minutes) or one attempt's read timeout (a
        minute) with only the path; any other error is as `get`'s."""
        policy = replace(self.retry, total_seconds=min(self.retry.total_seconds, within))
        try:
            async with asyncio.timeout(within):
                return await self._get(path, None, None, policy)
        except TimeoutError:
            unanswered = TransientError(describe("GET", path, None), None, f"within {within:g} s")
            raise UnreachableError(self.base_url, unanswered) from None
        except TransientError as error:
            if error.status is None:
                raise UnreachableError(self.base_url, error) from None
            raise

    async def get(
        self, path: str, params: dict | None = None, account: str | None = None
    ) -> Response:
        """GET a JSON document; a read the spec prices asks for the page its budget affords,
        and is counted by what its answer returns."""
        rate = credits_per_row(path, params or {})
        if not rate:
            return await self._get(path, params, account)
        query = dict(params or {})
        wanted = int(query.get("limit", METRICS_LIMIT[1]))  # unsaid: the largest any list allows
        query["limit"] = await self.budget.grant(rate, wanted, describe("GET", path, query))
        rows = 0
        try:
            response = await self._get(path, query, account)
            data = response.body.get("data")
            rows = len(data) if isinstance(data, list) else 0
        finally:
            self.budget.settle(rate, query["limit"], rows)
        self.stats.credits += rows * rate
        return Response(response.body, response.content, query)

    async def _get(
        self,
        path: str,
        params: dict | None,
        account: str | None,
        policy: RetryPolicy | None = None,
    ) -> Response:
        """GET a JSON document, retrying transient faults (by `policy`, else the client's);
        raise a ServiceError otherwise.

        After the last attempt the error says how many were made, so a user reading the one
        line knows the failure was persistent and not a single hiccup."""
        policy = policy or self.retry
        retrying = AsyncRetrying(
            retry=retry_if_exception_type(TransientError),
            stop=stop_after_attempt(policy.attempts) | stop_before_delay(policy.total_seconds),
            wait=self._pause,
            before_sleep=self._retrying,
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._get_once(path, params, account)
        except RetryError as exhausted:
            last = exhausted.last_attempt
            raise last.exception().gave_up(last.attempt_number) from None
        raise AssertionError("unreachable: tenacity returns or raises")

    def _pause(self, state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        return self.retry.backoff(state.attempt_number, getattr(error, "retry_after", None))

    def _retrying(self, state: RetryCallState) -> None:
        self.stats.retries += 1
        error = state.outcome.exception() if state.outcome else None
        log.debug("retrying in %.3f s after %s", state.upcoming_sleep, error)

    async def _get_once(self, path: str, params: dict | None, account: str | None) -> Response:
        where = describe("GET", path, params)
        headers = {"Authorization": f"Bearer {self._key.get_secret_value()}"}
        if account:
            headers["Service-Account"] = account
        async with self.limiter:
            self.stats.requests += 1
            try:
                async with asyncio.timeout(self.deadline):
                    answer = await self._http.get(path, params=params, headers=headers)
            except TimeoutError:
                raise TransientError(where, None, f"within {self.deadline:g} s") from None
            except UNANSWERED as fault:
                if _untrusted(fault):  # retrying cannot make a certificate trustworthy
                    raise ServiceError(where, None, said(fault)) from None
                raise TransientError(where, None, said(fault)) from None
        content = answer.content
        self.stats.bytes += len(content)
        status = answer.status_code
        if status == 429:
            self.stats.rate_limited += 1
            self.limiter.throttled()
            retry_after = _retry_after(answer.headers.get("retry-after"))
            raise TransientError(where, 429, _message(content), retry_after=retry_after)
        if status >= 500:
            raise TransientError(where, status, _message(content))
        if status >= 400:
            if _cut_short(content):
                # Spec 7.1: an error body is JSON. Half of one is a transport fault, and the
                # half lost may be what the error names (a 400's window cap): ask again.
                raise TransientError(where, status, "the error body is not complete JSON")
            error = _error_body(content)
            kind = BY_STATUS.get(status, ServiceError)
            raise kind(
                where,
                status,
                error.get("message") or answer.reason_phrase,
                code=error.get("code"),
                param=error.get("param"),
            )
        self.limiter.succeeded()
        if not content:
            return Response({}, b"")
        try:
            body = orjson.loads(content)
        except orjson.JSONDecodeError:
            raise TransientError(where, status, "the body is not complete JSON") from None
        if not isinstance(body, dict):
            raise ServiceError(where, status, "the body is not a JSON object")
        return Response(body, content)


def _untrusted(error: BaseException) -> bool:
    """The TLS certificate was refused (anywhere in the chain of causes)."""
    while error is not None:
        if isinstance(error, ssl.SSLCertVerificationError):
            return True
        error = error.__cause__ or error.__context__
    return False


def _retry_after(raw: str | None) -> float | None:
    """Seconds to wait: `Retry-After` as delay-seconds or as an HTTP date (RFC 9110 10.2.3);
    None when absent or unreadable, and our own backoff applies."""
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def _error_body(content: bytes) -> dict:
    try:
        body = orjson.loads(content)
    except orjson.JSONDecodeError:
        return {}
    error = body.get("error") if isinstance(body, dict) else None
    return error if isinstance(error, dict) else {}


def _cut_short(content: bytes) -> bool:
    """A body that starts as JSON and does not parse: cut off on the way."""
    if not content.lstrip().startswith((b"{", b"[")):
        return False
    try:
        orjson.loads(content)
    except orjson.JSONDecodeError:
        return True
    return False


def _message(content: bytes) -> str:
    return _error_body(content).get("message") or ""
