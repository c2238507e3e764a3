"""The dbt project (`warehouse/dbt`) as files: where it is, what it says, its parsed manifest.

Apart from the build (`warehouse/marts.py`) because the definitions read the manifest in every
run process, extraction runs included: this module imports neither dbt nor DuckDB, and dbt only
when the manifest must be parsed again (a fresh clone, an edited model).
"""

import functools
import hashlib
from graphlib import TopologicalSorter
from pathlib import Path
from typing import Any

import orjson
from filelock import FileLock

DBT_PROJECT = Path(__file__).parent / "dbt"
TARGET = DBT_PROJECT / "target"
MANIFEST = TARGET / "manifest.json"
# What dbt parses; its own output (target/, logs/) never makes the manifest stale.
SOURCES = ("dbt_project.yml", "profiles.yml", "models", "macros")


def _project_files() -> list[Path]:
    inputs = [DBT_PROJECT / name for name in SOURCES]
    files = [*inputs, *(path for folder in inputs if folder.is_dir() for path in folder.rglob("*"))]
    return sorted(path for path in files if path.is_file())


def _stale(manifest: Path) -> bool:
    if not manifest.exists():
        return True
    written = manifest.stat().st_mtime
    return any(path.stat().st_mtime > written for path in _project_files())


def project_digest() -> str:
    """What the project says, whatever the files' times: every source file's path and bytes."""
    digest = hashlib.sha256()
    for path in _project_files():
        digest.update(path.relative_to(DBT_PROJECT).as_posix().encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def prepared_manifest() -> Path:
    """The project's manifest, which the definitions read when they load: parsed again only
    when it is missing or older than a file of the project, under a lock, so processes loading
    the definitions at once parse it once."""
    TARGET.mkdir(exist_ok=True)
    with FileLock(TARGET / "parse.lock"):
        if _stale(MANIFEST):
            invoke(["parse", "--target-path", str(TARGET), "--log-path", str(TARGET)])
    return MANIFEST


def invoke(args: list[str], manifest: Any | None = None) -> Any:
    """dbt in this process (`warehouse/marts.py` says why), on the project."""
    from dbt.cli.main import dbtRunner  # seconds to import: only when dbt is run

    return dbtRunner(manifest).invoke(
        [*args, "--project-dir", str(DBT_PROJECT), "--profiles-dir", str(DBT_PROJECT), "--quiet"]
    )


@functools.cache
def models_in_order(digest: str) -> tuple[str, ...]:
    """The models of the project whose files have `digest` (`project_digest`), each after the
    models it reads: the order in which a multi-asset must report them to Dagster. Read from
    the manifest once per process and project; the same order in every process (independent
    models by name)."""
    nodes = orjson.loads(prepared_manifest().read_bytes())["nodes"].values()
    models = {node["unique_id"]: node for node in nodes if node["resource_type"] == "model"}
    reads = {
        key: sorted(set(models[key]["depends_on"]["nodes"]) & models.keys())
        for key in sorted(models)
    }
    return tuple(models[key]["name"] for key in TopologicalSorter(reads).static_order())
