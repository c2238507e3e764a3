"""The daily job as a scheduler runs it: the documented cron line, from cron's bare environment
(`env -i` with what cron itself sets: HOME, LOGNAME, SHELL, PATH), with nothing but the settings
file the docs say to write."""

import getpass
import shlex
import subprocess
from datetime import timedelta
from pathlib import Path

import duckdb

from tests import docs
from tests.conftest import SECRET, TODAY

ROOT = Path(__file__).resolve().parents[2]
WHERE_THE_DOCS_CLONE = "/path/to/ads-warehouse"


def cron_command() -> str:
    """The documented cron line's command (after its five time fields), run from this clone."""
    (line,) = {block.strip() for block in docs.blocks("cron")}
    return line.split(None, 5)[5].replace(WHERE_THE_DOCS_CLONE, str(ROOT))


def test_the_documented_cron_line_runs_the_daily_job_from_a_bare_environment(tmp_path, served):
    _, url = served
    home = tmp_path / "user"
    settings = home / ".config" / "ads-warehouse" / "env"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        f"ADS_API_BASE_URL={url}\nADS_API_KEY={SECRET}\n"
        # what the test fixes of the calendar: the sandbox's reference day, one day held
        f"ADWH_TODAY={TODAY}\nADWH_START_DATE={TODAY - timedelta(days=1)}\n"
    )
    settings.chmod(0o600)
    (home / ".local" / "state").mkdir(parents=True)  # the docs: make the log's folder once
    cron = {"HOME": str(home), "LOGNAME": getpass.getuser(), "SHELL": "/bin/sh"}
    cron["PATH"] = "/usr/bin:/bin"
    bare = ["env", "-i", *(f"{k}={v}" for k, v in cron.items())]
    done = subprocess.run(
        [*bare, "/bin/sh", "-c", cron_command()], cwd="/", capture_output=True, text=True
    )
    log = (home / ".local" / "state" / "ads-warehouse.log").read_text()
    assert done.returncode == 0, log
    warehouse_home = home / ".local" / "share" / "ads-warehouse"
    assert log.splitlines()[0] == f"adwh: reading {url} into {warehouse_home}", log
    assert SECRET not in log
    with duckdb.connect(str(warehouse_home / "warehouse.duckdb"), read_only=True) as con:
        days = con.sql("SELECT count(DISTINCT date) FROM campaign_metrics").fetchall()
    assert days == [(1,)], log
    assert shlex.split(cron_command())[0] == str(ROOT / ".venv" / "bin" / "adwh")
