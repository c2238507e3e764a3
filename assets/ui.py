"""`adwh ui`: Dagster's `dg dev` over the instance `adwh` records to, saying only warnings.

`dg dev --log-level warning` quiets its webserver and daemon, but not the runs: each run's
worker is a child of `dg dev`'s code server, writing to the same terminal through the run's
console logger, at DEBUG (every STEP_OUTPUT, every materialization) unless the run's own config
says otherwise. The job's config could say so for the jobs we name, not for the UI's
"Materialize" (Dagster's implicit asset job), and Dagster's instance-wide `python_log_level`
would also drop `context.log.info` from the run's record in the UI. So `dg dev`'s output
passes through here, and what any of its processes logs below WARNING is not printed: the
run's record, the UI's run page and the step logs keep every line.
"""

import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TextIO

# The header of a line of Dagster's log, from any of its processes (webserver, daemon, code
# server, a run's console logger): `<date> <time> <zone> - <logger> - <LEVEL> - …`.
LOG_HEADER = re.compile(r"^\S+ \S+ \S+ - [\w.]+ - (?P<level>[A-Z]+) - ")
# Its colours, when a process writes them (the webserver's and the daemon's do).
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
HIDDEN_LEVELS = {"DEBUG", "INFO"}


def shown(lines: Iterable[str]) -> Iterator[str]:
    """The lines of Dagster's output a person is shown: every entry at WARNING or above, with
    the lines that follow it (a traceback), and any line that is not Dagster's log (what a
    process prints of its own). An entry below WARNING goes with its continuation lines."""
    hiding = False
    for line in lines:
        header = LOG_HEADER.match(COLOUR.sub("", line))
        if header is not None:
            hiding = header["level"] in HIDDEN_LEVELS
        if not hiding:
            yield line


def command_ui(dg: Path, port: int, verbose: bool, env: dict[str, str], cwd: Path) -> int:
    """Run `dg dev` in `cwd` with `env`, printing what `shown` keeps (everything when
    `verbose`); its exit status. Ctrl-C reaches `dg dev` as it reaches this process (one
    process group); a SIGTERM to this process is passed on, so a supervisor's stop ends the
    UI, its daemon and its code server alike."""
    level = "info" if verbose else "warning"
    process = subprocess.Popen(
        [str(dg), "dev", "--port", str(port), "--log-level", level],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        errors="replace",
    )
    signal.signal(signal.SIGTERM, lambda *_: process.send_signal(signal.SIGTERM))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # `dg dev` gets it too, and stops its own
    assert process.stdout is not None
    _copy(process.stdout if verbose else shown(process.stdout), sys.stdout)
    return process.wait()


def _copy(lines: Iterable[str], output: TextIO) -> None:
    for line in lines:
        output.write(line)
        output.flush()  # a person (or a log collector) sees each line as it comes


def ui_environment(dagster_home: Path) -> dict[str, str]:
    """`dg dev`'s environment: the instance's DAGSTER_HOME, and this virtualenv for `dg`."""
    return {**os.environ, "DAGSTER_HOME": str(dagster_home), "VIRTUAL_ENV": sys.prefix}
