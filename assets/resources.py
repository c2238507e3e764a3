"""Dagster resources: the service and the warehouse, configured as the contract says.

Every field defaults to the contract's environment variable; set in Dagster config they win.
The key is best given as `EnvVar("ADS_API_KEY")` so that run config never holds its value.
"""

from contextlib import AbstractAsyncContextManager

import dagster as dg
import httpx

from pipelines.client.credits import CreditBudget
from pipelines.client.http import RetryPolicy
from pipelines.destination import Destination
from pipelines.session import Session, open_session
from pipelines.settings import DEFAULT_PRESET, Settings, load_settings


class WarehouseResource(dg.ConfigurableResource):
    """Where a run writes (`ADWH_HOME`, `ADWH_LAKE_URL`, `ADWH_RAW_URL`), how much of the
    lake's history it keeps (`ADWH_LAKE_KEEP_HOURS`) and the reference date it runs for
    (`ADWH_TODAY`)."""

    home: str | None = None
    lake_url: str | None = None
    lake_keep_hours: int | None = None
    raw_url: str | None = None
    today: str | None = None

    def settings(self, **service: str | None) -> Settings:
        """The settings of this resource's fields over the environment, with `service`'s
        (the service resource's fields, by variable)."""
        return load_settings(
            ADWH_HOME=self.home,
            ADWH_LAKE_URL=self.lake_url,
            ADWH_LAKE_KEEP_HOURS=self.lake_keep_hours,
            ADWH_RAW_URL=self.raw_url,
            ADWH_TODAY=self.today,
            **service,
        )

    def destination(self) -> Destination:
        return Destination.of(self.settings())


class ServiceResource(dg.ConfigurableResource):
    """The Advertising and Catalog Data Service, or the embedded sandbox when no URL is set.

    `timeout_seconds` bounds each attempt at a request (connect within at most 10 s of it,
    the whole answer within their sum); transient faults are retried `retry_attempts` times
    with jittered exponential backoff from `retry_backoff_seconds` up to
    `retry_backoff_max_seconds` (or what Retry-After asks, within that maximum).
    `max_credits` caps what a run's reads may cost (`ADWH_MAX_CREDITS`).
    """

    base_url: str | None = None
    api_key: str | None = None
    account_ids: str | None = None
    max_in_flight: int = 8
    sandbox_preset: str = DEFAULT_PRESET
    timeout_seconds: float = 60.0
    retry_attempts: int = 8
    retry_backoff_seconds: float = 0.25
    retry_backoff_max_seconds: float = 30.0
    max_credits: int | None = None

    def http_timeout(self) -> httpx.Timeout:
        return httpx.Timeout(self.timeout_seconds, connect=min(10.0, self.timeout_seconds))

    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(
            attempts=self.retry_attempts,
            backoff_base=self.retry_backoff_seconds,
            backoff_max=self.retry_backoff_max_seconds,
        )

    def session(
        self, settings: Settings, *, packed: bool = False, budget: CreditBudget | None = None
    ) -> AbstractAsyncContextManager[Session]:
        """A session to the service as this resource configures it (concurrency, timeouts,
        retries), for `settings`' accounts, reading for `settings`' home (which must belong to
        this service); `packed` and `budget` as `open_session` takes them."""
        return open_session(
            settings,
            max_in_flight=self.max_in_flight,
            preset=self.sandbox_preset,
            timeout=self.http_timeout(),
            retry=self.retry_policy(),
            packed=packed,
            budget=budget,
            for_home=True,
        )

    def settings(self, warehouse: WarehouseResource) -> Settings:
        return warehouse.settings(
            ADS_API_BASE_URL=self.base_url,
            ADS_API_KEY=self.api_key,
            ADS_ACCOUNT_IDS=self.account_ids,
            ADWH_MAX_CREDITS=self.max_credits,
        )
