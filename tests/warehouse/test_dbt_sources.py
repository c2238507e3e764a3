"""The dbt project's `lake` source is written from the registry (warehouse/dbt_sources.py)."""

import yaml

from warehouse.dbt_sources import LAKE_SOURCE, PATH, sources_yml, write
from warehouse.schemas import TABLES


def test_the_lake_source_on_disk_is_what_the_registry_writes():
    """The committed sources.yml is what `python -m warehouse.dbt_sources` writes (run it after
    a registry change)."""
    assert PATH.read_text() == sources_yml(), (
        f"stale: {PATH.name} differs from the registry; rewrite it with "
        "`python -m warehouse.dbt_sources`"
    )


def test_the_lake_source_declares_every_table_of_the_registry_by_name():
    (source,) = yaml.safe_load(sources_yml())["sources"]
    assert source["name"] == LAKE_SOURCE and source["schema"] == "main"
    assert [t["name"] for t in source["tables"]] == sorted(TABLES)


def test_writing_it_again_changes_nothing_until_the_registry_does(tmp_path):
    path = tmp_path / "sources.yml"
    path.write_text("version: 2\n")  # as the registry had it before a table was added
    assert write(path) == [path] and path.read_text() == sources_yml()
    written = path.stat().st_mtime_ns
    assert write(path) == [] and path.stat().st_mtime_ns == written
