"""The scenarios' clean runs (`bench.scenarios.clean_run`, compared with) are made once per
suite and shared by its workers (tests/prepared.py), where the soak makes them per process."""

import pytest

from bench import scenarios
from tests import prepared


@pytest.fixture(scope="session", autouse=True)
def _clean_runs_once_per_suite(_prepared_homes: None) -> None:
    scenarios.keep_clean_runs_with(prepared.shared)
