"""Dagster's run retries, as its run tags tell them: when a run failed and another is coming.

A run that fails under a retry policy is tagged `dagster/will_retry=true` by its worker, and
the daemon then launches the retry and tags the failed run with its id. Between the two (a few
seconds; longer on a loaded daemon) nothing is queued, yet more data is coming: the warehouse
refresh must not build then, nor `adwh backfill` stop following. A promised retry that never
comes (Dagster refuses one when the run's job backfill has ended, dagster-io/dagster#33846:
why `adwh backfill` launches runs, not a backfill) is given up on after `RETRY_WAIT_SECONDS`,
so neither waits forever.
"""

from collections.abc import Mapping

WILL_RETRY_TAG = "dagster/will_retry"
AUTO_RETRY_TAG = "dagster/auto_retry_run_id"
RETRY_WAIT_SECONDS = 300


def retry_promised(tags: Mapping[str, str]) -> bool:
    """A failed run's tags say Dagster will run it again, and it has not launched the retry."""
    return tags.get(WILL_RETRY_TAG) == "true" and AUTO_RETRY_TAG not in tags


def awaits_retry(tags: Mapping[str, str], ended: float | None, now: float) -> bool:
    """A failed run whose promised retry may still come: within `RETRY_WAIT_SECONDS` of its end
    (`ended` and `now` in seconds since the epoch)."""
    return retry_promised(tags) and now - (ended if ended is not None else now) < RETRY_WAIT_SECONDS
