"""The production deployment on this machine (`bench/deployment.py`): PostgreSQL, a code server,
the webserver and the daemon, as `deploy/compose.yaml` runs them.

PostgreSQL is the machine's (127.0.0.1:5432, trust authentication); each test gets a database
of its own. Without a server the tests skip with the reason, unless ADWH_REQUIRE_POSTGRES is
set (`.ci/run` sets it): then they fail, so CI never passes by skipping them.

deploy/compose.yaml reaches PostgreSQL through PgBouncer; a test parametrized with
`dagster_database="pgbouncer"` does too (compose's pool settings, `bench.deployment.pooler`).
The system programs the tests run (PgBouncer, Caddy) are found by `required_program`: a skip
naming the program and its package where it is missing, a failure under ADWH_REQUIRE_POSTGRES,
for `.ci/run` installs every program of `.ci/packages` first.
"""

import os
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path

import pytest

from bench.deployment import fresh_database, installed, pooler

# The server the tests use; another (or none) with ADWH_TEST_POSTGRES_URL.
POSTGRES = os.environ.get("ADWH_TEST_POSTGRES_URL", "postgresql+psycopg2://postgres@127.0.0.1:5432")


def required_program(program: str, purpose: str) -> str:
    """The machine's `program`, or a skip saying what it is for and how to install it (a
    failure in CI, where every deployment test runs). tests/test_ci_packages.py checks that
    `.ci/packages` lists every program asked for here."""
    found = installed(program)
    if found is None:
        reason = (
            f"no {program} on this machine for {purpose} (install it: sudo .ci/install-packages)"
        )
        if os.environ.get("ADWH_REQUIRE_POSTGRES"):
            pytest.fail(reason + " (ADWH_REQUIRE_POSTGRES is set)")
        pytest.skip(reason)
    return found


@pytest.fixture(scope="session")
def postgres_server() -> str:
    """The server's URL, or a skip (a failure under ADWH_REQUIRE_POSTGRES)."""
    import sqlalchemy

    try:
        with sqlalchemy.create_engine(f"{POSTGRES}/postgres").connect():
            return POSTGRES
    except sqlalchemy.exc.OperationalError as error:
        reason = f"no PostgreSQL at {POSTGRES} for the deployment tests: {error.orig}"
        if os.environ.get("ADWH_REQUIRE_POSTGRES"):
            pytest.fail(reason + " (ADWH_REQUIRE_POSTGRES is set)")
        pytest.skip(reason)


@pytest.fixture(scope="session")
def caddy() -> str:
    """The machine's Caddy, which deploy/proxy/Caddyfile runs on."""
    return required_program("caddy", "the login tests")


@pytest.fixture
def dagster_database(
    postgres_server: str,
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> Iterator[str]:
    """A fresh database for one test's Dagster instance, dropped after it; reached directly, or
    through PgBouncer when the test is parametrized with "pgbouncer"."""
    via = getattr(request, "param", "direct")
    if via == "pgbouncer":
        required_program("pgbouncer", "the pooled deployment test")
    with fresh_database(postgres_server) as database:
        reach = pooler(database, tmp_path / "pgbouncer") if via == "pgbouncer" else nullcontext()
        with reach as pooled:
            url = pooled or database
            monkeypatch.setenv("ADWH_DAGSTER_PG_URL", url)
            yield url
