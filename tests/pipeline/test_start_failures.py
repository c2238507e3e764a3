"""A run that cannot start its work (a refused key, a service that does not answer) fails in
one line before Dagster plans a partition: no run is recorded, so the UI shows nothing failed
that a later good run would have to clear."""

import asyncio
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager

import dagster as dg
import pytest
from pydantic import SecretStr

from assets.instance import open_instance
from bench.deployment import free_port
from bench.scenarios import FEW_RETRIES, adwh, environment, one_line
from launcher.cli import main
from pipelines.client.errors import UnreachableError
from pipelines.client.http import ServiceClient
from tests.conftest import SECRET

# One day of one table: what is recorded does not depend on how much the good run fetches.
TABLE = ["--tables", "campaign_metrics"]
RANGE = ["run", "--start", "2026-11-22", "--end", "2026-11-22", *TABLE]


def runs() -> list[dg.DagsterRun]:
    with open_instance() as instance:
        return instance.get_runs()


@pytest.mark.parametrize("argv", [["run", *TABLE], RANGE], ids=["daily", "range"])
def test_a_refused_key_starts_no_run_and_the_next_good_run_leaves_nothing_failed(
    home, served, monkeypatch, capsys, argv
):
    _, url = served
    monkeypatch.setenv("ADWH_START_DATE", "2026-11-22")  # the daily run's days: one
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", "revoked-" + SECRET)
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("adwh: GET /v1/me: 401 ") and len(err.splitlines()) == 1
    assert runs() == []  # nothing planned, so nothing shown failed
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    assert main(argv) == 0
    assert {run.status for run in runs()} == {dg.DagsterRunStatus.SUCCESS}


def test_an_unreachable_service_fails_naming_its_address_and_starts_no_run(home):
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    failed = adwh(home, RANGE, FEW_RETRIES, ADS_API_BASE_URL=url, ADS_API_KEY=SECRET)
    assert failed.code == 1 and one_line(failed)
    assert failed.line.startswith(f"adwh: cannot reach the service at {url} (GET /v1/me: ")
    assert "cannot connect to 127.0.0.1:" in failed.line
    assert "(gave up after 3 attempts)" in failed.line
    with environment(home):
        assert runs() == []


@contextmanager
def not_answering(how: str) -> Iterator[str]:
    """An address on 127.0.0.1 that takes no answer: `silent`, connections are made and
    nothing comes back on them; `blackholed`, a connection is never made (the listener's queue
    is full, so the kernel drops what asks, as a firewall does)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0 if how == "blackholed" else 8)
        host, port = listener.getsockname()
        plug = socket.create_connection((host, port)) if how == "blackholed" else None
        try:
            yield f"http://{host}:{port}"
        finally:
            if plug:
                plug.close()


@pytest.mark.parametrize("how", ["silent", "blackholed"])
def test_a_service_that_does_not_answer_is_given_up_on_within_the_first_contacts_bound(how):
    """docs/operators.md: a service that does not answer fails `adwh run` after 10 s of asking
    (FIRST_CONTACT_SECONDS), naming its address. That bound held only between attempts, while
    one attempt waited up to a minute for an answer (62 s measured) and 10 s for a connection
    (16 s measured). Here with the client's default timeouts and a bound of 1 s."""
    within = 1.0

    async def first_contact() -> None:
        with not_answering(how) as url:
            async with ServiceClient(url, SecretStr(SECRET)) as client:
                await asyncio.wait_for(client.first_contact("/v1/me", within=within), 5)

    started = time.monotonic()
    with pytest.raises(UnreachableError, match=r"^cannot reach the service at http://127\.0\."):
        asyncio.run(first_contact())
    assert time.monotonic() - started < within + 0.5
