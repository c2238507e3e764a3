"""The analysts' marts: dbt models (`warehouse/dbt`), built in the DuckDB file being built.

dbt runs in process (`dbtRunner`): a run pays for parsing, building and testing the models,
not for a second Python and a `dbt --version` (measured on one warehouse: 12.8 s through
dagster-dbt's subprocess, 4.0 s of it `dbt --version`; 6.3 s in process). Dagster reads the
same project's manifest for the assets and checks (`assets/marts.py`). The models are built
in the new file before it is swapped in, never in the file analysts hold open.

Incremental models (`int_product_daily`) recompute only the days the build read again. Their
rows of other days were computed by the project as it was then: a build whose project differs
from the one that built the file (`_dbt_project`) recomputes them all (dbt's --full-refresh).

dbt runs only when a build needs it (`warehouse/build.py` decides); its compiled SQL, kept
here, serves the other builds of the same project (`warehouse/compiled.py`).
"""

import functools
import json
from pathlib import Path
from typing import Any

import duckdb
from filelock import FileLock

from warehouse import compiled
from warehouse.compiled import EVERY_ROW, MartError, NodeResult
from warehouse.dbt_project import TARGET, invoke, project_digest

PROJECT_TABLE = "_dbt_project"


def built_by(con: duckdb.DuckDBPyConnection) -> str | None:
    """The digest of the project that built the models in the file, if any."""
    con.execute(f"CREATE TABLE IF NOT EXISTS {PROJECT_TABLE} (digest VARCHAR)")
    row = con.execute(f"SELECT any_value(digest) FROM {PROJECT_TABLE}").fetchone()
    return row[0] if row else None


def record_built_by(con: duckdb.DuckDBPyConnection, digest: str) -> None:
    con.execute(f"DELETE FROM {PROJECT_TABLE}")
    con.execute(f"INSERT INTO {PROJECT_TABLE} VALUES (?)", [digest])


def _tables(con: duckdb.DuckDBPyConnection) -> set[str]:
    return {row[0] for row in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}


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


def build_marts(building: Path, artifacts: Path) -> list[NodeResult]:
    """Build and test every model in the DuckDB file `building` with dbt, every row tested;
    dbt's artifacts and log go to `artifacts`. Returns the node results; raises MartError
    naming what failed. Keeps dbt's compiled SQL with the project when builds without dbt can
    run it (`warehouse/compiled.py`).

    Both paths are made absolute: dbt reads a relative one against its project folder, and
    `ADWH_HOME` is relative by default (`data`)."""
    building, artifacts = building.resolve(), artifacts.resolve()
    artifacts.mkdir(parents=True, exist_ok=True)
    digest = project_digest()
    with duckdb.connect(str(building)) as con:
        full_refresh = built_by(con) != digest
        before = _tables(con)
        compiled.set_tested_since(con, EVERY_ROW)
        (catalog,) = con.execute("SELECT current_database()").fetchone()
    project = _parsed_project(digest, catalog)
    build = ["build", *_arguments(building, artifacts)]
    if full_refresh:
        build.append("--full-refresh")
    incremental_sql: dict[str, str] = {}
    # dbt-duckdb closes the file as each invocation ends (`keep_open: false`, profiles.yml)
    outcome = invoke(build, project)
    ran = list(outcome.result or [])
    results = [_result(result) for result in ran]
    failed = [f"{r.name}: {r.status} ({r.message})" for r in results if r.failed]
    if outcome.exception is None and not failed:
        incremental = {
            r.node.unique_id: r.node for r in ran if r.node.config.materialized == "incremental"
        }
        if not full_refresh and {n.name for n in incremental.values()} <= before:
            incremental_sql = {key: node.compiled_code for key, node in incremental.items()}
        elif incremental:  # it created them: compiled again now that they exist
            incremental_sql = _compiled_incrementally(building, artifacts, project, incremental)
    if outcome.exception is not None or failed:
        reason = outcome.exception or "; ".join(failed)
        raise MartError(f"dbt build failed (log: {artifacts / 'dbt.log'}): {reason}", results)
    with duckdb.connect(str(building)) as con:
        record_built_by(con, digest)
    compiled.keep(digest, compiled.replayable((r.node for r in ran), incremental_sql))
    return results


def _arguments(building: Path, artifacts: Path) -> list[str]:
    """What every dbt command of a build is told: the file, where its log goes, and no JSON
    artifacts. The results come back in process; dbt's JSON (a manifest written twice, the run
    results) would cost ~0.5 s a build, for a folder removed when the build succeeds. When it
    fails, dbt.log stays, and the error names every failed node."""
    return [
        *("--vars", json.dumps({"warehouse_file": str(building)}), "--no-write-json"),
        *("--target-path", str(artifacts), "--log-path", str(artifacts)),
    ]


def _compiled_incrementally(
    building: Path, artifacts: Path, project: Any | None, models: dict[str, Any]
) -> dict[str, str]:
    """The incremental SELECT of `models`, which the build just created (dbt compiles
    `is_incremental()` true once the relation exists): what a later build runs without dbt."""
    names = [node.name for node in models.values()]
    # `--log-level none`: `compile --select` prints the SQL it compiled (dbt.log keeps it all).
    quiet = ["--log-level", "none"]
    outcome = invoke(
        ["compile", *_arguments(building, artifacts), "--select", *names, *quiet], project
    )
    nodes = [result.node for result in outcome.result or [] if result.node.unique_id in models]
    return {node.unique_id: node.compiled_code for node in nodes}


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
