"""Every SQL example of the docs (README.md and docs/*.md, tests/docs.py) runs, and returns
rows, on a warehouse one pipeline run built; and returns the same rows pasted into the shell
`make` installs (DuckDB's CLI, of the 1.x line: what DuckDB 1.x clients see in the file).

The run is the one tests/warehouse/test_marts.py makes (shared within a session). Statements
are run from `$ADWH_HOME`, as `adwh sql` runs them, so the docs' relative lake paths
(`lake/...`) resolve; the shell's answers come through `adwh sql` itself, from another folder.
"""

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

from tests import docs
from tests.warehouse.test_marts import shared_run

SHELL = Path(sys.executable).parent / "duckdb"
ADWH = Path(sys.executable).parent / "adwh"


def blocks() -> list[str]:
    """The SQL examples of every page, each as written."""
    return docs.blocks("sql")


def statements() -> list[str]:
    found = [s.strip() for block in blocks() for s in block.split(";")]
    return [s for s in found if any(not line.strip().startswith("--") for line in s.splitlines())]


def label(statement: str) -> str:
    name = re.search(r"\bmart_\w+", statement) or re.search(r"\bFROM\s+(\S+)", statement)
    return name.group(0) if name else statement[:30]


def test_the_readme_has_sql_examples_for_the_marts():
    found = statements()
    assert len(found) >= 10
    assert sum("mart_" in s for s in found) >= 9


def test_each_page_of_queries_has_its_blocks_and_every_block_is_run():
    """The README's two queries and the analysts' page's are found where they are, and no
    page holds a SQL block the tests would not see (the blocks run are every page's)."""
    for page in docs.SQL_PAGES:
        assert docs.blocks("sql", page), page.name
    assert len(docs.blocks("sql", docs.README)) == 2
    assert sum("mart_" in b for b in docs.blocks("sql", docs.ANALYSTS)) >= 9
    fences = [
        line
        for page in [docs.README, *docs.DOCS.rglob("*.md")]
        for line in page.read_text().splitlines()
        if re.match(r"\s*```\s*sql\b", line, flags=re.I)
    ]
    assert len(fences) == len(blocks()), "a SQL block the pages' list or its pattern misses"


@pytest.fixture(scope="module")
def home(request) -> Path:
    return shared_run(request)


@pytest.fixture(scope="module")
def warehouse(home):
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(home)  # where `adwh sql` starts the shell: the lake's paths resolve
        with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
            yield con


@pytest.mark.parametrize("statement", statements(), ids=label)
def test_every_readme_query_returns_rows(warehouse, statement):
    rows = warehouse.sql(statement).fetchall()
    assert rows, statement


def test_the_shell_make_installs_is_duckdb_1x_and_answers_every_readme_query_alike(
    warehouse, home, tmp_path
):
    """Each docs statement as written, in `adwh sql` (the installed shell on the file,
    read-only, from `$ADWH_HOME`, started here from another folder), its rows kept in a
    database of the shell's own and read back here: the same rows as the pipeline's DuckDB,
    values and types."""
    version = subprocess.run([SHELL, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("v1."), version.stdout
    answers = tmp_path / "answers.duckdb"
    script = f"ATTACH '{answers}' AS answers (READ_ONLY false);\n" + "".join(
        f"CREATE TABLE answers.q{i} AS {statement};\n" for i, statement in enumerate(statements())
    )
    shell = subprocess.run(
        [ADWH, "sql"],
        input=script,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "ADWH_HOME": str(home)},
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


def test_each_readme_block_runs_as_the_argument_of_adwh_sql(home, tmp_path):
    """A block as a reader copies it into `adwh sql "…"`, its leading comment included (the
    shell read `-- …` as an option it does not know)."""
    for block in blocks():
        ran = subprocess.run(
            [ADWH, "sql", block],
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env={**os.environ, "ADWH_HOME": str(home)},
        )
        assert ran.returncode == 0 and "Error" not in ran.stderr, (block[:40], ran.stderr)
        assert ran.stdout.count("┌") == block.count(";"), block[:40]  # a table per statement
