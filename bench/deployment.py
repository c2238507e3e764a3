"""The production deployment on this machine, for the deployment tests and the scale benchmark:
a code server, the webserver and the daemon started with `deploy/compose.yaml`'s commands and
`deploy/dagster.yaml` as the instance (PostgreSQL at $ADWH_DAGSTER_PG_URL, directly or through
compose's PgBouncer settings), on free ports of 127.0.0.1.
"""

import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
import httpx
import psutil
import yaml

from assets.retries import awaits_retry
from pipelines.fanout import ACCOUNTS_TAG

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
# The statuses a run ends in.
FINISHED = {dg.DagsterRunStatus.SUCCESS, dg.DagsterRunStatus.FAILURE, dg.DagsterRunStatus.CANCELED}


def free_port() -> int:
    """A TCP port of 127.0.0.1 nothing listens on (for the servers tests and benchmarks start)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def fresh_database(server: str) -> Iterator[str]:
    """A new PostgreSQL database on `server` (a SQLAlchemy URL without a database) for one
    Dagster instance; dropped afterwards."""
    import sqlalchemy

    name = f"adwh_{uuid.uuid4().hex[:12]}"
    admin = sqlalchemy.create_engine(f"{server}/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as con:
        con.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{server}/{name}"
    finally:
        with admin.connect() as con:
            con.execute(sqlalchemy.text(f'DROP DATABASE "{name}" WITH (FORCE)'))
        admin.dispose()


def installed(program: str) -> str | None:
    """Where the machine has `program`: on PATH, or in /usr/sbin where Debian puts daemons
    (PgBouncer) that a user's PATH may not hold."""
    return shutil.which(program) or shutil.which(program, path="/usr/sbin")


PGBOUNCER = installed("pgbouncer")


@contextmanager
def pooler(database: str, folder: Path) -> Iterator[str]:
    """PgBouncer in front of `database`'s server (a SQLAlchemy URL, trust authentication),
    pooling as deploy/compose.yaml's `pgbouncer` does, on a free port. Yields the URL that
    reaches `database` through it."""
    import sqlalchemy

    if PGBOUNCER is None:
        raise FileNotFoundError("no pgbouncer on this machine (apt-get install pgbouncer)")
    url = sqlalchemy.engine.make_url(database)
    pooled = compose_service("pgbouncer")["environment"]
    folder.mkdir(parents=True, exist_ok=True)
    folder.chmod(0o755)  # PgBouncer refuses to run as root: it reads these as `postgres`
    (folder / "userlist.txt").write_text(f'"{url.username}" ""\n')
    user = ["-u", url.username or "postgres"] if os.geteuid() == 0 else []

    def start(port: int) -> subprocess.Popen:
        config = folder / "pgbouncer.ini"
        config.write_text(
            f"[databases]\n* = host={url.host} port={url.port or 5432}\n"
            f"[pgbouncer]\nlisten_addr = 127.0.0.1\nlisten_port = {port}\nunix_socket_dir =\n"
            f"auth_type = trust\nauth_file = {folder / 'userlist.txt'}\n"
            f"pool_mode = {pooled['POOL_MODE']}\nmax_client_conn = {pooled['MAX_CLIENT_CONN']}\n"
            f"default_pool_size = {pooled['DEFAULT_POOL_SIZE']}\n"
            "log_connections = 0\nlog_disconnections = 0\n"
        )
        for path in folder.iterdir():
            path.chmod(0o644)
        with (folder / "pgbouncer.log").open("ab") as log:
            return subprocess.Popen(
                [PGBOUNCER, *user, str(config)], stdout=log, stderr=subprocess.STDOUT
            )

    process, port = listening(start, folder)
    try:
        yield url.set(port=port).render_as_string(hide_password=False)
    finally:
        process.terminate()
        process.wait(10)


def wait_until(
    condition: Callable[[], object], what: str, timeout: float = 600, every: float = 2
) -> object:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(every)
    raise TimeoutError(f"not within {timeout} s: {what}")


@dataclass
class Deployment:
    url: str
    dagster_home: Path
    pids: dict[str, int]  # the code server, webserver and daemon (run workers are the code's)

    def instance(self) -> dg.DagsterInstance:
        return dg.DagsterInstance.from_config(str(self.dagster_home))


def compose_service(name: str) -> dict:
    return yaml.safe_load((ROOT / "deploy" / "compose.yaml").read_text())["services"][name]


def compose_environment() -> dict[str, str]:
    """The environment deploy/compose.yaml gives every Dagster process (and so every run)."""
    return {name: str(value) for name, value in compose_service("code")["environment"].items()}


def compose_command(name: str, local: dict[str, str]) -> list[str]:
    """The command deploy/compose.yaml gives service `name`, its addresses made local."""
    return [local.get(word, word) for word in shlex.split(compose_service(name)["command"])]


def compose_init() -> list[list[str]]:
    """The commands of compose.yaml's `init` service (the instance's tables, pool limits)."""
    script = compose_service("init")["command"][-1]
    return [shlex.split(step) for step in script.split("&&")]


def instance_config(max_runs: int) -> dict:
    """deploy/dagster.yaml as it is, but for the number of runs at once."""
    config = yaml.safe_load((ROOT / "deploy" / "dagster.yaml").read_text())
    config["concurrency"]["runs"]["max_concurrent_runs"] = max_runs
    return config


@contextmanager
def deployment(tmp_path: Path, env: dict[str, str], max_runs: int) -> Iterator[Deployment]:
    """Code server, webserver and daemon as deploy/compose.yaml starts them (its commands and
    environment), on free ports of 127.0.0.1, with `env` (the service, ADWH_HOME) over it for
    them and every run they launch."""
    dagster_home = tmp_path / "dagster-home"
    dagster_home.mkdir()
    (dagster_home / "dagster.yaml").write_text(yaml.safe_dump(instance_config(max_runs)))
    environment = {
        **os.environ,
        **compose_environment(),
        **env,
        "DAGSTER_HOME": str(dagster_home),
    }
    logs = tmp_path / "deployment-logs"
    logs.mkdir()

    def start(name: str, *command: str) -> subprocess.Popen:
        with (logs / f"{name}.log").open("wb") as log:
            return subprocess.Popen(
                [str(BIN / command[0]), *command[1:]],
                cwd=ROOT,
                env=environment,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    for step in compose_init():
        subprocess.run(
            [str(BIN / step[0]), *step[1:]], env=environment, check=True, capture_output=True
        )
    workspace_file = dagster_home / "workspace.yaml"
    local = {"0.0.0.0": "127.0.0.1", "/opt/dagster/home/workspace.yaml": str(workspace_file)}
    processes: dict[str, subprocess.Popen] = {}
    try:
        workspace = yaml.safe_load((ROOT / "deploy" / "workspace.yaml").read_text())
        for entry in workspace["load_from"]:  # each code location's server (`code`, …)
            server = entry["grpc_server"]
            name, own = server["host"], str(server["port"])
            processes[name], port = listening(
                lambda free, name=name, own=own: start(
                    name, *compose_command(name, {**local, own: str(free)})
                ),
                logs,
            )
            server |= {"host": "127.0.0.1", "port": port}
        workspace_file.write_text(yaml.safe_dump(workspace))
        processes["webserver"], web_port = listening(
            lambda port: start(
                "webserver", *compose_command("webserver", {**local, "3000": str(port)})
            ),
            logs,
        )
        processes["daemon"] = start("daemon", *compose_command("daemon", local))
        url = f"http://127.0.0.1:{web_port}"
        _wait_for(url, list(processes.values()), logs)
        yield Deployment(url, dagster_home, {name: p.pid for name, p in processes.items()})
    finally:
        stop_groups(list(processes.values()), wait=30)


def stop_groups(processes: list[subprocess.Popen], wait: float) -> None:
    """SIGTERM each process's group, then SIGKILL a group still there `wait` s later."""
    for process in processes:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
    for process in processes:
        try:
            process.wait(wait)
        except subprocess.TimeoutExpired:
            with suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)


def _wait_for(url: str, processes: list[subprocess.Popen], logs: Path) -> None:
    """Until the webserver has loaded the code location from the code server."""
    query = (
        "{ workspaceOrError { ... on Workspace { locationEntries "
        "{ locationOrLoadError { __typename } } } } }"
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        for process in processes:
            if process.poll() is not None:
                raise RuntimeError(f"a deployment process ended; see {logs}")
        try:
            body = httpx.post(f"{url}/graphql", json={"query": query}, timeout=5).json()
            entries = body["data"]["workspaceOrError"]["locationEntries"]
            loaded = [e["locationOrLoadError"]["__typename"] for e in entries]
            if loaded and all(kind == "RepositoryLocation" for kind in loaded):
                return
        except (httpx.TransportError, KeyError, TypeError, ValueError):
            pass
        time.sleep(1)
    raise TimeoutError(f"the deployment did not start within 180 s; see {logs}")


@contextmanager
def local_ui(home: Path, log: Path, env: dict[str, str] | None = None) -> Iterator[str]:
    """`adwh ui` (`dg dev`: webserver, daemon, code server) on `home`, its output in `log`;
    the webserver's URL once its code location is loaded. In its own process group, stopped
    with SIGTERM."""
    environment = {**os.environ, **(env or {}), "ADWH_HOME": str(home)}
    environment.pop("DAGSTER_HOME", None)
    adwh = str(ROOT / ".venv" / "bin" / "adwh")
    with log.open("w") as output:
        process, port = listening(
            lambda port: subprocess.Popen(
                [adwh, "ui", "--port", str(port)],
                env=environment,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            ),
            log,
        )
        url = f"http://127.0.0.1:{port}"
        try:
            _wait_for(url, [process], log)
            yield url
        finally:
            stop_groups([process], wait=60)


def listening(
    start: Callable[[int], subprocess.Popen], logs: Path, attempts: int = 3
) -> tuple[subprocess.Popen, int]:
    """A server `start(port)` started, once it listens on a free port of 127.0.0.1. A free port
    can be taken by another program before the server binds it (the server then ends, or the
    port answers for someone else): that is tried again on another port."""
    for _ in range(attempts):
        port = free_port()
        process = start(port)
        deadline = time.monotonic() + 180
        while process.poll() is None and time.monotonic() < deadline:
            if listens(process.pid, port):
                return process, port
            time.sleep(0.5)
        if process.poll() is None:
            process.kill()
            raise TimeoutError(f"{process.args[0]} did not listen within 180 s; see {logs}")
    raise RuntimeError(f"{process.args[0]} ended before listening, {attempts} times; see {logs}")


def listens(pid: int, port: int) -> bool:
    """Process `pid` or one of its children listens on `port` (not another program)."""
    try:
        root = psutil.Process(pid)
        family = [root, *root.children(recursive=True)]
    except psutil.Error:
        return False
    for process in family:
        with suppress(psutil.Error):
            for connection in process.net_connections("inet"):
                if connection.status == psutil.CONN_LISTEN and connection.laddr.port == port:
                    return True
    return False


def runs_launched(instance: dg.DagsterInstance) -> bool:
    """`adwh backfill` has launched its runs (it queues them all before it returns)."""
    return any(ACCOUNTS_TAG in run.tags for run in instance.get_runs(limit=100))


def settled(instance: dg.DagsterInstance, after: float) -> bool:
    """The runs launched, none left nor any retry to come, and the warehouse built after
    `after` (a timestamp): the end of a fanned-out backfill."""
    if not runs_launched(instance):
        return False
    now = time.time()
    for record in instance.get_run_records():
        if record.dagster_run.status not in FINISHED:
            return False
        failed = record.dagster_run.status is dg.DagsterRunStatus.FAILURE
        if failed and awaits_retry(record.dagster_run.tags, record.end_time, now):
            return False
    built = instance.get_latest_materialization_event(dg.AssetKey("warehouse_tables"))
    return built is not None and built.timestamp > after


def run_worker_pid(instance: dg.DagsterInstance, run_id: str) -> int | None:
    """The process executing `run_id`: the pid its worker reported on starting ("Started
    process for run"), or None before then. The worker's command line does not name the run
    (the code server starts it through multiprocessing)."""
    for entry in instance.all_logs(run_id, of_type=dg.DagsterEventType.ENGINE_EVENT):
        data = entry.dagster_event.engine_event_data if entry.dagster_event else None
        if data is not None and "pid" in data.metadata:
            return int(data.metadata["pid"].value)
    return None
