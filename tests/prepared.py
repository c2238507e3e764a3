"""State many tests start from, built once per suite, across the pytest-xdist workers.

A clean run's home costs seconds of the service, Dagster and dbt; dozens of tests start from
one. Each is built by the first worker that asks, under a file lock, in a folder every worker
of the suite shares (the parent of the workers' own temporary folders), and named by the digest
of the code and data that make it: the product's packages, the sandbox, the dbt project, the
lock file, the builders' own code and the builder's arguments. A test that writes works on its
own copy (`copy_of`); one that only reads may open the prepared home itself (`shared`), which no
test then writes. No test sees another's leftovers.
"""

import hashlib
import os
import shutil
from collections.abc import Callable
from functools import cache
from pathlib import Path

from filelock import FileLock

REPO = Path(__file__).resolve().parents[1]
# What a prepared home is made of: a change to any of these makes a new one.
INPUTS = (
    "pipelines",
    "assets",
    "transforms",
    "warehouse",
    "sandbox",
    "bench/scenarios.py",
    "tests/prepared.py",
    "tests/conftest.py",
    "dagster.yaml",
    "pyproject.toml",
    "uv.lock",
)
SUFFIXES = {".py", ".sql", ".yml", ".yaml", ".toml", ".lock", ".json", ".csv"}
# Written by the build itself (dbt's parse), never an input.
OUTPUTS = {"__pycache__", "target", "logs"}
COMPLETE = ".complete"
Builder = Callable[[Path], None]

_root: Path | None = None


def use_root(basetemp: Path) -> None:
    """Keep prepared homes beside this process's temporary folder: under pytest-xdist, in the
    folder every worker's own is made in (so the workers share them), else in its own."""
    global _root
    shared = basetemp.parent if os.environ.get("PYTEST_XDIST_WORKER") else basetemp
    _root = shared / "prepared"
    _root.mkdir(exist_ok=True)


@cache
def code_digest() -> str:
    """Every input file's path and bytes, whatever their times."""
    digest = hashlib.sha256()
    for name in INPUTS:
        top = REPO / name
        files = sorted(top.rglob("*")) if top.is_dir() else [top]
        for path in files:
            parts = set(path.relative_to(REPO).parts)
            if path.is_file() and path.suffix in SUFFIXES and not parts & OUTPUTS:
                digest.update(path.relative_to(REPO).as_posix().encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def shared(name: str, build: Builder, *key: object, folder_name: str = "home") -> Path:
    """The home `build` writes for `name` and `key`, built once per suite; never write to it.
    `folder_name`: the home's own name, where a test reads paths relative to it (`data`)."""
    if _root is None:
        raise RuntimeError("tests/prepared.py: use_root() was not called (tests/conftest.py)")
    made_of = f"{code_digest()}\0{name}\0{key!r}\0{folder_name}"
    digest = hashlib.sha256(made_of.encode()).hexdigest()[:16]
    folder = _root / f"{name}-{digest}"
    with FileLock(f"{folder}.lock"):
        if not (folder / COMPLETE).exists():
            shutil.rmtree(folder, ignore_errors=True)  # a build that failed half-way
            folder.mkdir()
            build(folder / folder_name)
            (folder / COMPLETE).touch()
    return folder / folder_name


def copy_of(target: Path, name: str, build: Builder, *key: object) -> Path:
    """`target`, a copy of the prepared home of `name` and `key`: the test's own."""
    shutil.copytree(shared(name, build, *key), target, symlinks=True)
    return target
