"""What fails fails alone: three sources broken three ways in one run (a route answering 404,
a route failing past its retries, a day breaking its contract). Every other table of the run
is published and built into the warehouse as a clean run's, the run fails naming each
account, source, request and cause in one line, each failure is alerted, and the next daily
run, with the service healed, fetches each failed source's days again (past the lookback) and
ends with a clean run's warehouse.

Per account (an agency's client in trouble) in tests/pipeline/test_packed_runs.py; each case
alone, with the budget, a revoked key and an unreachable service, in `make soak`."""

from datetime import date

import pytest

from bench import scenarios
from sandbox.faults import FaultPlan

# Longer than the lookback: the next daily run must reach back for the failed days itself.
SPAN = (date(2026, 11, 18), date(2026, 11, 22))
BROKEN_DAY = date(2026, 11, 19)
PLAN = FaultPlan(
    broken_routes=(
        # a retired or region-limited endpoint: the workflows list, which the performance needs
        ("/v1/workflows", 404),
        # a route failing past every retry
        ("/v1/campaign-metrics", 503),
    )
)
# a day of one source breaking its contract (a lowercase currency)
TAMPER = scenarios.tampered("/v1/adgroup-metrics", BROKEN_DAY.isoformat(), {"currency": "usd"})
WORKFLOWS = {"workflows", "workflow_campaigns", "workflow_performance"}


@pytest.mark.timeout(600)  # 110-330 s in the loaded suite: past the default 300 s on a slow day
@pytest.mark.slow(seconds=110)
def test_what_fails_fails_alone_is_told_and_the_next_daily_run_fills_it(tmp_path):
    run = scenarios.isolated_run(tmp_path / "home", SPAN, PLAN, scenarios.FEW_RETRIES, TAMPER)

    assert run.outcome.code == 1 and scenarios.one_line(run.outcome), run.outcome.err
    line = run.outcome.line
    assert line.startswith("adwh: ") and line.count("account ") >= 3
    assert "source workflows: GET /v1/workflows?limit=100: 404 " in line
    assert "source campaign_metrics: GET /v1/campaign-metrics?" in line and ": 503 " in line
    # every other table is a clean run's, in the warehouse (the workflows' snapshots too)
    snapshots = {"workflows_snapshots", "workflow_campaigns_snapshots"}
    assert run.differs == {*WORKFLOWS, *snapshots, "campaign_metrics", "adgroup_metrics"}
    check, failed = sorted(run.alerts)
    assert check.startswith("ads-warehouse: check failed: adgroup_metrics\n")
    assert str(BROKEN_DAY) in check and "contract: held back" in check
    tables = ", ".join(sorted({*WORKFLOWS, "campaign_metrics"}))
    assert failed.startswith(f"ads-warehouse: run failed: {tables}\n")

    assert run.healed, run.refill.err
    asked = run.asked_from
    assert asked["/v1/campaign-metrics"] == SPAN[0]
    performance = {asked[p] for p in asked if p.startswith("/v1/workflows/")}
    assert performance == {SPAN[0]}
    assert asked["/v1/adgroup-metrics"] == BROKEN_DAY
    failing = {"/v1/campaign-metrics", "/v1/adgroup-metrics"}
    others = {asked[p] for p in asked if p not in failing and not p.startswith("/v1/workflows/")}
    assert others == {date(2026, 11, 20)}  # the others: only the lookback
