"""`adwh backfill`: a range of days for every account, as runs the Dagster daemon queues.

`adwh run` extracts every account in one process; an agency's year of hundreds of accounts needs
many runs instead, each retryable alone, spread over the run queue's workers (one machine or
many, `deploy/`). This hands the work to a running Dagster webserver: per pack of accounts
(`pipelines/fanout.py`: small accounts together, a large one alone), one run of the `extract`
job per chunk of at most 31 days and one of its current-state tables, tagged with the pack and
the key's digest. The warehouse is not part of them: the warehouse_refresh sensor builds it once,
after the last run.

Runs, not a Dagster backfill: Dagster 1.13 marks a job backfill complete once its runs have
ended, even while the daemon has still to retry a failed one, and then refuses the retry because
the backfill is over (dagster-io/dagster#33846, open). A bad day's failed account would stay
missing. Plain runs are retried whatever else ends, and carry the job's name.

Dagster's Python GraphQL client submits a job without an asset selection, so the one mutation is
sent here with httpx, and so are the queries that follow the runs until the warehouse is built:
every run of one `adwh backfill` carries one request tag, which Dagster's retries keep, so one
query finds them all.
"""

import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date

import dagster as dg
import httpx

from assets.partitions import BACKFILL_DAYS_PER_RUN, range_tags
from assets.retries import WILL_RETRY_TAG, awaits_retry, retry_promised
from pipelines.client.windows import split
from pipelines.fanout import ACCOUNTS_TAG, pack_runs
from pipelines.settings import Settings

# The one HTTP the launcher sends, named as the lint's exception: not the service (whose calls
# go through pipelines/client), but the Dagster webserver's GraphQL, which launches and follows
# the runs.
DagsterGraphQL = httpx.Client  # noqa: TID251

# Each run: the job's dated tables over a range of days, or its current-state tables.
LAUNCH_RUN = """
mutation LaunchRun($params: ExecutionParams!) {
  launchRun(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on Error { message }
  }
}
"""
# Where the `extract` job is served: its code location's name is the workspace's choice.
REPOSITORIES = """
{ repositoriesOrError { ... on RepositoryConnection {
    nodes { name location { name } jobs { name } } } } }
"""


class BackfillError(RuntimeError):
    """The webserver is unreachable or refused a run; the message says which and why."""


# The tag every run (and every retry) of one `adwh backfill` carries.
REQUEST_TAG = "adwh/backfill-request"
# Dagster's own run tags (shown in the UI): whether a failed run is to be retried, and by which.
PARENT_RUN_TAG = "dagster/parent_run_id"
# The asset the warehouse build materializes: fresh once it is newer than the last run's end.
WAREHOUSE_ASSET = "warehouse_tables"
REFRESH_SENSOR = "warehouse_refresh"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}

# What `follow` asks: the runs of one request (retries included) and the warehouse's last build.
RUNS = f"""
query Follow($request: String!) {{
  runs: runsOrError(filter: {{tags: [{{key: "{REQUEST_TAG}", value: $request}}]}}) {{
    __typename
    ... on Runs {{ results {{ runId status endTime tags {{ key value }} }} }}
    ... on PythonError {{ message }}
  }}
  warehouse: assetOrError(assetKey: {{path: ["{WAREHOUSE_ASSET}"]}}) {{
    ... on Asset {{ assetMaterializations(limit: 1) {{ timestamp }} }}
  }}
}}
"""
SENSORS = """
query Sensors {
  workspaceOrError {
    ... on Workspace { locationEntries { locationOrLoadError {
      ... on RepositoryLocation { repositories { sensors { name sensorState { status } } } }
    } } }
  }
}
"""


@dataclass(frozen=True)
class Launched:
    """One pack's runs: its dated chunks and its current-state run."""

    accounts: tuple[str, ...]
    run_ids: tuple[str, ...]
    request: str

    @property
    def runs(self) -> int:
        return len(self.run_ids)


@dataclass(frozen=True)
class Run:
    run_id: str
    status: str
    end_time: float | None
    tags: dict[str, str]

    def awaits_retry(self, now: float) -> bool:
        """Failed, and its promised retry may still come (`assets/retries.py`)."""
        return self.status == "FAILURE" and awaits_retry(self.tags, self.end_time, now)

    def lost(self, now: float) -> bool:
        """Ended without success, and no retry follows (none promised, or overdue)."""
        if self.status not in ("FAILURE", "CANCELED"):
            return False
        return self.tags.get(WILL_RETRY_TAG) != "true" or (
            retry_promised(self.tags) and not self.awaits_retry(now)
        )


@dataclass(frozen=True)
class State:
    """Where the runs of one `adwh backfill` are (retries included), and when the warehouse
    was last built."""

    runs: list[Run]
    expected_runs: int  # the runs launched, and the retries Dagster launched since
    warehouse_built: float | None
    now: float  # when it was asked (seconds since the epoch, as the runs' end times)

    @property
    def finished_runs(self) -> int:
        return sum(run.status in FINISHED for run in self.runs)

    @property
    def runs_done(self) -> bool:
        """Every run launched and ended, and no retry still to come."""
        return bool(self.runs) and all(
            run.status in FINISHED and not run.awaits_retry(self.now) for run in self.runs
        )

    @property
    def warehouse_fresh(self) -> bool:
        """Built after the last run ended."""
        last = max((run.end_time or 0 for run in self.runs), default=0)
        return self.runs_done and (self.warehouse_built or 0) > last

    @property
    def lost_runs(self) -> list[Run]:
        return [run for run in self.runs if run.lost(self.now)]

    def summary(self) -> str:
        """The runs in one line: how many succeeded, failed and were run again, failed."""
        succeeded = sum(run.status == "SUCCESS" for run in self.runs)
        retried = sum(run.status == "FAILURE" and not run.lost(self.now) for run in self.runs)
        line = f"runs: {succeeded} succeeded"
        if retried:
            line += f", {retried} failed and were run again"
        if self.lost_runs:
            line += f", {len(self.lost_runs)} failed"
        return line


def launch_backfills(
    settings: Settings, start: date, end: date, accounts: list[str] | None = None
) -> list[Launched]:
    """Per pack of accounts (all the key reaches unless `accounts` are given), the `extract`
    job's dated tables over [start, end] in runs of at most 31 days (the backfill policy's cut),
    and one run of its current-state tables, all under one request tag."""
    from assets.definitions import CURRENT_STATE, DATED

    dated = sorted(DATED.keys)
    current = sorted(CURRENT_STATE.keys)
    chunks = [range_tags(first, last) for first, last in split(start, end, BACKFILL_DAYS_PER_RUN)]
    launched = []
    request = uuid.uuid4().hex[:12]  # short enough for the link to fit a line
    with extract_runs(settings) as launch:
        for tags in pack_runs(settings, (end - start).days + 1, accounts):
            tags = {**tags, REQUEST_TAG: request}
            run_ids = [launch({**tags, **chunk}, dated) for chunk in chunks]
            run_ids.append(launch(tags, current))
            packed = tuple(tags[ACCOUNTS_TAG].split(","))
            launched.append(Launched(packed, tuple(run_ids), request))
    return launched


@contextmanager
def extract_runs(settings: Settings) -> Iterator[Callable[..., str]]:
    """`launch(tags, assets=None)`: a run of the `extract` job (of `assets` only, when given)
    with `tags`, through the webserver at `settings.dagster_url`; its run id."""
    from assets.definitions import extract_job

    url = settings.dagster_url
    with DagsterGraphQL(base_url=url, timeout=60) as client:
        repository = _repository_of(client, url, extract_job.name)

        def launch(tags: dict[str, str], assets: list[dg.AssetKey] | None = None) -> str:
            job = {**repository, "jobName": extract_job.name}
            if assets is not None:
                job["assetSelection"] = [{"path": key.path} for key in assets]
            tagged = [{"key": k, "value": v} for k, v in tags.items()]
            return _launch(client, url, {"selector": job, "executionMetadata": {"tags": tagged}})

        yield launch


def _repository_of(client: DagsterGraphQL, url: str, job: str) -> dict[str, str]:
    """The repository and code location serving `job`."""
    data = _query(client, url, REPOSITORIES, {})
    for node in data["repositoriesOrError"].get("nodes", []):
        if any(j["name"] == job for j in node["jobs"]):
            return {
                "repositoryName": node["name"],
                "repositoryLocationName": node["location"]["name"],
            }
    raise BackfillError(f"{url} serves no job {job!r}: is its code location loaded?")


def _launch(client: DagsterGraphQL, url: str, params: dict) -> str:
    """Launch a run; its id, or a BackfillError saying why the webserver refused it."""
    (result,) = _query(client, url, LAUNCH_RUN, {"params": params}).values()
    if result["__typename"] == "LaunchRunSuccess":
        return result["run"]["runId"]
    raise BackfillError(f"run refused ({result['__typename']}): {result.get('message')}")


def runs_page(url: str, request: str) -> str:
    """The UI's runs page, filtered to one request's runs (the filter its tag links make)."""
    return f"{url}/runs?q[0]=tag:{REQUEST_TAG}={request}"


def follow(settings: Settings, launched: list[Launched]) -> State:
    """The state of the runs `launched` (by one `adwh backfill`), asked of the webserver."""
    with DagsterGraphQL(base_url=settings.dagster_url, timeout=60) as client:
        data = _query(client, settings.dagster_url, RUNS, {"request": launched[0].request})
    runs = [
        Run(r["runId"], r["status"], r["endTime"], {t["key"]: t["value"] for t in r["tags"]})
        for r in _answer(data["runs"], "Runs")["results"]
    ]
    built = (data.get("warehouse") or {}).get("assetMaterializations") or []
    retries = sum(PARENT_RUN_TAG in run.tags for run in runs)  # each a run more than planned
    return State(
        runs=runs,
        expected_runs=sum(pack.runs for pack in launched) + retries,
        warehouse_built=float(built[0]["timestamp"]) / 1000 if built else None,
        now=time.time(),
    )


def refresh_sensor_running(settings: Settings) -> bool:
    """Whether the sensor that builds the warehouse after the runs is on."""
    with DagsterGraphQL(base_url=settings.dagster_url, timeout=60) as client:
        data = _query(client, settings.dagster_url, SENSORS, {})
    entries = (data.get("workspaceOrError") or {}).get("locationEntries") or []
    return any(
        sensor["name"] == REFRESH_SENSOR and sensor["sensorState"]["status"] == "RUNNING"
        for entry in entries
        for repository in (entry.get("locationOrLoadError") or {}).get("repositories") or []
        for sensor in repository["sensors"]
    )


def _answer(answer: dict, expected: str) -> dict:
    if answer["__typename"] != expected:
        raise BackfillError(f"the webserver could not say: {answer.get('message')}")
    return answer


def _query(client: DagsterGraphQL, url: str, query: str, variables: dict) -> dict:
    """One GraphQL request to the webserver at `url`; its data, or a BackfillError saying why
    not."""
    try:
        response = client.post("/graphql", json={"query": query, "variables": variables})
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
    return body["data"]
