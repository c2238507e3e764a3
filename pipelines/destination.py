"""Everything a run writes: the schema log and spools under `$ADWH_HOME`; raw pages and the
lake there too, or at `ADWH_RAW_URL` and `ADWH_LAKE_URL` (a folder or `s3://bucket/prefix`)."""

import shutil
from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path

from pydantic import SecretBytes

from pipelines.settings import HomeSettings
from pipelines.shaping import Context
from warehouse.lake import Lake
from warehouse.raw import RawStore
from warehouse.schema_log import SchemaLog
from warehouse.secrets import pseudonym_key


@dataclass(frozen=True)
class Destination:
    home: Path
    lake_url: str | None = None
    lake_keep_hours: int = 0
    raw_url: str | None = None
    pseudonym_secret: SecretBytes | None = None  # a secret's key (warehouse/secrets.py)
    rotate_pseudonym_key: bool = False

    @classmethod
    def of(cls, settings: HomeSettings) -> "Destination":
        secret = settings.pseudonym_secret()
        return cls(
            settings.home,
            settings.lake_url,
            settings.lake_keep_hours,
            settings.raw_url,
            SecretBytes(secret) if secret is not None else None,
            settings.rotate_pseudonym_key,
        )

    @property
    def lake(self) -> Lake:
        return Lake(self.lake_url or self.home / "lake", self.lake_keep_hours)

    @property
    def raw(self) -> RawStore:
        return RawStore(self.raw_url or self.home / "raw")

    @property
    def staging(self) -> Path:
        return self.home / "staging"

    def clean_staging(self) -> None:
        """Remove the spools a crashed run left behind."""
        shutil.rmtree(self.staging, ignore_errors=True)

    @cached_property
    def schemas(self) -> SchemaLog:
        return SchemaLog(self.home)

    def context(self, reference: date, run_id: str = "") -> Context:
        """What typing a page needs; raises PseudonymKeyError when the pseudonym key is not
        the one the data was written with (and not rotating)."""
        given = self.pseudonym_secret.get_secret_value() if self.pseudonym_secret else None
        key = pseudonym_key(self.home, given, self.rotate_pseudonym_key)
        return Context(reference, key, run_id)
