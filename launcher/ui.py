"""`adwh ui`: Dagster's `dg dev` over the workspace's code locations and the instance `adwh`
records to, saying only warnings.

`dg dev --log-level warning` quiets its webserver and daemon, but not the runs: each run's
worker is a child of a code server of `dg dev`, writing to the same terminal through the run's
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
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import suppress
from pathlib import Path
from typing import TextIO

import psutil

# The header of a line of Dagster's log, from any of its processes (webserver, daemon, code
# server, a run's console logger): `<date> <time> <zone> - <logger> - <LEVEL> - …`.
LOG_HEADER = re.compile(r"^\S+ \S+ \S+ - [\w.]+ - (?P<level>[A-Z]+) - ")
# Its colours, when a process writes them (the webserver's and the daemon's do).
COLOUR = re.compile(r"\x1b\[[0-9;]*m")
HIDDEN_LEVELS = {"DEBUG", "INFO"}
# What stops `adwh ui` (`command_ui`), and how long Dagster's processes are given to stop on
# their own (`dg dev` tells its webserver and daemon, and its code servers) before they are
# killed.
STOPS = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP)
GRACE = 10.0


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


def command_ui(dg: Path, port: int, verbose: bool, env: dict[str, str], workspace: Path) -> int:
    """Run `dg dev` on `workspace` (in its folder) with `env`, printing what `shown` keeps
    (everything when `verbose`); its exit status, or 128 + the signal that stopped it. It
    stops on SIGTERM (`kill`'s, a supervisor's), and on SIGINT (Ctrl-C) and SIGHUP (its
    terminal closed) unless they were ignored when it started: a shell starts `adwh ui &`
    with SIGINT ignored, so that a Ctrl-C meant for the script's foreground command spares
    it, and `nohup` ignores SIGHUP. Stopping it stops `dg dev` and every process of it
    (`_end`)."""
    level = "info" if verbose else "warning"
    ignored = {s for s in STOPS if signal.getsignal(s) is signal.SIG_IGN and s != signal.SIGTERM}
    asked: list[int] = []

    def ask(signum: int, _frame: object) -> None:
        if signum not in ignored:
            asked.append(signum)

    # Caught here, so at their default in `dg dev` and its processes: exec resets a caught
    # signal, not an ignored one. Dagster's processes stop on SIGINT, and take SIGTERM for a
    # SIGINT; with SIGINT ignored, as a shell starts `adwh ui &`, they ignored both (issue 70).
    previous = {s: signal.signal(s, ask) for s in STOPS}
    try:
        # In a session of its own, so that what the terminal sends reaches this process
        # alone, which decides; so its stdin is not the terminal either.
        process = subprocess.Popen(
            [str(dg), "dev", "-w", str(workspace), "--port", str(port), "--log-level", level],
            env=env,
            cwd=workspace.parent,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        for ignore in ignored:
            signal.signal(ignore, signal.SIG_IGN)
        assert process.stdout is not None
        lines = process.stdout if verbose else shown(process.stdout)
        copier = threading.Thread(target=_copy, args=(lines, sys.stdout), daemon=True)
        try:
            copier.start()
            while not asked and not _ended(process):
                time.sleep(0.2)
        finally:
            _end(process)
        copier.join(5)  # the lines said while stopping
        return 128 + asked[0] if asked else process.returncode
    finally:
        for restored, handler in previous.items():
            signal.signal(restored, handler)


def _ended(process: subprocess.Popen) -> bool:
    """`process` has exited, left unreaped: its id, which is its process group's, is not given
    to another process until `_end` reaps it."""
    return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None


def _end(process: subprocess.Popen) -> None:
    """Stop `dg dev` (`process`, leading its own process group) and every process it started
    within `GRACE` s; what is left of them then is killed. Listed first: a process of them may
    be in another group, or no longer `dg dev`'s descendant.

    SIGINT to `dg dev` alone, which stops its processes in order: its webserver and daemon,
    then its code servers. A SIGINT to all at once, as a Ctrl-C in a terminal sends, races
    with that: `dg dev` restarts a code server that stopped first, which then lasted until it
    was killed. Then SIGINT to what remains (a run's worker), which Dagster ends as a run
    interrupted."""
    family = _family(process.pid)
    deadline = time.monotonic() + GRACE
    with suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGINT)
    while time.monotonic() < deadline and not _ended(process):
        time.sleep(0.1)
    for member in family:
        with suppress(psutil.Error):
            if _alive(member):
                member.send_signal(signal.SIGINT)
    while time.monotonic() < deadline and any(map(_alive, family)):
        time.sleep(0.1)
    with suppress(ProcessLookupError):  # the group's id is not reused: `dg dev` is unreaped
        os.killpg(process.pid, signal.SIGKILL)
    left = [member for member in family if _alive(member)]
    for member in left:
        with suppress(psutil.Error):
            member.kill()
    process.wait()
    psutil.wait_procs(left, timeout=5)


def _family(pid: int) -> list[psutil.Process]:
    """The processes `pid` started, and any other of its process group (one whose parent
    ended is no longer its descendant)."""
    family: dict[int, psutil.Process] = {}
    with suppress(psutil.Error):
        family = {child.pid: child for child in psutil.Process(pid).children(recursive=True)}
    for candidate in psutil.process_iter():
        with suppress(OSError, psutil.Error):
            if candidate.pid != pid and os.getpgid(candidate.pid) == pid:
                family.setdefault(candidate.pid, candidate)
    return list(family.values())


def _alive(process: psutil.Process) -> bool:
    """Running, not ended (a zombie is no longer running)."""
    try:
        return process.is_running() and process.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _copy(lines: Iterable[str], output: TextIO) -> None:
    """Each line to `output` as it comes, for a person (or a log collector) to see it. Once
    `output` is gone (its terminal closed, its reader ended), the lines are still read: no
    process of Dagster's waits to write one, stopping or not."""
    writing = True
    for line in lines:
        if writing:
            try:
                output.write(line)
                output.flush()
            except (OSError, ValueError):
                writing = False


def ui_environment(dagster_home: Path) -> dict[str, str]:
    """`dg dev`'s environment: the instance's DAGSTER_HOME, and this virtualenv for `dg`."""
    return {**os.environ, "DAGSTER_HOME": str(dagster_home), "VIRTUAL_ENV": sys.prefix}
