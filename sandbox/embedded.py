"""The in-process sandbox a run uses when no `ADS_API_BASE_URL` is set.

One instance per (preset, reference date) per process, so the assets of a run share its
generated entities, and a test can reach the same instance to inspect the requests it got or
to switch on faults.
"""

from datetime import date
from functools import lru_cache

from sandbox.restating import Restating, from_environment
from sandbox.service import SandboxService

DEFAULT_PRESET = "small"


def embedded_service(preset: str, reference: date, variant: int = 0) -> SandboxService:
    """The shared sandbox; `variant` N > 0 makes the spec's open choices otherwise (variants.py).
    It restates recent days as `ADWH_SANDBOX_RESTATE_DAYS` says now (restating.py)."""
    return _shared(preset, reference, variant, from_environment())


@lru_cache(maxsize=4)
def _shared(preset: str, reference: date, variant: int, restating: Restating) -> SandboxService:
    return SandboxService(preset, reference, variant=variant, restating=restating)
