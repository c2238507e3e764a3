"""The one place the product reaches a stand-in for the service: the embedded sandbox.

When no `ADS_API_BASE_URL` is set, runs talk to a plug-in named by `ADWH_SANDBOX` (default:
the `sandbox` package beside the product, installed by the `sandbox` dependency group). No
product module imports it: it is found by name here, so the product's wheel carries none of
it, and another simulator (a recorder, a replay of real pages) plugs in the same way.
"""

import importlib
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Protocol

import httpx

from pipelines.settings import ConfigurationError, in_environment


class ServicePlugin(Protocol):
    """What a stand-in for the service offers: an in-process transport and an HTTP server."""

    def transport(self, preset: str, today: date) -> httpx.AsyncBaseTransport:
        """The service for (preset, reference date), shared by every request of a process."""
        ...

    def serve(
        self,
        *,
        port: int,
        preset: str,
        key: str,
        variant: int,
        today: date,
        clients: int = 0,
        large_clients: int = 0,
        restate_days: int | None = None,
    ) -> None:
        """Serve the service over HTTP on 127.0.0.1 until interrupted; `clients` N > 0 makes
        the key an agency's reaching N accounts, `large_clients` of them large ones;
        `restate_days` N > 0 revises the attributed figures of the N most recent days between
        reference dates, as a service's attribution window does (None: the plug-in's default)."""
        ...


# The embedded sandbox's setting: the N most recent days whose attributed figures it still
# revises, read by its transport as it answers (the plug-in reads it: the product never imports
# the sandbox, so the name is written on both sides).
RESTATE_DAYS_VARIABLE = "ADWH_SANDBOX_RESTATE_DAYS"


@contextmanager
def restating(days: int) -> Iterator[None]:
    """The embedded sandbox revising its `days` latest days for the runs started meanwhile
    (each run's process reads its environment when it starts), as before afterwards."""
    with in_environment({RESTATE_DAYS_VARIABLE: str(days)}):
        yield


def load_plugin(name: str) -> ServicePlugin:
    """The plug-in module `name`'s `PLUGIN`, or a one-line reason why there is none."""
    try:
        module = importlib.import_module(name)
    except ModuleNotFoundError as error:
        if error.name != name.split(".")[0]:
            raise
        raise ConfigurationError(
            f"ADWH_SANDBOX: no module {name!r}: install the embedded sandbox "
            "(uv sync --group sandbox) or set ADS_API_BASE_URL to a real service"
        ) from None
    plugin = getattr(module, "PLUGIN", None)
    if plugin is None:
        raise ConfigurationError(f"ADWH_SANDBOX: module {name!r} has no PLUGIN")
    return plugin
