"""What shaping a page into rows may depend on besides the rows: made by the run's destination
(`pipelines/destination.py`, which holds the pseudonym key), read by the sources' shapes.
A module of its own, so the destination and the sources each import it and not each other."""

from dataclasses import dataclass
from datetime import date


@dataclass(frozen=True)
class Context:
    """What shaping may depend on besides the rows: the run's reference date and the key of
    the e-mail pseudonyms; and the run that records any column the service adds. A rebuild
    from raw uses the fetch's own reference date."""

    reference: date
    pseudonym_key: bytes
    run_id: str = ""
