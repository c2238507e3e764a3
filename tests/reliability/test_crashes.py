"""Crashes and concurrent runs: `adwh run` SIGKILLed mid-write, or started twice on one home.

A kill can land anywhere, so the tests aim it where damage would be possible: while the lake's
Delta tables are being written and committed, and while warehouse.duckdb is being built. After
each kill the lake's current versions hold only whole partitions (each equal to a clean run's)
and no partition published before is missing; the warehouse is absent, the previous one, or a
clean run's. A reader process polls the lake (through its Delta log) and the DuckDB file all
along and must never see anything partial. The next run completes and ends with a clean run's
warehouse.
"""

import time

import pytest

from bench import scenarios


# Four runs and a reader process, over the three days the fault tests run (their clean run is
# the suite's one): a kill after 30 of the run's ~80 partition files still lands mid-write.
@pytest.mark.timeout(600)
@pytest.mark.slow(seconds=120)
def test_killed_while_writing_the_lake_then_while_building_duckdb_nothing_is_lost(tmp_path):
    """The first night's run dies mid-lake; the next completes. A later run dies while
    building the DuckDB file: the previous warehouse stays as it was, and the next completes.
    A reader polls the lake and the DuckDB file throughout (the warehouse from the first
    recovery on). What only it proves: a crash of the real process, at the two places where
    damage is possible, with a reader in another process watching."""
    clean = scenarios.clean_run(scenarios.SHORT)
    home = scenarios.new_home(tmp_path / "home", clean)
    with scenarios.reader(home, clean, tmp_path) as seen:
        kills, damage, outcome = scenarios.kill_and_recover(
            home, scenarios.SHORT, [("lake write", scenarios.partitions_published(30))], tmp_path
        )
        assert outcome.code == 0, outcome.err
        warehouse = scenarios.file_state(home)[scenarios.WAREHOUSE]
        # The build reads every table of the lake whatever a run fetched: runs of one table
        # reach it sooner, and the last one ends with a clean run's warehouse all the same.
        more_kills, more_damage, outcome = scenarios.kill_and_recover(
            home,
            scenarios.SHORT,
            [("DuckDB build", scenarios.building)],
            tmp_path,
            between=lambda: scenarios.file_state(home)[scenarios.WAREHOUSE] == warehouse,
            extra=("--tables", "campaign_metrics"),
        )
    assert all(kill.killed for kill in kills + more_kills), kills + more_kills
    assert damage + more_damage == []
    assert outcome.code == 0, outcome.err
    assert scenarios.warehouse_digest(home) == scenarios.warehouse_digest(clean)
    assert scenarios.lake_digest(home) == scenarios.lake_digest(clean)
    assert scenarios.leftovers(home) == []
    assert seen.problems == [], seen.problems
    assert seen.reads > 0 and seen.warehouse_reads > 0


def test_a_second_run_on_the_same_home_refuses_in_one_line_and_corrupts_nothing(tmp_path):
    clean = scenarios.clean_run(scenarios.SHORT)
    home = scenarios.new_home(tmp_path / "home", clean)
    first = scenarios.spawn(home, scenarios.run_args(scenarios.SHORT), tmp_path / "first.log")
    try:
        deadline = time.monotonic() + 60
        while not scenarios.pages_landed(home) and time.monotonic() < deadline:
            assert first.poll() is None, (tmp_path / "first.log").read_text()
            time.sleep(0.005)
        second = scenarios.adwh(home, scenarios.run_args(scenarios.SHORT))
        assert first.poll() is None, "the first run ended before the second started"
        assert first.wait(120) == 0, (tmp_path / "first.log").read_text()
    finally:
        scenarios.stop(first)
    assert second.code == 2
    assert scenarios.one_line(second) and "another adwh run is using" in second.line
    assert scenarios.warehouse_digest(home) == scenarios.warehouse_digest(clean)
    assert scenarios.lake_digest(home) == scenarios.lake_digest(clean)
