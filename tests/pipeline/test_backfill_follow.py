"""When `adwh backfill` stops following its runs: every run ended and no retry to come, then
the warehouse built after the last of them; and what it says of them. (The whole, against a
real deployment whose run is killed and retried: tests/deployment/test_fanout.py.)"""

from assets.retries import AUTO_RETRY_TAG, RETRY_WAIT_SECONDS, WILL_RETRY_TAG
from launcher.backfill import PARENT_RUN_TAG, Run, State

NOW = 30.0  # when the state is asked: the runs below ended at 10 and 20


def run(status: str, end: float | None = 10.0, **tags: str) -> Run:
    return Run(f"r{len(tags)}{status}", status, end, tags)


def state(*runs: Run, built: float | None = None, now: float = NOW) -> State:
    return State(list(runs), expected_runs=len(runs), warehouse_built=built, now=now)


def test_runs_are_done_when_every_one_ended_and_none_awaits_its_retry():
    assert not state().runs_done  # nothing launched yet
    assert not state(run("SUCCESS"), run("STARTED", None)).runs_done
    assert not state(run("QUEUED", None)).runs_done
    awaiting = run("FAILURE", **{WILL_RETRY_TAG: "true"})
    assert not state(run("SUCCESS"), awaiting).runs_done
    retried = run("FAILURE", **{WILL_RETRY_TAG: "true", AUTO_RETRY_TAG: "r9"})
    retry = run("SUCCESS", 20.0, **{PARENT_RUN_TAG: "r1"})
    assert state(retried, retry).runs_done
    assert state(run("FAILURE", **{WILL_RETRY_TAG: "false"})).runs_done


def test_the_warehouse_is_fresh_once_built_after_the_last_run_ended():
    retried = run("FAILURE", 10.0, **{WILL_RETRY_TAG: "true", AUTO_RETRY_TAG: "r9"})
    retry = run("SUCCESS", 20.0, **{PARENT_RUN_TAG: "r1"})
    assert not state(retried, retry, built=None).warehouse_fresh
    assert not state(retried, retry, built=15.0).warehouse_fresh  # before the retry ended
    assert state(retried, retry, built=21.0).warehouse_fresh
    assert not state(run("STARTED", None), built=99.0).warehouse_fresh


def test_the_summary_tells_runs_run_again_from_runs_lost():
    retried = run("FAILURE", **{WILL_RETRY_TAG: "true", AUTO_RETRY_TAG: "r9"})
    lost = run("FAILURE", **{WILL_RETRY_TAG: "false"})
    canceled = run("CANCELED")
    done = state(run("SUCCESS"), retried, run("SUCCESS", **{PARENT_RUN_TAG: "x"}), lost, canceled)
    assert done.summary() == "runs: 2 succeeded, 1 failed and were run again, 2 failed"
    assert done.lost_runs == [lost, canceled]
    assert state(run("SUCCESS")).summary() == "runs: 1 succeeded"


def test_a_promised_retry_that_never_comes_is_waited_for_a_while_then_told_as_failed():
    """Dagster tagged the run as to be retried and launched no retry: `adwh backfill` must not
    wait forever (Dagster 1.13 refuses the retry of a run whose job backfill ended first)."""
    promised = run("FAILURE", 10.0, **{WILL_RETRY_TAG: "true"})
    waiting = state(run("SUCCESS"), promised, now=10.0 + RETRY_WAIT_SECONDS - 1)
    assert not waiting.runs_done and waiting.lost_runs == []
    overdue = state(run("SUCCESS"), promised, now=10.0 + RETRY_WAIT_SECONDS)
    assert overdue.runs_done and overdue.lost_runs == [promised]
    assert overdue.summary() == "runs: 1 succeeded, 1 failed"
