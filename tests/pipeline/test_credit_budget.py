"""Credits through `adwh run`: the store change log's reads are counted per table and run (the
summary, Dagster's record), and `ADWH_MAX_CREDITS` stops the run before it passes the budget,
with what it fetched published and the run failed naming the budget."""

import re
from datetime import UTC, date, datetime

import dagster as dg
import polars as pl

from assets.instance import open_instance
from assets.runner import CREDITS_TAG
from launcher.cli import EXIT_FAILED, main
from pipelines.client.windows import extract_windows
from tests.conftest import FIRST_DAY

END = date(2026, 11, 22)


def changed_on(record: dict) -> date:
    return datetime.fromisoformat(record["changed_at"]).astimezone(UTC).date()


def test_a_run_stops_at_its_budget_and_keeps_what_it_fetched(embedded, home, monkeypatch, capsys):
    """Two windows of the store change log: the budget pays the first and part of the second.
    The first is published, the second is not asked past the budget and not published (its
    days stay for the next run), every other table is published, and the run fails naming
    the budget. Two sources are enough (every source stops at the run's one budget): the store
    change log and the campaign metrics beside it."""
    (first, last), (second, _) = extract_windows(FIRST_DAY, END)
    changes = embedded.main_account.platform_changes
    paid = [r for r in changes if first <= changed_on(r) <= last]
    budget = len(paid) + 2
    monkeypatch.setenv("ADWH_MAX_CREDITS", str(budget))

    tables = "platform_changes,campaign_metrics"
    status = main(
        ["run", "--start", FIRST_DAY.isoformat(), "--end", END.isoformat(), "--tables", tables]
    )

    out, err = capsys.readouterr()
    assert status == EXIT_FAILED
    assert f"credit budget is spent ({budget} of ADWH_MAX_CREDITS={budget})" in err
    assert f"credits spent by the run: {budget} of ADWH_MAX_CREDITS={budget}" in out
    lake = home / "lake"
    kept = pl.read_delta(str(lake / "platform_changes"))
    assert sorted(kept["id"]) == sorted(r["id"] for r in paid)
    assert kept["date"].max() < second
    metrics = pl.read_delta(str(lake / "campaign_metrics"))
    assert metrics["date"].min() == FIRST_DAY and metrics["date"].max() == END
    with open_instance() as instance:
        (run,) = instance.get_runs(dg.RunsFilter(job_name="daily"))
        assert run.tags[CREDITS_TAG] == str(budget)
        # Stopped by the budget, the table is failed; what it published is observed.
        assert not instance.fetch_materializations(dg.AssetKey("platform_changes"), limit=1).records
        records = instance.fetch_observations(dg.AssetKey("platform_changes"), limit=1000)
        figures = [r.asset_observation.metadata for r in records.records]
        assert [m["credits"].value for m in figures] == [budget]
        assert [m["rows"].value for m in figures] == [len(paid)]


def test_a_budget_the_run_does_not_reach_changes_nothing(embedded, home, monkeypatch, capsys):
    """The store changes and the reconciliation's groups are all the run pays for (a metrics
    table beside the store change log: every other source is free)."""
    span = (date(2026, 11, 20), END)
    served = [r for r in embedded.main_account.platform_changes if span[0] <= changed_on(r)]
    served = [r for r in served if changed_on(r) <= END]
    monkeypatch.setenv("ADWH_MAX_CREDITS", "100000")

    tables = ["--tables", "platform_changes,campaign_metrics"]
    assert main(["run", "--start", span[0].isoformat(), "--end", END.isoformat(), *tables]) == 0

    out = capsys.readouterr().out
    spent = int(re.search(r"credits spent by the run: (\d+) of ADWH_MAX_CREDITS=100000", out)[1])
    grouped = [r for r in embedded.requests if any(k == "group_by" for k, _ in r.query)]
    assert spent > len(served) > 0 and grouped
    # each table's line and the reconciliation's add up to the run's total (credits: 4th column)
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    parts = [lines[name][3] for name in ("platform_changes", "campaign_metrics")]
    reconciliation = int(lines["(reconciliation)"][1])
    assert reconciliation > 0 and sum(map(int, parts)) + reconciliation == spent
    kept = pl.read_delta(str(home / "lake" / "platform_changes"))
    assert kept.height == len(served)
