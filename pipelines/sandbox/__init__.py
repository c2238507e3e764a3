"""The embedded sandbox service: a deterministic simulation of the spec, served in-process or over HTTP."""
