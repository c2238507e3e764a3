"""Reading a run's record in words: what the CLI's summary and the alerts say of a run.

Dagster keeps every step failure and check evaluation in the instance; these turn them into
the one line a person needs (our errors already say what went wrong in words).
"""

import re

import dagster as dg

from assets.partitions import RANGE_END_TAG, RANGE_START_TAG
from pipelines.fanout import ACCOUNTS_TAG
from pipelines.notify import Finding
from pipelines.sources import SOURCES
from warehouse.spec import ECONOMICS_LAG_HOURS


def error_line(error: object) -> str:
    """The innermost cause of a step failure, first line only: what the user needs to see."""
    while getattr(error, "cause", None) is not None:
        error = error.cause
    lines = getattr(error, "message", str(error)).strip().splitlines()
    line = lines[0] if lines else "unknown error"
    # Dagster's error text starts with the exception's qualified class name; the user needs
    # what went wrong, which our errors already say in words.
    prefix, _, rest = line.partition(": ")
    cls_name = getattr(error, "cls_name", None)
    return rest if rest and cls_name and prefix.endswith(cls_name) else line


# A step whose sources failed says so in one line (`assets/runner.PairsFailedError`): "N sources
# failed: " then each pair, "account A, source S: cause" or "S: cause", after "; ".
SEVERAL = re.compile(r"^\d+ sources failed: ")
NEXT_PAIR = re.compile(
    r"; (?=(?:account [^,;]+, source )?(?:"
    + "|".join(re.escape(source.name) for source in SOURCES)
    + r"): )"
)


def one_failure_a_line(cause: str) -> str:
    """A step's cause with each failed pair on a line of its own, after the line that says how
    many: what an alert says of a step that failed for several sources."""
    several = SEVERAL.match(cause)
    if several is None:
        return cause
    return "\n".join([several.group().rstrip(), *NEXT_PAIR.split(cause[several.end() :])])


def metadata_value(entry: object) -> object:
    return getattr(entry, "value", entry)


def failed_check(evaluation: dg.AssetCheckEvaluation) -> str:
    """A contract check names the partitions it held back; a reconciliation, its first
    difference; a mart's dbt test, itself."""
    held_back = evaluation.metadata.get("held_back")
    if held_back is not None:
        return str(metadata_value(held_back))
    table = evaluation.asset_key.to_user_string()
    if evaluation.description:
        return f"{table}: {evaluation.description}"
    return f"{table}: dbt test {evaluation.check_name} failed"


# The tag of a run of one partition (a range's are `assets/partitions.py`'s).
PARTITION_TAG = "dagster/partition"


def run_days(run: dg.DagsterRun) -> str:
    """The days a run covered, as its tags say: `first..last`, one day, or the current state."""
    first, last = run.tags.get(RANGE_START_TAG), run.tags.get(RANGE_END_TAG)
    if first and last:
        return first if first == last else f"{first}..{last}"
    return run.tags.get(PARTITION_TAG) or "current state"


def findings(
    instance: dg.DagsterInstance, run: dg.DagsterRun, restated_share: float = 0.1
) -> list[Finding]:
    """What went wrong in `run`, from its record: each table a failed step was to materialize
    and did not (with the step's error, which names the account, source and request; Dagster
    records no per-asset failure event here), each check failed with an error (contracts,
    reconciliation, dbt tests), each column the service started sending, each table whose
    restatements moved more than `restated_share` of a day's money."""
    days, accounts = run_days(run), run.tags.get(ACCOUNTS_TAG, "")
    records = instance.get_records_for_run(run.run_id, of_type=FINDING_EVENTS, limit=100_000)
    found: list[Finding] = []
    planned: dict[str, list[str]] = {}  # per step, the tables it was to materialize
    materialized: set[str] = set()
    causes: dict[str, str] = {}
    for record in records.records:
        event = record.event_log_entry.dagster_event
        if event is None:
            continue
        if event.event_type is dg.DagsterEventType.STEP_FAILURE:
            error = error_line(event.step_failure_data.error)
            causes[event.step_key or ""] = one_failure_a_line(error)
        elif event.event_type is dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED:
            planned.setdefault(event.step_key or "", []).append(event.asset_key.to_user_string())
        elif event.event_type is dg.DagsterEventType.ASSET_CHECK_EVALUATION:
            evaluation = event.event_specific_data
            # A warning (a reconciliation that could not compare, as in every rebuild) is the
            # UI's to show; what is told is what fails the run's exit status too.
            if not evaluation.passed and evaluation.severity is dg.AssetCheckSeverity.ERROR:
                table = evaluation.asset_key.to_user_string()
                cause = check_cause(evaluation)
                found.append(Finding("check failed", table, days, cause, accounts))
        else:
            entry = record.event_log_entry
            reported = entry.asset_materialization or entry.asset_observation
            if entry.asset_materialization:
                materialized.add(reported.asset_key.to_user_string())
            table = reported.asset_key.to_user_string()
            changes = metadata_value(reported.metadata.get("schema_changes", "none"))
            if changes != "none":
                found.append(Finding("schema changed", table, days, str(changes), accounts))
            largest = metadata_value(reported.metadata.get("largest_restatement", "none"))
            if isinstance(largest, dict) and float(largest["share"]) > restated_share:
                cause = restated_cause(largest, restated_share)
                found.append(Finding("restated", table, days, cause, accounts))
    for step, cause in causes.items():
        failed = [t for t in dict.fromkeys(planned.get(step, [])) if t not in materialized]
        for table in failed or [step]:
            found.append(Finding("run failed", table, days, cause, accounts))
    return found


def restated_cause(largest: dict, threshold: float) -> str:
    """A restatement past the threshold, in words: which amount of which day moved how much,
    from what it was; a day that reported none of it was "not reported", never 0."""
    what = (
        f"{largest['column']} of {largest['date']} ({largest['currency']}, account "
        f"{largest['account_id']})"
    )
    if largest.get("held") is not None:
        moved = f"moved {largest['change']} from {largest['held']}"
    else:
        moved = f"moved {largest['change']} from not reported (null)"
    if largest.get("kinds") == ["arrival"]:
        moved += f", first reported past the {ECONOMICS_LAG_HOURS[1]}-hour economics lag"
    share = f"{float(largest['share']):.1%} of the day's"
    return f"{what} {moved}: {share}, past ADWH_ALERT_RESTATED_SHARE {threshold:.1%}"


FINDING_EVENTS = {
    dg.DagsterEventType.STEP_FAILURE,
    dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED,
    dg.DagsterEventType.ASSET_CHECK_EVALUATION,
    dg.DagsterEventType.ASSET_MATERIALIZATION,
    dg.DagsterEventType.ASSET_OBSERVATION,
}


def check_cause(evaluation: dg.AssetCheckEvaluation) -> str:
    """Why a check failed, in words: what it held back, its description, or its failing rows."""
    name, metadata = evaluation.check_name, evaluation.metadata
    if "held_back" in metadata:
        return f"{name}: held back {metadata_value(metadata['held_back'])}"
    if evaluation.description:
        return f"{name}: {evaluation.description}"
    if "failing rows" in metadata:
        return f"{name}: {metadata_value(metadata['failing rows'])} failing rows"
    return f"{name}: failed"
