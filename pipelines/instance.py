"""The Dagster instance the CLI runs in: storage under `$ADWH_HOME/dagster`, telemetry off.

`dagster dev` from the repository root reads `dagster.yaml`, which points at the same folder
for the default `ADWH_HOME` (./data), so runs started by `adwh run` show in the UI.
"""

from pathlib import Path

import dagster as dg
from dagster._core.instance.ref import InstanceRef

OVERRIDES = {
    "telemetry": {"enabled": False},
    "concurrency": {"pools": {"default_limit": 4}},
}


def cli_instance(home: Path) -> dg.DagsterInstance:
    base = (home / "dagster").resolve()
    base.mkdir(parents=True, exist_ok=True)
    return dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(base), overrides=OVERRIDES))
