"""A run that cannot start its work (a refused key, a service that does not answer) fails in
one line before Dagster plans a partition: no run is recorded, so the UI shows nothing failed
that a later good run would have to clear."""

import dagster as dg
import pytest

from assets.cli import main
from assets.instance import open_instance
from bench.deployment import free_port
from bench.scenarios import FEW_RETRIES, adwh, environment, one_line
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
