"""A route that fails throughout fails its own tables alone: every other table of the run is
published and built into the warehouse as a clean run's, the run fails naming the account,
the source, the request and the cause in one line, and the next daily run, with the service
healed, fetches the failed source's days again and ends with a clean run's warehouse.

Per account (an agency's client in trouble) in tests/pipeline/test_packed_runs.py; longer and
more varied in `make soak`."""

from datetime import date

import pytest

from bench import scenarios
from sandbox.faults import FaultPlan

# Longer than the lookback: the next daily run must reach back for the failed days itself.
SPAN = (date(2026, 11, 15), date(2026, 11, 22))
WORKFLOWS = {"workflows", "workflow_campaigns", "workflow_performance"}
CASES = {
    # a retired or region-limited endpoint: the workflows list, which the performance needs
    "404": ("/v1/workflows", 404, "source workflows", WORKFLOWS, "/v1/workflows/"),
    # a route failing past every retry
    "503": ("/v1/campaign-metrics", 503, "source campaign_metrics", {"campaign_metrics"}, None),
}


@pytest.mark.parametrize("case", CASES)
def test_a_failing_route_fails_its_tables_alone_and_the_next_daily_run_fills_them(tmp_path, case):
    route, status, source, tables, dated_prefix = CASES[case]
    plan = FaultPlan(broken_routes=((route, status),))
    run = scenarios.isolated_run(tmp_path / "home", SPAN, plan, scenarios.FEW_RETRIES)

    assert run.outcome.code == 1 and scenarios.one_line(run.outcome), run.outcome.err
    assert f"{source}: GET {route}" in run.outcome.line and f": {status} " in run.outcome.line
    assert run.outcome.line.startswith("adwh: account ")
    assert run.differs == tables  # every other table is a clean run's, in the warehouse
    (alert,) = run.alerts
    assert alert.startswith(f"ads-warehouse: run failed: {', '.join(sorted(tables))}\n")
    assert run.healed, run.refill.err
    failed_paths = {p for p in run.asked_from if p.startswith(dated_prefix or route)}
    assert failed_paths and {run.asked_from[p] for p in failed_paths} == {SPAN[0]}
    lookback = {run.asked_from[p] for p in run.asked_from if p not in failed_paths}
    assert lookback == {date(2026, 11, 20)}  # the others: only the lookback


def test_a_day_that_broke_its_contract_is_asked_again_by_the_next_daily_run(tmp_path):
    """Held back, the day keeps what the lake held and is not recorded as held: the next daily
    run reaches back for it, past the lookback."""
    tamper = scenarios.tampered("/v1/campaign-metrics", "2026-11-18", {"currency": "usd"})
    run = scenarios.isolated_run(
        tmp_path / "home", SPAN, config=scenarios.FEW_RETRIES, tamper=tamper
    )
    assert run.outcome.code == 1 and scenarios.one_line(run.outcome)
    assert "campaign_metrics partition 2026-11-18 broke its contract" in run.outcome.line
    assert run.differs == {"campaign_metrics"}
    (alert,) = run.alerts
    assert alert.startswith("ads-warehouse: check failed: campaign_metrics\n")
    assert run.asked_from["/v1/campaign-metrics"] == date(2026, 11, 18)
    assert run.healed, run.refill.err
