"""`adwh backfill`: a range of days for every account, as Dagster backfills the daemon runs.

`adwh run` extracts every account in one process; an agency's year of hundreds of accounts needs
many runs instead, each retryable alone, spread over the run queue's workers (one machine or
many, `deploy/`). This hands the work to a running Dagster webserver: one backfill per pack of
accounts (`pipelines/fanout.py`: small accounts together, a large one alone), tagged with the
pack and the key's digest, whose backfill policy cuts it into runs of at most 31 days. The
warehouse is not part of them: the warehouse_refresh sensor builds it once, after the last run.

Dagster's Python GraphQL client launches jobs but not backfills, so the one mutation is sent
here with httpx, and so are the queries that follow the runs until the warehouse is built:
every backfill of one `adwh backfill` carries one request tag, which Dagster's retries of its
runs keep, so one query finds them all.
"""

import time
import uuid
from dataclasses import dataclass
from datetime import date, timedelta

import httpx

from assets.partitions import BACKFILL_DAYS_PER_RUN
from assets.retries import WILL_RETRY_TAG, awaits_retry, retry_promised
from pipelines.fanout import ACCOUNTS_TAG, pack_runs
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


# The current-state tables have no partition: one run of the same job, beside the backfill.
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
    """The webserver is unreachable or refused a backfill; the message says which and why."""


# The tag every backfill (and so every run and retry) of one `adwh backfill` carries.
REQUEST_TAG = "adwh/backfill-request"
# Dagster's own run tags (shown in the UI): whether a failed run is to be retried, and by which.
PARENT_RUN_TAG = "dagster/parent_run_id"
# The asset the warehouse build materializes: fresh once it is newer than the last run's end.
WAREHOUSE_ASSET = "warehouse_tables"
REFRESH_SENSOR = "warehouse_refresh"
FINISHED = {"SUCCESS", "FAILURE", "CANCELED"}
STILL_LAUNCHING = {"REQUESTED", "CANCELING", "FAILING"}

# What `follow` asks: the runs of one request (retries included), the warehouse's last build,
# and each backfill's status (one aliased field per backfill: the API filters none by id).
RUNS = f"""
  runs: runsOrError(filter: {{tags: [{{key: "{REQUEST_TAG}", value: $request}}]}}) {{
    __typename
    ... on Runs {{ results {{ runId status endTime tags {{ key value }} }} }}
    ... on PythonError {{ message }}
  }}
  warehouse: assetOrError(assetKey: {{path: ["{WAREHOUSE_ASSET}"]}}) {{
    ... on Asset {{ assetMaterializations(limit: 1) {{ timestamp }} }}
  }}
"""
BACKFILL = """
  {name}: partitionBackfillOrError(backfillId: ${name}) {{
    __typename
    ... on PartitionBackfill {{ status }}
    ... on PythonError {{ message }}
    ... on BackfillNotFoundError {{ message }}
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
    accounts: tuple[str, ...]
    backfill_id: str
    runs: int
    request: str


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
    """Where the backfills of one `adwh backfill` are: their runs (retries included), and
    when the warehouse was last built."""

    launching: bool  # a backfill still launching runs
    runs: list[Run]
    expected_runs: int  # the runs the backfills cut, and the retries launched
    warehouse_built: float | None
    now: float  # when it was asked (seconds since the epoch, as the runs' end times)

    @property
    def finished_runs(self) -> int:
        return sum(run.status in FINISHED for run in self.runs)

    @property
    def runs_done(self) -> bool:
        """Every run launched and ended, and no retry still to come."""
        return (
            not self.launching
            and bool(self.runs)
            and all(run.status in FINISHED and not run.awaits_retry(self.now) for run in self.runs)
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
    """Per pack of accounts (all the key reaches unless `accounts` are given), one backfill of
    the `extract` job's dated tables over [start, end] and one run of its current-state
    tables, all under one request tag.

    A backfill of the job's partition set, as the UI launches one from the job's page, not of
    assets: the runs then carry the job's name (an asset backfill's are Dagster's implicit
    `__ASSET_JOB`)."""
    from assets.definitions import CURRENT_STATE, DATED, extract_job

    days = [(start + timedelta(days=i)).isoformat() for i in range((end - start).days + 1)]
    dated = [{"path": key.path} for key in sorted(DATED.keys)]
    current = [{"path": key.path} for key in sorted(CURRENT_STATE.keys)]
    # The days cut by the backfill policy, and the run of the current-state tables.
    runs = -(-len(days) // BACKFILL_DAYS_PER_RUN) + 1
    launched = []
    request = uuid.uuid4().hex
    url = settings.dagster_url
    with httpx.Client(base_url=url, timeout=60) as client:
        repository = _repository_of(client, url, extract_job.name)
        for tags in pack_runs(settings, len(days), accounts):
            tagged = [{"key": k, "value": v} for k, v in {**tags, REQUEST_TAG: request}.items()]
            backfill = {
                "selector": {
                    "partitionSetName": f"{extract_job.name}_partition_set",
                    "repositorySelector": repository,
                },
                "assetSelection": dated,
                "partitionNames": days,
                "tags": tagged,
                "title": f"adwh backfill {start}..{end}",
            }
            backfill_id = _launch(client, url, LAUNCH_BACKFILL, backfill)
            state = {
                "selector": {**repository, "jobName": extract_job.name, "assetSelection": current},
                "executionMetadata": {"tags": tagged},
            }
            _launch(client, url, LAUNCH_RUN, state)
            packed = tuple(tags[ACCOUNTS_TAG].split(","))
            launched.append(Launched(packed, backfill_id, runs, request))
    return launched


def _repository_of(client: httpx.Client, url: str, job: str) -> dict[str, str]:
    """The repository and code location serving `job`."""
    data = _query(client, url, REPOSITORIES, {})
    for node in data["repositoriesOrError"].get("nodes", []):
        if any(j["name"] == job for j in node["jobs"]):
            return {
                "repositoryName": node["name"],
                "repositoryLocationName": node["location"]["name"],
            }
    raise BackfillError(f"{url} serves no job {job!r}: is its code location loaded?")


def _launch(client: httpx.Client, url: str, mutation: str, params: dict) -> str:
    """Launch a backfill or a run; its id, or a BackfillError saying why the webserver
    refused it."""
    (result,) = _query(client, url, mutation, {"params": params}).values()
    if result["__typename"] == "LaunchBackfillSuccess":
        return result["backfillId"]
    if result["__typename"] == "LaunchRunSuccess":
        return result["run"]["runId"]
    raise BackfillError(f"backfill refused ({result['__typename']}): {result.get('message')}")


def follow(settings: Settings, launched: list[Launched]) -> State:
    """The state of the backfills `launched` (of one `adwh backfill`), asked of the webserver."""
    ids = {f"b{i}": backfill.backfill_id for i, backfill in enumerate(launched)}
    declared = "".join(f", ${name}: String!" for name in ids)
    fields = "".join(BACKFILL.format(name=name) for name in ids)
    query = f"query Follow($request: String!{declared}) {{{RUNS}{fields}}}"
    variables = {"request": launched[0].request, **ids}
    with httpx.Client(base_url=settings.dagster_url, timeout=60) as client:
        data = _query(client, settings.dagster_url, query, variables)
    statuses = [_answer(data[name], "PartitionBackfill")["status"] for name in ids]
    runs = [
        Run(r["runId"], r["status"], r["endTime"], {t["key"]: t["value"] for t in r["tags"]})
        for r in _answer(data["runs"], "Runs")["results"]
    ]
    built = (data.get("warehouse") or {}).get("assetMaterializations") or []
    retries = sum(PARENT_RUN_TAG in run.tags for run in runs)  # each a run more than planned
    return State(
        launching=any(status in STILL_LAUNCHING for status in statuses),
        runs=runs,
        expected_runs=sum(b.runs for b in launched) + retries,
        warehouse_built=float(built[0]["timestamp"]) / 1000 if built else None,
        now=time.time(),
    )


def refresh_sensor_running(settings: Settings) -> bool:
    """Whether the sensor that builds the warehouse after the runs is on."""
    with httpx.Client(base_url=settings.dagster_url, timeout=60) as client:
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


def _query(client: httpx.Client, url: str, query: str, variables: dict) -> dict:
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
