"""The README's set-up commands as a newcomer meets them: `make demo` installs what the demo
needs and no test tool, quietly; `make test` adds the test tools."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TEST_TOOLS = ("pytest", "hypothesis", "ruff", "moto", "aiosmtpd")


def recipe(target: str) -> str:
    """What `make <target>` runs on a machine whose environment is not made yet (`-B`: every
    prerequisite remade; `-n`: printed, not run)."""
    make = subprocess.run(
        ["make", "-n", "-B", target], cwd=ROOT, capture_output=True, text=True, check=True
    )
    return make.stdout


def uv() -> str:
    """uv as the Makefile finds it: the machine's, or the one it installed in .venv-uv."""
    found = subprocess.run(
        ["sh", "-c", "command -v uv || echo .venv-uv/bin/uv"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    return str(ROOT / found.stdout.strip())


def test_make_demo_installs_no_test_tool_and_names_no_package():
    syncs = [line for line in recipe("demo").splitlines() if " sync " in line]
    assert syncs and all("--no-dev" in line and "--quiet" in line for line in syncs), syncs
    flags = syncs[0].split(" sync ", 1)[1].split()
    exported = subprocess.run(
        [uv(), "export", "--no-hashes", *[f for f in flags if f not in ("--quiet", "--inexact")]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    packages = {line.split("==")[0] for line in exported.splitlines() if "==" in line}
    assert {"dagster", "duckdb", "duckdb-cli", "dagster-dg-cli", "uvicorn"} <= packages
    assert not packages & set(TEST_TOOLS), packages & set(TEST_TOOLS)


def test_make_test_adds_the_test_tools():
    syncs = [line for line in recipe("test").splitlines() if " sync " in line]
    assert any("--no-dev" not in line for line in syncs), syncs
