"""The analysts' marts: dbt models (`warehouse/dbt`), built by dbt in the DuckDB file being built.

dbt runs in process (`dbtRunner`): a run pays for parsing, building and testing the models,
not for a second Python and a `dbt --version` (measured on one warehouse: 12.8 s through
dagster-dbt's subprocess, 4.0 s of it `dbt --version`; 6.3 s in process). Dagster reads the
same project's manifest for the assets and checks (`assets/marts.py`). The models are built
in the new file before it is swapped in, never in the file analysts hold open.

What a build asks of dbt follows from what the file holds (`plan`), through dbt's own node
selection:
- a file no build of this project wrote (a new one, or one built by the project as it was
  before a model changed): every model built and every row tested, `--full-refresh` (an
  incremental model's rows of other days were computed by the other project);
- a file this project built: the incremental models over a table the build read again
  recompute those days (`int_product_daily`'s pre-hook deletes them), the views over a table
  read again whole are made again (its columns may have changed), and every test reads the
  rows of the days read again (`macros/tested_rows.sql`). The other views read the new rows as
  they are: dbt would rebuild them identically, so they are kept;
- nothing read again: dbt has nothing to do, and is not run.
"""

import functools
import json
from collections.abc import Collection, Iterable
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock

from warehouse.dbt_project import TARGET, invoke
from warehouse.dbt_sources import LAKE_SOURCE
from warehouse.history_models import SNAPSHOTS_SOURCE
from warehouse.schemas import SNAPSHOTS_SUFFIX

PROJECT_TABLE = "_dbt_project"
# The dbt var naming the first day the tests read (`macros/tested_rows.sql`), passed with
# `--vars` as dagster-open-platform passes its date window to its incremental models.
TESTED_SINCE = "adwh_tested_since"
EVERY_ROW = date(1, 1, 1)


@dataclass(frozen=True)
class NodeResult:
    """A model built or a test run by dbt, or a model dbt had no need to build (`kept`): what
    Dagster reports. `status` is dbt's (success, pass, fail, error …) or `kept`."""

    name: str
    resource_type: str
    model: str | None  # the model a test checks
    status: str
    seconds: float
    failures: int = 0
    message: str = ""

    @property
    def failed(self) -> bool:
        return self.status in {"error", "fail"}

    @classmethod
    def kept(cls, model: str) -> "NodeResult":
        """A model dbt had no need to build: it reads the new rows as it is."""
        return cls(model, "model", None, "kept", 0.0)


class MartError(RuntimeError):
    """A mart failed to build or a mart test failed: the old warehouse stays in place. Carries
    every result of the build, so the failed tests can still be reported."""

    def __init__(self, message: str, results: list[NodeResult]) -> None:
        super().__init__(message)
        self.results = results


@dataclass(frozen=True)
class Plan:
    """What dbt builds in a file with the project whose files have `digest`: the nodes
    `select`ed (dbt's selection syntax; none: every node) but the models `exclude`d, with
    `--full-refresh` or not, its tests reading the rows from `tested_since` on."""

    digest: str
    select: tuple[str, ...]
    full_refresh: bool
    tested_since: date
    exclude: tuple[str, ...] = ()

    @property
    def whole_project(self) -> bool:
        """Every model built from nothing: the file is then the project's (`record_built_by`)."""
        return self.full_refresh and not self.select and not self.exclude


def narrowed(
    planned: Plan | None, models: Collection[str], every_model: Iterable[str]
) -> Plan | None:
    """`planned` for a selection of some `models` (a run of some marts): what it builds of them,
    with their tests; the other models excluded (their tests with them: dbt's eager indirect
    selection) and kept in the file as they were. A file that needed every model built from
    nothing is then not recorded as the project's, so the next whole build makes them all."""
    if planned is None:
        return None
    return replace(planned, exclude=tuple(sorted(set(every_model) - set(models))))


def plan(con: duckdb.DuckDBPyConnection, read_whole: list[str], digest: str) -> Plan | None:
    """What dbt must build with the project of `digest` (`project_digest`) in the file `con`
    holds, after a load that read the tables `read_whole` whole and others by day
    (`_lake_reloads`); None when nothing needs dbt."""
    if built_by(con) != digest:
        return Plan(digest, (), full_refresh=True, tested_since=EVERY_ROW)
    since = first_day_read_again(con)
    if since is None:
        return None
    read = con.execute("SELECT DISTINCT table_name FROM _lake_reloads").fetchall()
    select = [
        "resource_type:test",
        *(f"{source_of(table)}+,config.materialized:incremental" for (table,) in sorted(read)),
        *(f"{source_of(table)}+" for table in sorted(read_whole)),
    ]
    return Plan(digest, tuple(select), full_refresh=False, tested_since=since)


def source_of(table: str) -> str:
    """dbt's selector of the source a warehouse table is: the dated snapshots of a current-state
    table are the `snapshots` source's table of its name (warehouse/history_models.py)."""
    if table.endswith(SNAPSHOTS_SUFFIX):
        return f"source:{SNAPSHOTS_SOURCE}.{table.removesuffix(SNAPSHOTS_SUFFIX)}"
    return f"source:{LAKE_SOURCE}.{table}"


def first_day_read_again(con: duckdb.DuckDBPyConnection) -> date | None:
    """The first day this build read again from the lake (`_lake_reloads`): EVERY_ROW when a
    table was read whole, None when nothing was."""
    return con.execute(
        f"SELECT CASE WHEN bool_or(date IS NULL) THEN DATE '{EVERY_ROW.isoformat()}' "
        "ELSE min(date) END FROM _lake_reloads"
    ).fetchone()[0]


def built_by(con: duckdb.DuckDBPyConnection) -> str | None:
    """The digest of the project that built the models in the file, if any."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {PROJECT_TABLE} (digest VARCHAR)")
    row = con.execute(f"SELECT any_value(digest) FROM {PROJECT_TABLE}").fetchone()
    return row[0] if row else None


def record_built_by(con: duckdb.DuckDBPyConnection, digest: str) -> None:
    con.execute(f"DELETE FROM {PROJECT_TABLE}")
    con.execute(f"INSERT INTO {PROJECT_TABLE} VALUES (?)", [digest])


def _parsed_project(digest: str, catalog: str) -> Any | None:
    """The project as dbt parsed it, for dbt to build from without parsing again: dbt's own
    reuse of a parse (`dbtRunner(manifest)`, "Reusing objects" in its programmatic-invocation
    docs). Parsed once per process and project (dbt's partial parse makes that ~2 s; a parse
    from nothing takes ~20), without the building file's path: dbt drops its partial parse when
    a var or the profile's path changes, and each build names a new file.

    The parse names the models' database after the profile's default file, `warehouse`; the
    building file's `catalog` (DuckDB names it after the file) is the same name, so the parse
    serves it. None, and dbt parses itself, when the names differ or the parse failed."""
    parsed = _parse(digest)
    if parsed is None:
        return None
    models = [node for node in parsed.nodes.values() if node.resource_type == "model"]
    return parsed if all(node.database == catalog for node in models) else None


@functools.cache
def _parse(digest: str) -> Any | None:
    """dbt's parse of the project whose files have `digest` (`project_digest`), in this process."""
    with FileLock(TARGET / "parse.lock"):  # the parse writes the project's target/
        outcome = invoke(["parse", "--target-path", str(TARGET), "--log-path", str(TARGET)])
    return outcome.result if outcome.success else None


def build_marts(building: Path, artifacts: Path, planned: Plan) -> list[NodeResult]:
    """Build and test with dbt the models of `planned` in the DuckDB file `building`; dbt's
    artifacts and log go to `artifacts`. Returns the node results; raises MartError naming
    what failed.

    Both paths are made absolute: dbt reads a relative one against its project folder, and
    `ADWH_HOME` is relative by default (`data`)."""
    building, artifacts = building.resolve(), artifacts.resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    build = ["build", *_arguments(building, artifacts, planned.tested_since)]
    if planned.full_refresh:
        build.append("--full-refresh")
    if planned.select:
        build += ["--select", *planned.select]
    if planned.exclude:
        build += ["--exclude", *planned.exclude]
    # dbt-duckdb opens the file for each node and closes it after (`keep_open: false`,
    # profiles.yml), and a DuckDB file opened anew reads its catalog and is checkpointed when
    # closed. While this connection holds it open, each of dbt's opens joins the database this
    # process has open (DuckDB's instance cache: same path, same configuration, none here),
    # and the file is closed once, when the build is done (~0.5 of ~4 CPU-seconds a new
    # warehouse's build).
    with duckdb.connect(str(building)) as con:
        (catalog,) = con.execute("SELECT current_database()").fetchone()
        outcome = invoke(build, _parsed_project(planned.digest, catalog))
        results = [_result(result) for result in outcome.result or []]
        failed = [f"{r.name}: {r.status} ({r.message})" for r in results if r.failed]
        if outcome.exception is not None or failed:
            reason = outcome.exception or "; ".join(failed)
            raise MartError(f"dbt build failed (log: {artifacts / 'dbt.log'}): {reason}", results)
        if planned.whole_project:
            record_built_by(con, planned.digest)
    return results


def _arguments(building: Path, artifacts: Path, tested_since: date) -> list[str]:
    """What every dbt command of a build is told: the file and the first day its tests read
    (dbt vars: the parse reused across builds holds neither), where its log goes, what the log
    keeps, and no JSON artifacts. The results come back in process; dbt's JSON (a manifest
    written twice, the run results) would cost ~0.5 s a build, for a folder removed when the
    build succeeds. Its log keeps warnings and errors: at dbt's default (debug) it wrote each
    node's SQL and connection events, a fifth of the CPU of a build, to read only when one
    failed. When a build fails, dbt.log stays with each failure's error, and the error names
    every failed node."""
    return [
        "--vars",
        json.dumps({"warehouse_file": str(building), TESTED_SINCE: tested_since.isoformat()}),
        "--no-write-json",
        *("--target-path", str(artifacts), "--log-path", str(artifacts)),
        *("--log-level-file", "warn"),
    ]


def _result(result: Any) -> NodeResult:
    node = result.node
    attached = getattr(node, "attached_node", None)
    return NodeResult(
        node.name,
        str(node.resource_type),
        attached.split(".")[-1] if attached else None,
        str(result.status),
        round(result.execution_time, 3),
        result.failures or 0,
        result.message or "",
    )
