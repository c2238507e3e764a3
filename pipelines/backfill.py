"""`adwh backfill`: a range of days for every account, as Dagster backfills the daemon runs.

`adwh run` extracts every account in one process; an agency's year of hundreds of accounts needs
many runs instead, each retryable alone, spread over the run queue's workers (one machine or
many, `deploy/`). This hands the work to a running Dagster webserver: one backfill per pack of
accounts (`pipelines/fanout.py`: small accounts together, a large one alone), tagged with the
pack and the key's digest, whose backfill policy cuts it into runs of at most 31 days. The
warehouse is not part of them: the warehouse_refresh sensor builds it once, after the last run.

Dagster's Python GraphQL client launches jobs but not backfills, so the one mutation is sent
here with httpx.
"""

from dataclasses import dataclass
from datetime import date, timedelta

import httpx

from pipelines.fanout import ACCOUNTS_TAG, pack_runs
from pipelines.partitions import BACKFILL_DAYS_PER_RUN
from pipelines.settings import Settings

LAUNCH_BACKFILL = """
mutation LaunchBackfill($params: LaunchBackfillParams!) {
  launchPartitionBackfill(backfillParams: $params) {
    __typename
    ... on LaunchBackfillSuccess { backfillId }
    ... on Error { message }
  }
}
"""


class BackfillError(RuntimeError):
    """The webserver is unreachable or refused a backfill; the message says which and why."""


@dataclass(frozen=True)
class Launched:
    accounts: tuple[str, ...]
    backfill_id: str
    runs: int


def launch_backfills(
    settings: Settings, start: date, end: date, accounts: list[str] | None = None
) -> list[Launched]:
    """One backfill of every table over [start, end] per pack of accounts (all the key reaches
    unless `accounts` are given)."""
    from pipelines.definitions import EXTRACTION_ASSETS

    days = [(start + timedelta(days=i)).isoformat() for i in range((end - start).days + 1)]
    tables = [{"path": key.path} for asset in EXTRACTION_ASSETS for key in sorted(asset.keys)]
    # The days cut by the backfill policy, and one run of the current-state tables.
    runs = -(-len(days) // BACKFILL_DAYS_PER_RUN) + 1
    launched = []
    with httpx.Client(base_url=settings.dagster_url, timeout=60) as client:
        for tags in pack_runs(settings, len(days), accounts):
            params = {
                "assetSelection": tables,
                "partitionNames": days,
                "tags": [{"key": k, "value": v} for k, v in tags.items()],
                "title": f"adwh backfill {start}..{end}",
            }
            backfill_id = _launch(client, settings.dagster_url, params)
            launched.append(Launched(tuple(tags[ACCOUNTS_TAG].split(",")), backfill_id, runs))
    return launched


def _launch(client: httpx.Client, url: str, params: dict) -> str:
    try:
        response = client.post(
            "/graphql", json={"query": LAUNCH_BACKFILL, "variables": {"params": params}}
        )
    except httpx.TransportError as error:
        raise BackfillError(
            f"no Dagster webserver at {url} (ADWH_DAGSTER_URL): {error}; start one (make dagster, "
            "or deploy/) or run the range in this process with adwh run --start … --end …"
        ) from None
    if response.status_code != 200:
        raise BackfillError(f"{url}/graphql answered HTTP {response.status_code}")
    body = response.json()
    if body.get("errors"):
        raise BackfillError(f"{url}/graphql: {body['errors'][0].get('message')}")
    result = body["data"]["launchPartitionBackfill"]
    if result["__typename"] != "LaunchBackfillSuccess":
        raise BackfillError(f"backfill refused ({result['__typename']}): {result.get('message')}")
    return result["backfillId"]
