"""A run of several accounts: one account that cannot be fetched fails alone, the others are
published, and the retry Dagster launches (with the run's tags) fetches that account alone."""

import gzip
import os
from collections.abc import Iterator

import dagster as dg
import duckdb
import orjson
import polars as pl
import pytest

from assets.definitions import defs
from assets.instance import open_instance
from assets.partitions import range_tags
from bench.scenarios import FEW_RETRIES, adwh, run_args
from launcher.execute import QUIET
from pipelines.fanout import ACCOUNTS_TAG, RETRY_TAG_PREFIX
from sandbox.faults import NO_FAULTS, FaultPlan
from sandbox.service import SandboxService
from tests.conftest import SECRET, TODAY, serving
from warehouse.lake import Lake

SPAN = (TODAY.replace(day=18), TODAY.replace(day=20))
TABLE = "campaign_metrics"


@pytest.fixture
def agency(home, monkeypatch) -> Iterator[SandboxService]:
    """An agency key reaching three small accounts, served over HTTP (ADS_API_BASE_URL and
    ADS_API_KEY set to reach it)."""
    service = SandboxService("small", TODAY, key=SECRET, clients=3)
    with serving(service) as url:
        monkeypatch.setenv("ADS_API_BASE_URL", url)
        monkeypatch.setenv("ADS_API_KEY", SECRET)
        yield service


def troubled(service: SandboxService) -> str:
    """Every request for the second account answers 503 from now on; its id."""
    account = service.accounts[1].id
    service.faults = FaultPlan(rate_5xx=1.0, accounts=(account,))
    return account


def accounts_in_lake(home, table: str = TABLE) -> set[str]:
    rows = pl.scan_pyarrow_dataset(Lake(home / "lake").dataset(table))
    return set(rows.select("account_id").unique().collect()["account_id"])


def accounts_in_warehouse(home, table: str = TABLE) -> set[str]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return {a for (a,) in con.sql(f"SELECT DISTINCT account_id FROM {table}").fetchall()}


def test_an_account_that_cannot_be_fetched_fails_alone_and_is_named(home, agency):
    account = troubled(agency)
    env = {"ADS_API_BASE_URL": os.environ["ADS_API_BASE_URL"], "ADS_API_KEY": SECRET}
    failed = adwh(home, run_args(SPAN, "--tables", TABLE), FEW_RETRIES, **env)
    assert failed.code == 1
    pair = f"adwh: account {account}, source {TABLE}: GET /v1/campaign-metrics?"
    assert failed.line.startswith(pair)
    assert "503" in failed.line
    others = {a.id for a in agency.accounts} - {account}
    assert accounts_in_lake(home) == others
    assert accounts_in_warehouse(home) == others  # built after the failed step, in the same run
    agency.faults = NO_FAULTS
    assert adwh(home, run_args(SPAN, "--tables", TABLE), FEW_RETRIES, **env).code == 0
    assert accounts_in_lake(home) == {a.id for a in agency.accounts}


def extract(
    instance: dg.DagsterInstance, tags: dict[str, str], table: str = TABLE
) -> dg.DagsterRun:
    """The extract job's step of `table` over SPAN, in process, tagged as the queue's runs are."""
    result = defs.resolve_job_def("extract").execute_in_process(
        instance=instance,
        run_config={**QUIET, "resources": {"service": {"config": FEW_RETRIES}}},
        tags={**range_tags(*SPAN), **tags},
        raise_on_error=False,
        asset_selection=[dg.AssetKey(table)],
    )
    return instance.get_run_by_id(result.run_id)


def failed_alone(instance: dg.DagsterInstance, everyone: list[str], account: str) -> dg.DagsterRun:
    """A packed run of `everyone` that failed on `account` alone: its one retry tag names it."""
    run = extract(instance, {ACCOUNTS_TAG: ",".join(everyone)})
    assert run.status is dg.DagsterRunStatus.FAILURE
    (step,) = [k for k in run.tags if k.startswith(RETRY_TAG_PREFIX)]
    assert run.tags[step] == account
    return run


def test_the_retry_of_a_packed_run_fetches_the_failed_account_alone(home, agency):
    everyone = sorted(a.id for a in agency.accounts)
    account = troubled(agency)
    with open_instance() as instance:
        first = failed_alone(instance, everyone, account)
        assert accounts_in_lake(home) == set(everyone) - {account}
        agency.faults = NO_FAULTS
        agency.requests.clear()
        retried = extract(instance, dict(first.tags))  # the parent's tags, as a retry has them
    assert retried.status is dg.DagsterRunStatus.SUCCESS
    asked = {r.account for r in agency.requests if r.path != "/v1/accounts" and r.account}
    assert asked == {account}
    assert accounts_in_lake(home) == set(everyone)


def test_an_account_withdrawn_after_packing_fails_alone(home, agency):
    """A client takes its invitation back between the schedule's packing and the run: the key
    no longer lists it, and the run fails on it alone."""
    everyone = sorted(a.id for a in agency.accounts)
    account = agency.accounts[2].id
    agency.withdraw(account)
    with open_instance() as instance:
        failed_alone(instance, everyone, account)
    assert accounts_in_lake(home) == set(everyone) - {account}


def test_the_key_s_accounts_are_listed_once_a_run_and_each_lands_the_page_that_lists_it(
    home, agency, monkeypatch
):
    """`accounts` keeps each account's own row, and the listing holds every account of the
    key: paged through once a run (two pages here), not once per account."""
    monkeypatch.setattr("pipelines.client.paging.CURSOR_PAGE", 2)
    everyone = sorted(a.id for a in agency.accounts)
    agency.requests.clear()
    with open_instance() as instance:
        run = extract(instance, {ACCOUNTS_TAG: ",".join(everyone)}, "accounts")
    assert run.status is dg.DagsterRunStatus.SUCCESS
    listings = [r for r in agency.requests if r.path == "/v1/accounts"]
    assert len(listings) == 2
    rows = pl.scan_pyarrow_dataset(Lake(home / "lake").dataset("accounts")).collect()
    assert sorted(rows.select("account_id", "id").rows()) == [(a, a) for a in everyone]
    assert dict(rows.select("id", "name").rows()) == {a.id: a.name for a in agency.accounts}
    _, second, third = agency.accounts  # as the key lists them: the third on page 2
    landed = [
        orjson.loads(gzip.decompress(page.read_bytes()))["request"]
        for page in (home / "raw" / "accounts" / f"account={third.id}").rglob("page-*.json.gz")
    ]
    assert [request["params"].get("starting_after") for request in landed] == [second.id]
