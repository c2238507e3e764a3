"""Each module's clean runs (`bench.scenarios.clean_run`, made once per process and compared
with) are removed when the module ends: they are whole homes, and a worker runs many modules."""

import pytest

from bench import scenarios


@pytest.fixture(scope="module", autouse=True)
def _clean_runs():
    yield
    scenarios.remove_clean_runs()
