"""Runs of packed accounts through the production instance (PostgreSQL, queue, daemon) give
exactly the warehouse of the same range extracted and built in process: an account that fails
in a pack is retried alone, and a run killed midway loses nothing when it is run again."""

import os
import shutil
import signal
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from pathlib import Path

import dagster as dg
import psutil
import pytest

from assets.marts import warehouse_marts
from assets.partitions import RANGE_START_TAG
from bench.deployment import Deployment, deployment, run_worker_pid, settled, wait_until
from bench.scenarios import warehouse_digest
from launcher.cli import main
from pipelines.fanout import ACCOUNTS_TAG, RETRY_TAG_PREFIX
from sandbox.service import SandboxService
from tests import library
from tests.conftest import SECRET, TODAY, serving
from warehouse.build import build_warehouse
from warehouse.schemas import TABLES

# Four days: the fewest that keep a dated run at work long enough to be killed mid-run.
START, END = "2026-11-16", "2026-11-19"

pytestmark = pytest.mark.timeout(900)


def service_env(url: str, home: Path) -> dict[str, str]:
    return {
        "ADS_API_BASE_URL": url,
        "ADS_API_KEY": SECRET,
        "ADWH_HOME": str(home),
        "ADWH_TODAY": TODAY.isoformat(),
    }


def use(env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    for name in ("ADS_ACCOUNT_IDS", "DAGSTER_HOME"):
        monkeypatch.delenv(name, raising=False)


def extract_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    return [r for r in instance.get_runs() if ACCOUNTS_TAG in r.tags]


def last_end(instance: dg.DagsterInstance) -> float:
    records = instance.get_run_records()
    return max(r.end_time or 0 for r in records if ACCOUNTS_TAG in r.dagster_run.tags)


def peak_runs_at_once(instance: dg.DagsterInstance) -> int:
    spans = [
        (r.start_time, r.end_time)
        for r in instance.get_run_records()
        if ACCOUNTS_TAG in r.dagster_run.tags and r.start_time and r.end_time
    ]
    return max(sum(s <= t < e for s, e in spans) for t, _ in spans)


def warehouse_builds(instance: dg.DagsterInstance) -> set[str]:
    """The runs that materialized any of the warehouse's models."""
    models = list(warehouse_marts.keys)
    return {
        record.run_id
        for key in models
        for record in instance.fetch_materializations(key, limit=100).records
    }


def in_process(home: Path, like: Path, monkeypatch: pytest.MonkeyPatch, accounts: str = "") -> None:
    """The same range extracted by the library in this process and built, in `home`, with
    `like`'s pseudonym key (so the change log's pseudonyms agree): what one run would hold."""
    (home / "secrets").mkdir(parents=True)
    shutil.copy(like / "secrets" / "pseudonym.key", home / "secrets" / "pseudonym.key")
    monkeypatch.setenv("ADWH_HOME", str(home))
    if accounts:
        monkeypatch.setenv("ADS_ACCOUNT_IDS", accounts)
    days = date.fromisoformat(START), date.fromisoformat(END)
    library.succeeded(library.extract(home, *days))
    build_warehouse(home, library.lake(home), TABLES.values())


@contextmanager
def agency(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clients: int
) -> Iterator[tuple[SandboxService, dict[str, str]]]:
    """An agency key reaching `clients` accounts, served over HTTP, and the environment that
    points at it and at the home `tmp_path/fanned-out` (set here too)."""
    service = SandboxService("small", TODAY, key=SECRET, clients=clients)
    with serving(service) as url:
        env = service_env(url, tmp_path / "fanned-out")
        use(env, monkeypatch)
        yield service, env


@contextmanager
def deployed(
    tmp_path: Path, env: dict[str, str], monkeypatch: pytest.MonkeyPatch, max_runs: int
) -> Iterator[Deployment]:
    """The deployment over `env`, `max_runs` runs at once, the one `adwh backfill` reaches.
    Stopped before the tests compare with a run in process: its daemon and servers would
    poll all along."""
    with deployment(tmp_path, env, max_runs=max_runs) as deploy:
        monkeypatch.setenv("ADWH_DAGSTER_URL", deploy.url)
        yield deploy


RETRY_NUMBER = "dagster/retry_number"


def fetched_alone(run: dg.DagsterRun) -> set[str]:
    """The accounts a retried run's tags have it fetch (its failed steps' accounts)."""
    return {v for k, v in run.tags.items() if k.startswith(RETRY_TAG_PREFIX)}


# Through PgBouncer, as deploy/compose.yaml runs it (the kill test below goes direct, as Helm).
@pytest.mark.slow(seconds=130)
@pytest.mark.parametrize("dagster_database", ["pgbouncer"], indirect=True)
def test_a_backfill_of_3_accounts_is_one_pack_whose_failed_account_is_retried_alone(
    tmp_path, dagster_database, monkeypatch
):
    """Three small accounts, one pack: a run of the days and one of current state, 2 at once.
    One client withdraws its invitation once the runs are packed, and shares itself again when
    a run has failed on it: the retries fetch it alone, and the warehouse equals the range's
    extracted and built in process."""
    with agency(tmp_path, monkeypatch, clients=3) as (service, env):
        with (
            deployed(tmp_path, env, monkeypatch, max_runs=2) as deploy,
            deploy.instance() as instance,
        ):
            troubled = service.accounts[1].id
            launched = time.time()
            assert main(["backfill", "--start", START, "--end", END, "--no-wait"]) == 0
            service.withdraw(troubled)  # after packing, before the runs
            wait_until(
                lambda: any(
                    r.status is dg.DagsterRunStatus.FAILURE for r in extract_runs(instance)
                ),
                "a run failed by the withdrawn account",
            )
            service.invite(troubled)
            wait_until(lambda: settled(instance, launched), "the runs, retries and a build")
            runs = extract_runs(instance)
            packs = {r.tags[ACCOUNTS_TAG] for r in runs}
            assert packs == {",".join(sorted(a.id for a in service.accounts))}
            assert len([r for r in runs if RETRY_NUMBER not in r.tags]) == 2  # days, state
            retries = [r for r in runs if RETRY_NUMBER in r.tags]
            assert retries and all(fetched_alone(r) == {troubled} for r in retries)
            assert peak_runs_at_once(instance) <= 2
            newest = max(warehouse_builds(instance), key=lambda b: _started(instance, b))
            assert _started(instance, newest) >= last_end(instance)  # after them all
            # named as the UI lists jobs: no run of Dagster's implicit `__ASSET_JOB`
            assert {run.job_name for run in instance.get_runs()} == {"extract", "warehouse"}
        in_process(tmp_path / "single", tmp_path / "fanned-out", monkeypatch)
    assert warehouse_digest(tmp_path / "fanned-out") == warehouse_digest(tmp_path / "single")


def _started(instance: dg.DagsterInstance, run_id: str) -> float:
    return instance.get_run_record_by_id(run_id).start_time or 0


def started_with_a_table_written(instance: dg.DagsterInstance) -> dg.DagsterRun | None:
    """A dated extract run at work that has already published a table."""
    for run in extract_runs(instance):
        if run.status is not dg.DagsterRunStatus.STARTED or RANGE_START_TAG not in run.tags:
            continue
        written = instance.get_records_for_run(
            run.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION, limit=1
        ).records
        if written:
            return run
    return None


def kill_worker(instance: dg.DagsterInstance, run_id: str) -> None:
    """SIGKILL the process executing `run_id`, as a lost machine would, and see it die."""
    pid = run_worker_pid(instance, run_id)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    wait_until(lambda: not _alive(pid), f"the run worker {pid} to die", timeout=30)


def _alive(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def retries(instance: dg.DagsterInstance, run_id: str) -> list[dg.DagsterRun]:
    """The re-executions of `run_id` that run_retries launched."""
    return instance.get_runs(dg.RunsFilter(tags={"dagster/parent_run_id": run_id}))


@pytest.mark.slow(seconds=190)
def test_a_run_whose_worker_is_killed_is_retried_and_loses_and_duplicates_nothing(
    tmp_path, dagster_database, monkeypatch
):
    """A lost machine: the run's process dies mid-run. The code server marks the run failed
    and the daemon retries its steps that did not finish (deploy/dagster.yaml's run_retries;
    none when the kill came after the last one); the warehouse equals that of one
    uninterrupted run."""
    with agency(tmp_path, monkeypatch, clients=2) as (service, env):
        account = service.accounts[1].id
        argv = ["backfill", "--start", START, "--end", END, "--accounts", account, "--no-wait"]
        with (
            deployed(tmp_path, env, monkeypatch, max_runs=1) as deploy,
            deploy.instance() as instance,
        ):
            assert main(argv) == 0
            victim = wait_until(
                lambda: started_with_a_table_written(instance),
                "a run with a table written",
                every=0.2,
            )
            kill_worker(instance, victim.run_id)
            killed = time.time()
            wait_until(lambda: settled(instance, killed), "the runs, retries and a build")
            assert instance.get_run_by_id(victim.run_id).status is dg.DagsterRunStatus.FAILURE
            retried = retries(instance, victim.run_id)
            assert all(run.status is dg.DagsterRunStatus.SUCCESS for run in retried)
        in_process(tmp_path / "single", tmp_path / "fanned-out", monkeypatch, accounts=account)
    assert warehouse_digest(tmp_path / "fanned-out") == warehouse_digest(tmp_path / "single")
