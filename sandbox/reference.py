"""Reference data and value formats every part of the sandbox shares.

Countries with their currencies, the integer day numbers the generators hash, timestamps in the
spec's form and money as decimal strings. Every builder uses them; they know nothing of accounts.
"""

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from functools import lru_cache

from sandbox.hashing import Draws, make_id, scalar
from sandbox.spec import CURRENCY_DIGITS, DEFAULT_CURRENCY_DIGITS


@dataclass(frozen=True)
class Country:
    code: str
    name: str
    currency: str
    marketplace_id: str
    language: str

    @property
    def id(self) -> str:
        return make_id("country", self.code)

    @property
    def exponent(self) -> int:
        """Digits after the decimal point in this currency's amounts (JPY has none)."""
        return CURRENCY_DIGITS.get(self.currency, DEFAULT_CURRENCY_DIGITS)


COUNTRIES = (
    Country("US", "United States", "USD", "ATVPDKIKX0DER", "en"),
    Country("DE", "Germany", "EUR", "A1PA6795UKMFR9", "de"),
    Country("GB", "United Kingdom", "GBP", "A1F83G8C2ARO7P", "en"),
    Country("JP", "Japan", "JPY", "A1VC38T7YXB528", "ja"),
)
# Marketplaces only a sandbox variant opens (`variants.py`): not listed by variant 0.
MORE_COUNTRIES = (
    Country("IN", "India", "INR", "A21TJRUUN4KGV", "en"),
    Country("BR", "Brazil", "BRL", "A2Q3Y263D00KWC", "pt"),
    Country("AE", "United Arab Emirates", "AED", "A2VIGQ35RCS4UG", "ar"),
    Country("SE", "Sweden", "SEK", "A2NODRKZP88ZB9", "sv"),
    Country("PL", "Poland", "PLN", "A1C3SOZRARQ6R3", "pl"),
    Country("MX", "Mexico", "MXN", "A1AM78C64UM0Y8", "es"),
    Country("AU", "Australia", "AUD", "A39IBJ37TRP1C6", "en"),
)
COUNTRY_BY_ID = {c.id: c for c in (*COUNTRIES, *MORE_COUNTRIES)}
COUNTRY_BY_CODE = {c.code: c for c in (*COUNTRIES, *MORE_COUNTRIES)}
_EPOCH = date(1970, 1, 1)


def ordinal(day: date) -> int:
    """Days since the Unix epoch: the integer the metrics generator hashes."""
    return (day - _EPOCH).days


def quarter_start(day: date) -> date:
    """The first day of `day`'s calendar quarter: the anchor entity attributes are dated from,
    so every reference date of one quarter sees the same records (`assembly.py`)."""
    return date(day.year, 3 * ((day.month - 1) // 3) + 1, 1)


def created_at(draws: Draws, kind: str, i: int, anchor: date, history_days: int) -> str:
    """When the i-th entity of a kind was created: 30 to `history_days` + 229 days before the
    anchor, as the account's draw for it says."""
    days = int(draws.unit(kind, i, "created") * (history_days + 200)) + 30
    return timestamp(anchor - timedelta(days=days), scalar(kind, i))


def from_ordinal(days: int) -> date:
    return _EPOCH + timedelta(days=int(days))


def timestamp(day: date, seconds: int = 0) -> str:
    moment = datetime.combine(day, time()) + timedelta(seconds=seconds % 86_400)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


@lru_cache(maxsize=4096)
def _day_text(days: int) -> str:
    return from_ordinal(days).isoformat()


def stamp(days: int, seconds: int) -> str:
    """`timestamp` for an ordinal day, fast enough for tens of thousands of records."""
    seconds = int(seconds) % 86_400
    hours, rest = divmod(seconds, 3600)
    return f"{_day_text(int(days))}T{hours:02d}:{rest // 60:02d}:{rest % 60:02d}Z"


def money(minor_units: int, exponent: int) -> str:
    """Minor units to the spec's decimal string ("12.30", or "1230" for JPY)."""
    if exponent == 0:
        return str(minor_units)
    sign = "-" if minor_units < 0 else ""
    whole, frac = divmod(abs(minor_units), 10**exponent)
    return f"{sign}{whole}.{frac:0{exponent}d}"


def amount(minor_units: int, exponent: int) -> int | float:
    """Minor units to a JSON number, for the fields the spec sends as numbers (bids)."""
    return int(minor_units) if exponent == 0 else round(int(minor_units) / 10**exponent, exponent)
