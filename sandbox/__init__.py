"""The embedded sandbox service: a deterministic simulation of the spec.

Served in-process through an httpx transport, or over HTTP by `adwh sandbox serve`. Not part
of the product's wheel: the product loads `PLUGIN` by name (`ADWH_SANDBOX`, default `sandbox`).
"""

from sandbox.plugin import PLUGIN

__all__ = ["PLUGIN"]
