"""Every SQL example of README.md runs, and returns rows, on a warehouse one pipeline run built.

The run is the one tests/warehouse/test_marts.py makes (shared within a session). Statements
are run from the folder holding `data/`, so the README's relative lake paths
(`data/lake/...`) resolve.
"""

import re
from pathlib import Path

import duckdb
import pytest

from tests.warehouse.test_marts import shared_run

README = Path(__file__).parents[2] / "README.md"


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
