"""Without PostgreSQL the deployment tests skip and say why, unless CI requires it."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench.deployment import free_port

ROOT = Path(__file__).resolve().parents[2]


def run_deployment_tests(require: bool) -> subprocess.CompletedProcess:
    env = {
        **os.environ,
        "ADWH_TEST_POSTGRES_URL": f"postgresql+psycopg2://postgres@127.0.0.1:{free_port()}",
    }
    env.pop("ADWH_REQUIRE_POSTGRES", None)
    if require:
        env["ADWH_REQUIRE_POSTGRES"] = "1"
    test = "tests/deployment/test_fanout.py::" + (
        "test_a_run_whose_worker_is_killed_is_retried_and_loses_and_duplicates_nothing"
    )
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", test],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.parametrize("require", [False, True])
def test_without_postgres_the_deployment_tests_skip_with_the_reason_or_fail_in_ci(require):
    result = run_deployment_tests(require)
    assert "no PostgreSQL at postgresql+psycopg2://postgres@127.0.0.1:" in result.stdout
    if require:
        assert result.returncode != 0 and "ADWH_REQUIRE_POSTGRES is set" in result.stdout
    else:
        assert result.returncode == 0 and "1 skipped" in result.stdout
