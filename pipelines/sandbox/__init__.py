"""The embedded sandbox service: a deterministic simulation of the spec.

Served in-process through an httpx transport, or over HTTP by `adwh sandbox serve`.
"""
