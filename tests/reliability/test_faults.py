"""Faults from the service: every `adwh run` ends with a clean run's warehouse, or, when the
faults never stop, with one line after bounded retries and the previous state untouched.

Faults are switched on the embedded sandbox that `adwh run` uses (seeded: the same plan deals
the same faults to the same request numbers); retries and timeouts are shortened through the
`service` resource's config, so the suite stays fast. Longer and more varied runs: `make soak`.
"""

import asyncio
from pathlib import Path

import httpx
import pytest

from bench import scenarios
from pipelines.client.errors import TransientError
from pipelines.client.http import RetryPolicy
from sandbox.faults import NO_FAULTS, FaultPlan
from tests import library, prepared
from tests.conftest import make_client

FAULTS = {
    "429": FaultPlan(rate_429=0.5, retry_after_seconds=0.001),
    "5xx": FaultPlan(rate_5xx=0.3),
    "slow": FaultPlan(rate_slow=0.08, slow_seconds=30.0),
    "drop": FaultPlan(rate_drop=0.2),
    "truncate": FaultPlan(rate_truncate=0.2),
}


def extract_clean(home: Path) -> None:
    with scenarios.faults(NO_FAULTS):
        library.extract(home, *scenarios.SHORT)


@pytest.mark.parametrize("kind", FAULTS)
def test_an_extraction_under_faults_publishes_what_a_clean_one_does(home, kind):
    """The library's promise (client retries, paging, landing, typing, publishing): every
    source of the short range, under one kind of fault, leaves the lake a clean extraction
    leaves, partition for partition. The whole run under every fault at once is below."""
    clean = prepared.shared("clean-extraction", extract_clean, scenarios.SHORT)
    scenarios.new_home(home, clean)
    counted = scenarios.counting(FAULTS[kind])
    with scenarios.faults(counted):
        outcomes = library.extract(home, *scenarios.SHORT, timeout_seconds=0.2)
    assert not [error for error in outcomes.values() if isinstance(error, BaseException)]
    assert counted.dealt[kind] >= 3  # the faults really happened, and were all overcome
    assert scenarios.lake_digest(home) == scenarios.lake_digest(clean)
    assert scenarios.leftovers(home) == []


def test_a_run_under_every_fault_at_once_over_a_complete_home_changes_nothing(tmp_path):
    """From the previous night's complete state, a faulty re-run ends in the same warehouse:
    what only a whole run proves of faults (Dagster's steps, the warehouse's build)."""
    clean = scenarios.clean_run(scenarios.SHORT)
    home = scenarios.copy_home(tmp_path / "previous", clean)
    plan = FaultPlan(
        rate_429=0.2,
        rate_5xx=0.1,
        rate_slow=0.03,
        slow_seconds=30.0,
        rate_drop=0.05,
        rate_truncate=0.05,
        retry_after_seconds=0.001,
        seed=11,
    )
    run = scenarios.faulty_run(
        home, scenarios.SHORT, plan, scenarios.FAST_RETRIES | scenarios.SHORT_TIMEOUT
    )
    assert run.outcome.code == 0, run.outcome.err
    assert run.identical
    assert sum(n for kind, n in run.dealt.items() if kind != "none") >= 10


@pytest.mark.parametrize(
    ("plan", "fragment"),
    [
        (FaultPlan(rate_5xx=1.0), "503"),
        (FaultPlan(rate_429=1.0, retry_after_seconds=0.001), "429"),
        (FaultPlan(rate_drop=1.0), "RemoteProtocolError"),
        (FaultPlan(rate_truncate=1.0), "not complete JSON"),
        (FaultPlan(rate_slow=1.0, slow_seconds=30.0), "no answer within"),
    ],
    ids=["5xx", "429", "drop", "truncate", "slow"],
)
def test_faults_that_never_stop_end_in_one_line_and_the_previous_state(tmp_path, plan, fragment):
    clean = scenarios.clean_run(scenarios.SHORT)
    home = scenarios.copy_home(tmp_path / "previous", clean)
    before = scenarios.file_state(home)
    # Every request meets the fault, so a tiny deadline cannot cut a healthy answer short.
    run = scenarios.faulty_run(
        home, scenarios.SHORT, plan, scenarios.FEW_RETRIES | {"timeout_seconds": 0.05}
    )
    assert run.outcome.code == 1
    assert scenarios.one_line(run.outcome), run.outcome.err
    assert fragment in run.outcome.line and "gave up after 3 attempts" in run.outcome.line
    assert "pipelines." not in run.outcome.line  # words, not a class name
    assert run.intact
    assert scenarios.file_state(home) == before  # not one lake file or the warehouse touched


def test_the_read_timeout_holds_whatever_the_transport(sandbox):
    """httpx enforces its read timeout only on network transports, and only per chunk read:
    the client bounds each attempt itself, so a slow answer is abandoned and retried. Were it
    not, the answer would come after 30 s and succeed: the error is the proof."""
    sandbox.faults = FaultPlan(rate_slow=1.0, slow_seconds=30.0)

    async def go():
        async with make_client(
            sandbox,
            timeout=httpx.Timeout(scenarios.SHORT_TIMEOUT["timeout_seconds"]),
            retry=RetryPolicy(attempts=2, backoff_base=0.001, backoff_max=0.001),
        ) as client:
            await client.get("/v1/me")

    with pytest.raises(TransientError, match="no answer within"):
        asyncio.run(go())
