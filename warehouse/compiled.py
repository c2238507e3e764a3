"""The marts' SQL as dbt compiled it, kept in the warehouse and run there without dbt.

dbt costs a build seconds whatever changed (its import, its classes' JSON schemas, 0.2-0.5 s a
node for 52 nodes: bench/SPEED.md), while a daily build changes a few days of a few tables.
When the project is the one dbt last built the file with, nothing dbt would do differs from what
it did then but the data:
- a view reads the new rows as it is, and needs no rebuild;
- an incremental model deletes the rows it recomputes (its `meta.recomputes`, the same
  predicate as its pre-hook) and appends its incremental SELECT, as dbt's append strategy does;
- each test's SELECT of failing rows is counted over the rows of the days the build read again
  (`adwh_tested_since()`, see `warehouse/dbt/macros/tested_rows.sql`), and one failing row
  fails the build before the file is swapped in, as dbt's default test config does.

The SQL is dbt's own: the compiled code of every node of the last dbt build that ran each
incremental model incrementally (a first or full-refresh build compiles their full SELECT),
kept with the project's digest in `$ADWH_HOME/dbt/compiled.json`, for every generation of the
file that this project built (`_dbt_project`). A project that changed, a table read again
whole (its columns may have changed under the views), or a project this module cannot replay
(a table model, a test with a threshold of its own) makes dbt build instead.
"""

import os
import threading
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import date
from pathlib import Path
from time import perf_counter
from typing import Any

import duckdb
import orjson

# Beside the builds' dbt artifacts (`$ADWH_HOME/dbt/<run id>`).
COMPILED_FILE = Path("dbt") / "compiled.json"
TESTED_SINCE = "adwh_tested_since"
EVERY_ROW = date(1, 1, 1)
# What dbt's test materialization does by default; a test configured otherwise is left to dbt.
DEFAULT_TEST_CONFIG = {
    "severity": "ERROR",
    "fail_calc": "count(*)",
    "warn_if": "!= 0",
    "error_if": "!= 0",
    "limit": None,
}


@dataclass(frozen=True)
class NodeResult:
    """A model built or a test run, by dbt or from its compiled SQL: what Dagster reports.
    `status` is dbt's (success, pass, fail, error …), or `kept` for a view left as it was."""

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


class MartError(RuntimeError):
    """A mart failed to build or a mart test failed: the old warehouse stays in place. Carries
    every result of the build, so the failed tests can still be reported."""

    def __init__(self, message: str, results: list[NodeResult]) -> None:
        super().__init__(message)
        self.results = results


@dataclass(frozen=True)
class CompiledNode:
    """One node as dbt compiled it: a model (its relation, and for an incremental model the
    rows it recomputes) or a test (the model it checks)."""

    unique_id: str
    resource_type: str
    name: str
    model: str | None
    relation: str | None
    recomputes: str | None
    sql: str


def set_tested_since(con: duckdb.DuckDBPyConnection, since: date | None) -> None:
    """The first day the marts' tests read (None: no row). A constant macro, which DuckDB
    inlines and pushes into the tables' scans."""
    value = "CAST(NULL AS DATE)" if since is None else f"DATE '{since.isoformat()}'"
    con.execute(f"CREATE OR REPLACE MACRO {TESTED_SINCE}() AS {value}")


def first_day_read_again(con: duckdb.DuckDBPyConnection) -> date | None:
    """The first day this build read again from the lake (`_lake_reloads`): EVERY_ROW when a
    table was read whole, None when nothing was."""
    return con.execute(
        f"SELECT CASE WHEN bool_or(date IS NULL) THEN DATE '{EVERY_ROW.isoformat()}' "
        "ELSE min(date) END FROM _lake_reloads"
    ).fetchone()[0]


def replayable(nodes: Iterable[Any], incremental: bool) -> list[CompiledNode] | None:
    """dbt's nodes (of a build's results, in the order it ran them) as SQL this module can run,
    or None: a build that compiled an incremental model's full SELECT (`incremental` False), a
    model materialized otherwise than as a view or an incremental model that names the rows it
    recomputes, or a test with a configuration of its own."""
    kept = []
    for node in nodes:
        config = node.config
        recomputes = None
        if node.resource_type == "model":
            if config.materialized == "incremental":
                recomputes = config.meta.get("recomputes")
                if not incremental or not recomputes:
                    return None
            elif config.materialized != "view":
                return None
        elif node.resource_type == "test":
            settings = {key: getattr(config, key, None) for key in DEFAULT_TEST_CONFIG}
            settings["severity"] = str(settings["severity"]).upper()  # dbt takes any case
            if settings != DEFAULT_TEST_CONFIG:
                return None
        else:
            continue
        attached = getattr(node, "attached_node", None)
        kept.append(
            CompiledNode(
                node.unique_id,
                node.resource_type,
                node.name,
                attached.split(".")[-1] if attached else None,
                node.relation_name if node.resource_type == "model" else None,
                recomputes,
                node.compiled_code,
            )
        )
    return kept


def keep(home: Path, digest: str, nodes: list[CompiledNode] | None) -> None:
    """Replace what the home keeps of dbt's SQL: `nodes` for project `digest`, or nothing."""
    path = home / COMPILED_FILE
    if nodes is None:
        path.unlink(missing_ok=True)
        return
    path.parent.mkdir(exist_ok=True)
    written = path.with_name(f".{path.name}.{uuid.uuid4().hex}")
    written.write_bytes(orjson.dumps({"digest": digest, "nodes": [asdict(n) for n in nodes]}))
    written.replace(path)


def kept(home: Path, digest: str) -> list[CompiledNode] | None:
    """The SQL dbt compiled for project `digest`, or None (never kept, or another project's)."""
    try:
        held = orjson.loads((home / COMPILED_FILE).read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    if held.get("digest") != digest:
        return None
    return [CompiledNode(**node) for node in held["nodes"]]


def run(con: duckdb.DuckDBPyConnection, nodes: list[CompiledNode]) -> list[NodeResult]:
    """Bring the incremental models up to the days read again, then run every test; raises
    MartError naming every failed test. Nothing needs undoing then: the file being built is
    discarded, the current one stays."""
    results = [_model(con, node) for node in nodes if node.resource_type == "model"]
    results += _tests(con, [node for node in nodes if node.resource_type == "test"])
    failed = [f"{r.name}: {r.status} ({r.message})" for r in results if r.failed]
    if failed:
        raise MartError(f"a mart test failed: {'; '.join(failed)}", results)
    return results


def _model(con: duckdb.DuckDBPyConnection, node: CompiledNode) -> NodeResult:
    """An incremental model's rows of the days read again recomputed; a view kept."""
    if node.recomputes is None:
        return NodeResult(node.name, "model", None, "kept", 0.0)
    started = perf_counter()
    con.execute(f"DELETE FROM {node.relation} WHERE {node.recomputes}")
    con.execute(f"INSERT INTO {node.relation} BY NAME ({node.sql})")
    return NodeResult(node.name, "model", None, "success", round(perf_counter() - started, 3))


def _tests(con: duckdb.DuckDBPyConnection, tests: list[CompiledNode]) -> list[NodeResult]:
    """Each test's failing rows counted, one query a test, on a cursor per thread: most of a
    test's ~15 ms is DuckDB planning the marts' views, which runs outside the GIL, so the
    cores plan and run tests side by side. (One UNION ALL of every test took twice as long as
    one query a test: the views inlined into one plan 41 times.)"""
    local = threading.local()

    def tested(test: CompiledNode) -> NodeResult:
        if not hasattr(local, "cursor"):
            local.cursor = con.cursor()
        return _test_alone(local.cursor, test)

    with ThreadPoolExecutor(max_workers=min(4, os.cpu_count() or 1)) as pool:
        return list(pool.map(tested, tests))


def _test_alone(con: duckdb.DuckDBPyConnection, test: CompiledNode) -> NodeResult:
    started = perf_counter()
    try:
        (failures,) = con.execute(f"SELECT count(*) FROM ({test.sql}) AS failing").fetchone()
    except duckdb.Error as error:
        return NodeResult(test.name, "test", test.model, "error", 0.0, 0, str(error))
    return _tested(test, failures, round(perf_counter() - started, 3))


def _tested(test: CompiledNode, failures: int, seconds: float) -> NodeResult:
    status = "fail" if failures else "pass"
    message = f"Got {failures} results, configured to fail if != 0"
    return NodeResult(test.name, "test", test.model, status, seconds, failures, message)
