"""The sandbox as the product's service plug-in (`ADWH_SANDBOX=sandbox`, the default)."""

from datetime import date

import httpx

from sandbox.app import SandboxTransport, serve
from sandbox.embedded import embedded_service
from sandbox.restating import Restating
from sandbox.service import SandboxService


class SandboxPlugin:
    """In process: one shared `SandboxService` per (preset, date); over HTTP: a new one."""

    def transport(self, preset: str, today: date) -> httpx.AsyncBaseTransport:
        return SandboxTransport(embedded_service(preset, today))

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
        service = SandboxService(
            preset,
            today,
            key=key,
            variant=variant,
            clients=clients,
            large_clients=large_clients,
            restating=None if restate_days is None else Restating(restate_days),
        )
        serve(service, port)


PLUGIN = SandboxPlugin()
