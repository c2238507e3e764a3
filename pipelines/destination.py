"""Everything a run writes, under `$ADWH_HOME`: raw pages, the lake, the schema log."""

from dataclasses import dataclass
from datetime import date
from functools import cached_property
from pathlib import Path

from pipelines.sources.model import Context
from warehouse.lake import Lake
from warehouse.raw import RawStore
from warehouse.schema_log import SchemaLog
from warehouse.secrets import pseudonym_key


@dataclass(frozen=True)
class Destination:
    home: Path

    @property
    def lake(self) -> Lake:
        return Lake(self.home / "lake", self.home / "staging")

    @property
    def raw(self) -> RawStore:
        return RawStore(self.home / "raw")

    @property
    def staging(self) -> Path:
        return self.home / "staging"

    @cached_property
    def schemas(self) -> SchemaLog:
        return SchemaLog(self.home)

    def context(self, reference: date, run_id: str = "") -> Context:
        return Context(reference, pseudonym_key(self.home), run_id)
