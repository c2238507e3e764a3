"""Shared fixtures: a private ADWH_HOME, a fixed reference date, the embedded sandbox."""

import gzip
import os
import re
import sqlite3
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import closing, contextmanager
from datetime import date
from pathlib import Path

import duckdb
import httpx
import polars as pl
import pytest
from hypothesis import settings
from pydantic import SecretStr

from bench.deployment import free_port
from pipelines.client.http import RetryPolicy, ServiceClient
from sandbox.app import SandboxTransport
from sandbox.embedded import DEFAULT_PRESET, embedded_service
from sandbox.faults import NO_FAULTS
from sandbox.service import SandboxService
from tests import prepared
from tests.whole import mark_whole_runs

# CI replays the same examples every run (a landing must not hang on a lucky draw); developers
# keep exploring new ones, and what they find lands as a fix or an @example. No deadline in
# either: the suite runs on every core at once (pytest-xdist), so an example's wall time measures
# its neighbours as much as itself (1.4 s against 0.2 s was seen); speed is the benchmark's job.
settings.register_profile("dev", deadline=None)
settings.register_profile("ci", derandomize=True, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))
# The Dagster partitions of this process start here (read when the definitions load, before
# any test sets its home's first day): early enough for every range a test runs.
os.environ.setdefault("ADWH_START_DATE", "2025-10-01")
# No settings file (`~/.config/ads-warehouse/env`): a developer's own must not steer the tests;
# the tests of the file name one of their own.
os.environ["ADWH_ENV_FILE"] = ""
# What adwh keeps outside any home (a refusal's alert log): this process's own.
os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="adwh-state-")
# Loaded here, so no test's home (which sets a later first day) is in force when they are:
# without it, a worker whose first test sets one starts its partitions on that day.
import assets.partitions  # noqa: E402, F401


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests that start a whole run are marked `whole` (tests/whole.py): `-m "not whole"` is
    the quick loop.

    Under pytest-xdist, each worker starts with its share of the tests marked `slow`.

    The work-stealing scheduler hands each worker a contiguous share of the collection and
    lets idle workers take from the others' tails; a minutes-long test collected late (the
    crash test, the deployment's fan-out) started minutes in and ran alone at the end, the
    suite's tail. Placed at the head of the shares, longest first, each to the share with the
    least slow work so far (`slow(seconds=…)`: about what it takes in the suite), the slow
    tests run side by side from the start. Every worker computes the same order, as xdist
    requires."""
    mark_whole_runs(items)
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    slow = [item for item in items if item.get_closest_marker("slow")]
    if workers < 2 or not slow:
        return
    heads: list[list[pytest.Item]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for item in sorted(slow, key=lambda item: -slow_seconds(item)):
        share = load.index(min(load))
        heads[share].append(item)
        load[share] += slow_seconds(item)
    rest = iter([item for item in items if not item.get_closest_marker("slow")])
    ordered, remaining = [], len(items)
    for share, head in enumerate(heads):
        size = remaining // (workers - share)  # as the scheduler cuts its shares
        ordered += head + [item for _, item in zip(range(size - len(head)), rest, strict=False)]
        remaining -= size
    items[:] = ordered + list(rest)


def slow_seconds(item: pytest.Item) -> float:
    return float(item.get_closest_marker("slow").kwargs.get("seconds", 60))


TODAY = date(2026, 11, 23)
# The warehouse's first day in the tests' homes: most of their runs start on it.
FIRST_DAY = date(2026, 10, 1)
SECRET = "sk-live-test-3f9a7c0d-never-print"


def use_environment(patch: pytest.MonkeyPatch, home: Path) -> None:
    """ADWH_HOME at `home`, today fixed, and no real service configured."""
    patch.setenv("ADWH_HOME", str(home))
    patch.setenv("ADWH_TODAY", TODAY.isoformat())
    patch.setenv("ADWH_START_DATE", FIRST_DAY.isoformat())
    for name in ("ADS_API_BASE_URL", "ADS_API_KEY", "ADS_ACCOUNT_IDS", "DAGSTER_HOME"):
        patch.delenv(name, raising=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh ADWH_HOME, today fixed, and no real service configured."""
    target = tmp_path / "adwh-home"
    use_environment(monkeypatch, target)
    return target


@pytest.fixture(scope="session", autouse=True)
def _prepared_homes(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Prepared homes are shared by the suite's workers (tests/prepared.py)."""
    prepared.use_root(tmp_path_factory.getbasetemp())


@contextmanager
def preparing(target: Path) -> Iterator[pytest.MonkeyPatch]:
    """Where a prepared home is made: the environment of the `home` fixture over `target`, and
    the embedded sandbox without the faults the asking test set."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(embedded_service(DEFAULT_PRESET, TODAY), "faults", NO_FAULTS)
        use_environment(patch, target)
        yield patch


def cli_run(argv: list[str]) -> prepared.Builder:
    """A builder of the home `adwh <argv>` writes against the embedded sandbox, in the
    environment of the `home` fixture."""

    def build(target: Path) -> None:
        from launcher.cli import main

        with preparing(target):
            assert main(argv) == 0

    return build


def copy_of_a_run(home: Path, argv: list[str]) -> Path:
    """`home` holding what `adwh <argv>` wrote against the embedded sandbox. The run is made
    once per suite (tests/prepared.py) and copied for each test that asks: tests that read a
    run, or write on top of one, each need a home of their own, not a run of their own (each
    is seconds of Dagster, the service and dbt). Everything in a home is found from
    `ADWH_HOME` when it is opened, so a copy is the run's own."""
    return prepared.copy_of(home, "cli-run", cli_run(argv), argv)


@pytest.fixture
def embedded(home: Path) -> Iterator[SandboxService]:
    """The in-process sandbox the pipeline uses, with its request log emptied and no faults."""
    service = embedded_service(DEFAULT_PRESET, TODAY)
    service.requests.clear()
    service.faults = NO_FAULTS
    yield service
    service.faults = NO_FAULTS


@pytest.fixture
def sandbox() -> SandboxService:
    """A private sandbox for tests that change keys or faults."""
    service = SandboxService("small", TODAY)
    service.add_key(SECRET)
    return service


def make_client(service: SandboxService, key: str = SECRET, **kwargs) -> ServiceClient:
    kwargs.setdefault("retry", RetryPolicy(attempts=12, backoff_base=0.001, backoff_max=0.01))
    return ServiceClient(
        "http://sandbox.invalid", SecretStr(key), transport=SandboxTransport(service), **kwargs
    )


def direct(service: SandboxService, path: str, **params) -> httpx.Response:
    """Ask the sandbox without our client, for expected values computed independently."""
    status, body, _ = service.handle(
        "GET", path, [(k, str(v)) for k, v in params.items()], {"authorization": "Bearer sandbox"}
    )
    return httpx.Response(status, json=body)


@contextmanager
def serving(service: SandboxService) -> Iterator[str]:
    """`service` over real HTTP on a free port of 127.0.0.1, for as long as the block runs."""
    import threading
    import time

    import uvicorn

    from sandbox.app import SandboxApp

    port = free_port()
    server = uvicorn.Server(
        uvicorn.Config(SandboxApp(service), host="127.0.0.1", port=port, log_level="error")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(5)


@pytest.fixture
def served() -> Iterator[tuple[SandboxService, str]]:
    """The sandbox over real HTTP on 127.0.0.1, accepting only SECRET as its key."""
    service = SandboxService("small", TODAY, key=SECRET)
    with serving(service) as url:
        yield service, url


E_MAIL = re.compile(r"[\w.+-]+@[\w-]+\.[\w.-]+")


def e_mails_under(home: Path) -> dict[Path, list[str]]:
    """Every file under `home` holding an e-mail address, each read as its data: gzip pages
    decompressed, Parquet and DuckDB files row by row (their bytes are compressed, and random
    bytes can look like an address), anything else as text. The pseudonym key is skipped."""
    found = {}
    for path in sorted(p for p in home.rglob("*") if p.is_file()):
        if path.parent.name == "secrets":
            continue
        if hits := E_MAIL.findall(_readable(path)):
            found[path] = hits[:3]
    return found


def _readable(path: Path) -> str:
    data = path.read_bytes()
    if data[:2] == b"\x1f\x8b":
        return gzip.decompress(data).decode(errors="replace")
    if path.suffix == ".parquet":
        return repr(pl.read_parquet(path).rows())
    if path.suffix == ".duckdb":
        with duckdb.connect(str(path), read_only=True) as con:
            tables = con.sql("SELECT table_name FROM information_schema.tables").fetchall()
            return repr([con.sql(f'SELECT * FROM "{t}"').fetchall() for (t,) in tables])
    if data[:16] == b"SQLite format 3\x00":  # Dagster's storage: its snapshots are zlib blobs
        return _sqlite_readable(path)
    return data.decode(errors="replace")


def _sqlite_readable(path: Path) -> str:
    """Every value of every table of a SQLite file, a zlib blob decompressed."""
    with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as con:
        tables = con.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
        values = [
            value
            for (table,) in tables
            for row in con.execute(f'SELECT * FROM "{table}"')
            for value in row
        ]
    return "\n".join(_text(value) for value in values)


def _text(value: object) -> str:
    if not isinstance(value, bytes):
        return str(value)
    try:
        return zlib.decompress(value).decode(errors="replace")
    except zlib.error:
        return value.decode(errors="replace")


@pytest.fixture(scope="session")
def s3_endpoint() -> Iterator[str]:
    """A real S3-compatible server (moto's, over HTTP) on 127.0.0.1, in its own process: an
    in-process server would wait on the GIL that delta-rs holds while it calls it."""
    import subprocess
    import sys
    import time

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            httpx.get(endpoint, timeout=1)
            break
        except httpx.TransportError:
            time.sleep(0.1)
    try:
        yield endpoint
    finally:
        server.terminate()
        server.wait(10)


@pytest.fixture
def s3_lake(s3_endpoint: str, monkeypatch: pytest.MonkeyPatch) -> str:
    """`s3://<a fresh bucket>/lake` on the local server, its credentials in the standard AWS
    environment variables (as a user would set them)."""
    import uuid

    import boto3

    env = {
        "AWS_ENDPOINT_URL": s3_endpoint,
        "AWS_ALLOW_HTTP": "true",
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_REGION": "us-east-1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    bucket = f"lake-{uuid.uuid4().hex[:12]}"
    boto3.client("s3", endpoint_url=s3_endpoint).create_bucket(Bucket=bucket)
    return f"s3://{bucket}/lake"
