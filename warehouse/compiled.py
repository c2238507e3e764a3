"""The marts' SQL as dbt compiled it, kept with the project and run without dbt.

dbt costs a build seconds whatever changed (its import, its classes' JSON schemas, 0.2-0.5 s a
node for 52 nodes: bench/SPEED.md), while a build changes a few days of a few tables, or, in a
new warehouse, loads tables into a file that holds no model yet. When the project is the one
dbt compiled, nothing dbt would do differs from what it did then but the data:
- a view reads the new rows as it is, and needs no rebuild; it is created (with the comments
  dbt's persist_docs writes) in a file that has none yet, and again when a table under it was
  read again whole (its columns may have changed);
- an incremental model deletes the rows it recomputes (its `meta.recomputes`, the same
  predicate as its pre-hook) and appends its incremental SELECT, as dbt's append strategy does;
  in a file without it, the same SELECT creates it: every row of its sources was loaded by
  this build, so the days it recomputes are all of them;
- each test's SELECT of failing rows is counted over the rows of the days the build read again
  (`adwh_tested_since()`, see `warehouse/dbt/macros/tested_rows.sql`), every row in a new file,
  and one failing row fails the build before the file is swapped in, as dbt's default test
  config does.

The SQL is dbt's own: the compiled code of every node of the project's last dbt build, with the
incremental models' incremental SELECT (dbt compiles it after a build that created them), kept
with the project's digest beside its manifest (`warehouse/dbt/target/compiled.json`): every
warehouse on the machine that this project builds shares it. A file another project built, or
a project this module cannot replay (a table model, a test with a threshold of its own) makes
dbt build instead.
"""

import contextlib
import os
import threading
import uuid
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date
from graphlib import TopologicalSorter
from time import perf_counter
from typing import Any

import duckdb
import orjson

from warehouse.dbt_project import TARGET
from warehouse.lake import sql_string

# Beside the manifest: the project's, whichever warehouse it builds.
COMPILED_FILE = TARGET / "compiled.json"
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
    """One node as dbt compiled it: a model (its relation, the models it reads, its docs, and
    for an incremental model the rows it recomputes) or a test (the model it checks)."""

    unique_id: str
    resource_type: str
    name: str
    model: str | None
    relation: str | None
    recomputes: str | None
    sql: str
    depends_on: list[str] = field(default_factory=list)
    description: str = ""
    columns: dict[str, str] = field(default_factory=dict)


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


def replayable(nodes: Iterable[Any], incremental_sql: dict[str, str]) -> list[CompiledNode] | None:
    """dbt's nodes (of a build's results) as SQL this module can run, with each incremental
    model's incremental SELECT (`incremental_sql`, by unique id), or None: a model materialized
    otherwise than as a view or an incremental model that names the rows it recomputes, or a
    test with a configuration of its own."""
    kept = []
    for node in nodes:
        config = node.config
        recomputes = None
        sql = node.compiled_code
        if node.resource_type == "model":
            if config.materialized == "incremental":
                recomputes = config.meta.get("recomputes")
                sql = incremental_sql.get(node.unique_id)
                if not recomputes or sql is None:
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
        model = node.resource_type == "model"
        kept.append(
            CompiledNode(
                node.unique_id,
                node.resource_type,
                node.name,
                attached.split(".")[-1] if attached else None,
                node.relation_name if model else None,
                recomputes,
                sql,
                list(node.depends_on.nodes) if model else [],
                node.description if model else "",
                {name: c.description for name, c in node.columns.items()} if model else {},
            )
        )
    return kept


def keep(digest: str, nodes: list[CompiledNode] | None) -> None:
    """Replace what the project keeps of dbt's SQL: `nodes` for project `digest`, or nothing.
    A project folder nobody may write (an installed package) keeps nothing: dbt builds."""
    with contextlib.suppress(OSError):
        if nodes is None:
            COMPILED_FILE.unlink(missing_ok=True)
            return
        COMPILED_FILE.parent.mkdir(exist_ok=True)
        written = COMPILED_FILE.with_name(f".{COMPILED_FILE.name}.{uuid.uuid4().hex}")
        written.write_bytes(orjson.dumps({"digest": digest, "nodes": [asdict(n) for n in nodes]}))
        written.replace(COMPILED_FILE)


def kept(digest: str) -> list[CompiledNode] | None:
    """The SQL dbt compiled for project `digest`, or None (never kept, or another project's)."""
    try:
        held = orjson.loads(COMPILED_FILE.read_bytes())
    except (FileNotFoundError, orjson.JSONDecodeError):
        return None
    if held.get("digest") != digest:
        return None
    return [CompiledNode(**node) for node in held["nodes"]]


def run(
    con: duckdb.DuckDBPyConnection, nodes: list[CompiledNode], anew: bool = False
) -> list[NodeResult]:
    """Bring the models up to the days read again (`anew`: create the views again, and any
    model the file lacks), then run every test; raises MartError naming every failed test.
    Nothing needs undoing then: the file being built is discarded, the current one stays."""
    models = {node.unique_id: node for node in nodes if node.resource_type == "model"}
    order = TopologicalSorter(
        {key: [d for d in node.depends_on if d in models] for key, node in models.items()}
    ).static_order()
    results = [_model(con, models[key], anew) for key in order]
    results += _tests(con, [node for node in nodes if node.resource_type == "test"])
    failed = [f"{r.name}: {r.status} ({r.message})" for r in results if r.failed]
    if failed:
        raise MartError(f"a mart test failed: {'; '.join(failed)}", results)
    return results


def _model(con: duckdb.DuckDBPyConnection, node: CompiledNode, anew: bool) -> NodeResult:
    """An incremental model's rows of the days read again recomputed (the model created when
    the file lacks it); a view kept, or created again with its comments (`anew`)."""
    started = perf_counter()
    if node.recomputes is None:
        if not anew:
            return NodeResult(node.name, "model", None, "kept", 0.0)
        con.execute(f"CREATE OR REPLACE VIEW {node.relation} AS ({node.sql})")
        _comment(con, node, "VIEW")
    elif held_models(con, [node]):
        con.execute(f"DELETE FROM {node.relation} WHERE {node.recomputes}")
        con.execute(f"INSERT INTO {node.relation} BY NAME ({node.sql})")
    else:
        con.execute(f"CREATE TABLE {node.relation} AS ({node.sql})")
        _comment(con, node, "TABLE")
    return NodeResult(node.name, "model", None, "success", round(perf_counter() - started, 3))


def held_models(con: duckdb.DuckDBPyConnection, nodes: Iterable[CompiledNode]) -> set[str]:
    """The models among `nodes` that the file holds (as a table or a view)."""
    names = [node.name for node in nodes if node.resource_type == "model"]
    query = "SELECT table_name FROM information_schema.tables WHERE list_contains(?, table_name)"
    return {row[0] for row in con.execute(query, [names]).fetchall()}


def _comment(con: duckdb.DuckDBPyConnection, node: CompiledNode, kind: str) -> None:
    """What dbt's persist_docs writes: the model's description and its columns' (those the
    relation has: dbt-duckdb skips a documented column the model no longer selects)."""
    con.execute(f"COMMENT ON {kind} {node.relation} IS {sql_string(node.description)}")
    query = "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
    held = {row[0] for row in con.execute(query, [node.name]).fetchall()}
    for column, description in node.columns.items():
        if column in held:
            target = f'{node.relation}."{column}"'
            con.execute(f"COMMENT ON COLUMN {target} IS {sql_string(description)}")


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
