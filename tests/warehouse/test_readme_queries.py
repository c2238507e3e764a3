"""Every SQL example of README.md runs, and returns rows, on a warehouse one pipeline run built;
and returns the same rows pasted into the shell `make` installs (DuckDB's CLI, of the 1.x line:
what DuckDB 1.x clients see in the file).

The run is the one tests/warehouse/test_marts.py makes (shared within a session). Statements
are run from the folder holding `data/`, so the README's relative lake paths
(`data/lake/...`) resolve.
"""

import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.test_marts import shared_run

README = Path(__file__).parents[2] / "README.md"
SHELL = Path(sys.executable).parent / "duckdb"


def statements() -> list[str]:
    blocks = re.findall(r"```sql\n(.*?)```", README.read_text(), flags=re.S)
    found = [s.strip() for block in blocks for s in block.split(";")]
    return [s for s in found if any(not line.strip().startswith("--") for line in s.splitlines())]


def label(statement: str) -> str:
    name = re.search(r"\bmart_\w+", statement) or re.search(r"\bFROM\s+(\S+)", statement)
    return name.group(0) if name else statement[:30]


def test_the_readme_has_sql_examples_for_the_marts():
    found = statements()
    assert len(found) >= 10
    assert sum("mart_" in s for s in found) >= 9


@pytest.fixture(scope="module")
def warehouse(request):
    home = shared_run(request)
    assert home.name == "data"  # the README's paths are relative to the folder holding data/
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(home.parent)
        with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
            yield con


@pytest.mark.parametrize("statement", statements(), ids=label)
def test_every_readme_query_returns_rows(warehouse, statement):
    rows = warehouse.sql(statement).fetchall()
    assert rows, statement


def test_the_shell_make_installs_is_duckdb_1x_and_answers_every_readme_query_alike(
    warehouse, tmp_path
):
    """Each README statement as written, in the installed shell on the file (attached
    read-only), its rows kept in a database of the shell's own and read back here: the same
    rows as the pipeline's DuckDB, values and types."""
    version = subprocess.run([SHELL, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v1."), version.stdout
    answers = tmp_path / "answers.duckdb"
    script = (
        "ATTACH 'data/warehouse.duckdb' AS warehouse (READ_ONLY);\n"
        f"ATTACH '{answers}' AS answers;\nUSE warehouse;\n"
    ) + "".join(
        f"CREATE TABLE answers.q{i} AS {statement};\n" for i, statement in enumerate(statements())
    )
    shell = subprocess.run(
        [SHELL, "-bail"],
        input=script,
        capture_output=True,
        text=True,
        cwd=Path.cwd(),  # the folder holding data/ (the warehouse fixture moved there)
    )
    assert shell.returncode == 0 and "Error" not in shell.stderr, shell.stderr
    warehouse.execute(f"ATTACH '{answers}' AS answers (READ_ONLY)")
    try:
        for i, statement in enumerate(statements()):
            expected, got = warehouse.sql(statement), warehouse.sql(f"FROM answers.q{i}")
            assert got.types == expected.types, label(statement)
            assert sorted(got.fetchall(), key=repr) == sorted(expected.fetchall(), key=repr), label(
                statement
            )
    finally:
        warehouse.execute("DETACH answers")
