"""The automation tables (spec 4.9): a key without their scopes still fills the rest of the
warehouse (a whole run), and the warehouse holds what the service served (the library's
extraction over HTTP, built)."""

from datetime import date
from pathlib import Path

import duckdb
import pytest

from launcher.cli import main
from sandbox.service import READ_SCOPES, SandboxService
from tests import library, prepared
from tests.conftest import SECRET, TODAY, serving, use_environment
from warehouse.build import build_warehouse
from warehouse.schemas import TABLES

OPTIONAL = {"workflows:read", "tasks:read", "platform:read"}
SKIPPED = (
    "workflows",
    "workflow_campaigns",
    "workflow_performance",
    "tasks",
    "task_items",
    "platform_changes",
)


def run(url: str, monkeypatch, *argv: str) -> int:
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    return main(list(argv))


def test_a_key_without_the_optional_scopes_fills_everything_else(home, monkeypatch, capsys):
    """`adwh check` says what the key's missing scopes skip; the run skips those tables (a
    warning in the step's log) without a 403, and fills the rest."""
    service = SandboxService("small", TODAY, key="other")
    service.add_key(SECRET, scopes=READ_SCOPES - OPTIONAL)
    with serving(service) as url:
        assert run(url, monkeypatch, "check") == 0
        checked = capsys.readouterr().out
        assert run(url, monkeypatch, "run", "--start", "2026-11-22", "--end", "2026-11-22") == 0
    for scope in OPTIONAL:
        assert f"without {scope} these tables are skipped" in checked
    assert not [r for r in service.requests if r.status == 403]
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        tables = {name for (name,) in con.sql("SELECT table_name FROM information_schema.tables")
                  .fetchall()}  # fmt: skip
        assert con.sql("SELECT count(*) FROM campaign_metrics").fetchall()[0][0] > 0
        for table in set(SKIPPED) & tables:
            assert con.sql(f"SELECT count(*) FROM {table}").fetchall() == [(0,)], table


# Before some campaigns' takeover by a workflow (optimizing_since), up to the day before TODAY.
SPAN = ("2026-09-01", "2026-11-22")
AUTOMATION = (
    "workflows,workflow_campaigns,workflow_performance,tasks,task_items,platform_changes,"
    "campaign_metrics"
)


def run_automation(home: Path) -> None:
    """The automation tables and the campaign metrics they are compared with, over SPAN,
    extracted over HTTP by the library and built (what the run adds is tested above)."""
    service = SandboxService("small", TODAY, key=SECRET)
    with serving(service) as url, pytest.MonkeyPatch.context() as patch:
        use_environment(patch, home)
        first, last = (date.fromisoformat(day) for day in SPAN)
        tables = AUTOMATION.split(",")
        served = {"ADS_API_BASE_URL": url, "ADS_API_KEY": SECRET, "ADWH_START_DATE": SPAN[0]}
        library.succeeded(library.extract(home, first, last, tables, **served))
        build_warehouse(home, library.lake(home), TABLES.values())


@pytest.fixture(scope="module")
def automated() -> Path:
    """The automation tables extracted and built (made once per suite; read only)."""
    return prepared.shared("automation", run_automation, SPAN, AUTOMATION)


def test_the_automation_tables_hold_what_the_service_served(automated):
    home = automated
    account = SandboxService("small", TODAY, key=SECRET).main_account
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:

        def count(sql: str) -> int:
            return con.execute(sql).fetchall()[0][0]

        assert count("SELECT count(*) FROM workflows") == len(account.workflows)
        assert count("SELECT count(*) FROM tasks") == len(account.tasks)
        assert count("SELECT count(*) FROM task_items") == len(account.task_items)
        members = sum(len(m) for m in account.workflow_members.values())
        assert count("SELECT count(*) FROM workflow_campaigns") == members
        served = [r for r in account.platform_changes if SPAN[0] <= r["changed_at"] < "2026-11-23"]
        assert count("SELECT count(*) FROM platform_changes") == len(served)
        assert count("SELECT count(*) FROM platform_changes WHERE actor LIKE '%@%'") == 0
        # Performance is its campaigns' own figures: the same cost per campaign, currency, day.
        assert (
            con.sql(
                "SELECT p.campaign, p.currency, p.date, p.cost FROM workflow_performance p "
                "EXCEPT SELECT campaign, currency, date, cost FROM campaign_metrics"
            ).fetchall()
            == []
        )
        assert count("SELECT count(DISTINCT workflow) FROM workflow_performance") == 3


def test_the_automation_marts_count_from_optimizing_since_and_add_up(automated):
    with duckdb.connect(str(automated / "warehouse.duckdb"), read_only=True) as con:

        def rows(sql: str) -> list[tuple]:
            return con.execute(sql).fetchall()

        # Before optimizing_since the figures are not the workflow's: held, but not in the mart.
        assert (
            rows(
                "SELECT count(*) FILTER (WHERE date < optimizing_since), count(*) "
                "FROM workflow_performance"
            )[0][0]
            > 0
        )
        assert rows(
            "SELECT count(*) FROM workflow_performance WHERE date >= optimizing_since"
        ) == rows("SELECT count(*) FROM mart_workflow_performance")
        assert rows("SELECT count(*) FROM mart_workflow_performance WHERE date < optimizing_since")[
            0
        ] == (0,)
        # Ratios from the row's own sums; the objective's measure beside it.
        assert rows(
            "SELECT count(*) FROM mart_workflow_performance WHERE "
            "acos IS DISTINCT FROM (CASE WHEN sales <> 0 THEN spend / sales END) "
            "OR (objective_type = 'ACOS' AND realized_value IS DISTINCT FROM acos) "
            "OR (objective_type = 'ROAS' AND realized_value IS DISTINCT FROM roas) "
            "OR (objective_type = 'ACOS' AND on_target IS DISTINCT FROM acos <= objective_value)"
        ) == [(0,)]
        # A workflow's spend since it took over, per currency, is its campaigns' own spend.
        assert (
            rows(
                "SELECT campaign, currency, sum(spend) FROM mart_workflow_performance GROUP BY ALL "
                "EXCEPT SELECT m.campaign, m.currency, sum(m.cost) FROM campaign_metrics m "
                "JOIN (SELECT DISTINCT campaign, optimizing_since FROM workflow_performance) p "
                "ON p.campaign = m.campaign AND m.date >= p.optimizing_since GROUP BY ALL"
            )
            == []
        )
        # The funnel adds up to the suggestions, and applied ones are those applied cleanly.
        assert rows(
            "SELECT sum(suggestions), sum(applied), sum(apply_failed), sum(not_applied) "
            "FROM mart_task_funnel"
        ) == rows(
            "SELECT count(*), count(*) FILTER (WHERE applied_at IS NOT NULL AND apply_error IS "
            "NULL), count(apply_error), count(*) FILTER (WHERE applied_at IS NULL AND "
            "apply_error IS NULL) FROM task_items"
        )
        assert rows("SELECT count(*) FROM mart_task_funnel WHERE applied > 0")[0][0] > 0
