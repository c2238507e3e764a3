"""A pack is a run tag (`pipelines/fanout.py`): the longest one the packing makes is stored and
found by the production instance's PostgreSQL, whose index on run tags holds an entry of at
most 2,704 bytes, so a pack is bounded by its tag's characters."""

import random
import string
from pathlib import Path

import dagster as dg
import pytest
import sqlalchemy
import yaml

from bench.deployment import instance_config
from pipelines.fanout import ACCOUNTS_TAG, EXTRACT_JOB, TAG_CHARS


def incompressible_pack(chars: int, seed: int) -> str:
    """Ids of random characters (PostgreSQL compresses a repetitive value under its limit;
    ids the spec leaves opaque need not be)."""
    rng = random.Random(seed)
    ids, length = [], -1
    while length + 25 <= chars:
        ids.append("".join(rng.choices(string.ascii_letters + string.digits, k=24)))
        length += 25
    return ",".join(ids)


def production_instance(home: Path) -> dg.DagsterInstance:
    (home / "dagster.yaml").write_text(yaml.safe_dump(instance_config(4)))
    return dg.DagsterInstance.from_config(str(home))


def test_the_longest_pack_is_a_tag_postgresql_stores_and_finds(dagster_database, tmp_path):
    instance = production_instance(tmp_path)
    pack = incompressible_pack(TAG_CHARS, seed=47)
    assert TAG_CHARS - 25 < len(pack) <= TAG_CHARS
    run = instance.add_run(dg.DagsterRun(job_name=EXTRACT_JOB, tags={ACCOUNTS_TAG: pack}))
    found = instance.get_runs(filters=dg.RunsFilter(tags={ACCOUNTS_TAG: pack}))
    assert [r.run_id for r in found] == [run.run_id]


def test_a_pack_twice_as_long_would_not_be_stored(dagster_database, tmp_path):
    """Why the bound: a run of twice the characters cannot be queued at all."""
    instance = production_instance(tmp_path)
    pack = incompressible_pack(2 * TAG_CHARS, seed=48)
    with pytest.raises(sqlalchemy.exc.DBAPIError, match="index row size"):
        instance.add_run(dg.DagsterRun(job_name=EXTRACT_JOB, tags={ACCOUNTS_TAG: pack}))
