"""The dbt project's `lake` source (`warehouse/dbt/models/sources.yml`), written from the registry.

One source table per table of the registry (`TABLES`), named as the warehouse names it: what a
mart reads with `source('lake', …)`, and the Dagster asset of the same name, so lineage runs
service -> table -> mart. Written, not hand-kept, as the history models are
(`warehouse/history_models.py`, which also declares the `snapshots` source): a table the registry
gains is a source the next time this runs (`python -m warehouse.dbt_sources`;
tests/warehouse/test_dbt_sources.py fails while the file on disk differs from what it writes).
Written only when it differs, so an unchanged registry leaves the dbt manifest current.
"""

from pathlib import Path

from warehouse.dbt_project import DBT_PROJECT
from warehouse.schemas import TABLES

PATH = DBT_PROJECT / "models" / "sources.yml"
# The dbt source of the tables the pipeline loads (`warehouse/marts.py` selects by it).
LAKE_SOURCE = "lake"
HEADER = (
    "Written by `python -m warehouse.dbt_sources` from the registry (warehouse/schemas/): do "
    "not edit."
)


def sources_yml() -> str:
    """The file's text: the `lake` source, its tables by name."""
    lines = [
        f"# {HEADER}",
        "# The tables the pipeline loads into warehouse.duckdb, one per table of the registry.",
        "# Each is the Dagster asset of the same name, so lineage runs service -> table -> mart.",
        "version: 2",
        "",
        "sources:",
        f"  - name: {LAKE_SOURCE}",
        "    schema: main",
        "    description: Every table of the lake, loaded into warehouse.duckdb by the pipeline.",
        "    tables:",
        *(f"      - name: {name}" for name in sorted(TABLES)),
    ]
    return "\n".join(lines) + "\n"


def write(path: Path = PATH) -> list[Path]:
    """Write the file as the registry has it; return it if it changed (an unchanged file
    keeps its time, so dbt's manifest stays current)."""
    text = sources_yml()
    if path.exists() and path.read_text() == text:
        return []
    path.write_text(text)
    return [path]


if __name__ == "__main__":
    for path in write():
        print(f"wrote {path.relative_to(DBT_PROJECT)}")
