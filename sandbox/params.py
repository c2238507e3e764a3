"""Reading and validating query parameters as the spec defines them."""

import re
from datetime import date

from sandbox.errors import bad_param

_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ID = re.compile(r"^[a-f0-9]{24}$")


class Query:
    """A request's query string: repeated keys, `name[]` arrays, typed getters."""

    def __init__(self, pairs: list[tuple[str, str]]) -> None:
        self._values: dict[str, list[str]] = {}
        for key, value in pairs:
            self._values.setdefault(key.removesuffix("[]"), []).append(value)

    def get(self, name: str, default: str | None = None) -> str | None:
        values = self._values.get(name)
        return values[-1] if values else default

    def all(self, name: str) -> list[str]:
        """Every value of a parameter given as `a=x&a=y`, `a[]=x` or comma-separated."""
        out: list[str] = []
        for value in self._values.get(name, []):
            out.extend(v for v in value.split(",") if v)
        return out

    def integer(self, name: str, default: int, low: int, high: int) -> int:
        raw = self.get(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError:
            raise bad_param(name, f"{name} must be an integer, got {raw!r}.") from None
        if not low <= value <= high:
            raise bad_param(name, f"{name} must be between {low} and {high}, got {value}.")
        return value

    def flag(self, name: str) -> bool:
        raw = self.get(name, "false")
        if raw not in ("true", "false"):
            raise bad_param(name, f"{name} must be 'true' or 'false'.")
        return raw == "true"

    def choice(self, name: str, allowed: tuple[str, ...], default: str | None) -> str | None:
        raw = self.get(name, default)
        if raw is not None and raw not in allowed:
            raise bad_param(name, f"{name} must be one of {', '.join(allowed)}; got {raw!r}.")
        return raw

    def day(self, name: str, required: bool = True) -> date | None:
        raw = self.get(name)
        if raw is None:
            if required:
                raise bad_param(name, f"{name} is required.")
            return None
        if not _DATE.match(raw):
            raise bad_param(name, f"{name} must match YYYY-MM-DD, got {raw!r}.")
        try:
            return date.fromisoformat(raw)
        except ValueError:
            raise bad_param(name, f"{name} is not a calendar date: {raw!r}.") from None

    def identifier(self, name: str) -> str | None:
        raw = self.get(name)
        if raw is not None and not _ID.match(raw):
            raise bad_param(name, f"{name} must be an identifier (24 hex characters).")
        return raw
