"""The service's meaning, kept: economics lag, pseudonymous actors, recomputed ratios.

Pure functions of frames and plain values (a date, a key), so each rule is testable with a
three-row frame and cannot drift between the pipeline and a rebuild from raw.
"""

import hashlib
import hmac
import re
from datetime import date

import polars as pl

from warehouse.spec import (
    ECONOMICS_AVAILABLE,
    ECONOMICS_FIELDS,
    ECONOMICS_LAG_DAYS,
    ECONOMICS_MISSING,
    ECONOMICS_PENDING,
)

# An address inside JSON text: the characters RFC 5322 lets a local part hold (a JSON string
# escapes `"` and `\`, so a match never runs past the string that holds it), a dotted domain
# whose last label starts with a letter (`.com`, `.xn--…`).
EMAIL_IN_TEXT = re.compile(
    rb"[A-Za-z0-9!#$%&'*+/=?^_`{|}~.-]+@(?:[A-Za-z0-9-]+\.)+[A-Za-z][A-Za-z0-9-]+"
)


def economics_status(frame: pl.DataFrame, reference: date) -> pl.DataFrame:
    """`available` where the economics block was reported; where it is null, `pending` if the
    day is less than 72 hours before the reference date (it may still arrive), else `missing`.
    Every field of the block must be a column: one missing (misspelled, or renamed upstream)
    would make the status read the others alone, so it is an error naming it."""
    missing = [name for name in ECONOMICS_FIELDS if name not in frame.columns]
    if missing:
        raise KeyError(f"the economics block's fields {missing} are not columns of the frame")
    reported = pl.any_horizontal([pl.col(name).is_not_null() for name in ECONOMICS_FIELDS])
    age_days = (pl.lit(reference) - pl.col("date")).dt.total_days()
    status = (
        pl.when(reported)
        .then(pl.lit(ECONOMICS_AVAILABLE))
        .when(age_days < ECONOMICS_LAG_DAYS)
        .then(pl.lit(ECONOMICS_PENDING))
        .otherwise(pl.lit(ECONOMICS_MISSING))
    )
    return frame.with_columns(status.alias("economics_status"))


def pseudonym(value: str, key: bytes) -> str:
    """A keyed, stable stand-in for an e-mail address: same person, same value, no address."""
    digest = hmac.new(key, value.strip().lower().encode(), hashlib.sha256).hexdigest()
    return f"person:{digest[:20]}"


def pseudonymize_text(content: bytes, key: bytes) -> bytes:
    """Every e-mail address in a page's JSON text replaced by its keyed pseudonym, before the
    page is landed or parsed (contract 5.8): the change log's `actor` (spec 4.8), and any
    address a service puts in a field we have never seen. Pseudonyms hold no `@`, so this is
    idempotent."""
    if b"@" not in content:
        return content
    return EMAIL_IN_TEXT.sub(lambda found: pseudonym(found[0].decode(), key).encode(), content)


def safe_ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    """numerator / denominator as a fraction; null when the denominator is 0 or null."""
    return (
        pl.when(denominator.is_null() | (denominator == 0))
        .then(None)
        .otherwise(numerator.cast(pl.Float64) / denominator.cast(pl.Float64))
    )
