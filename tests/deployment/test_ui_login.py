"""The deployment's login (deploy/proxy/Caddyfile), run for real: the machine's Caddy in front
of a real Dagster webserver, over TLS from Caddy's own authority. Skipped, with the reason, on
a machine without Caddy (the `caddy` fixture), unless ADWH_REQUIRE_POSTGRES marks CI."""

import os
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from bench.deployment import BIN, ROOT, free_port, listening, wait_until

CADDYFILE = str(ROOT / "deploy" / "proxy" / "Caddyfile")
USER, PASSWORD = "alice", "correct horse battery staple"
GRAPHQL = {"query": "{ version }"}

pytestmark = pytest.mark.timeout(300)


@contextmanager
def started(command: list[str], env: dict[str, str], logs: Path) -> Iterator[int]:
    """`command` started with `env` over this process's environment, `{port}` in either being
    a free port of 127.0.0.1; that port once the process listens on it. Stopped after."""

    def start(port: int) -> subprocess.Popen:
        argv = [word.format(port=port) for word in command]
        given = {name: value.format(port=port) for name, value in env.items()}
        with logs.open("ab") as log:
            return subprocess.Popen(
                argv, env={**os.environ, **given}, stdout=log, stderr=subprocess.STDOUT
            )

    process, port = listening(start, logs.parent)
    try:
        yield port
    finally:
        process.terminate()
        process.wait(30)


@pytest.fixture(scope="module")
def webserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Dagster webserver on our definitions, as anyone reaching its port would find it."""
    folder = tmp_path_factory.mktemp("webserver")
    env = {"DAGSTER_HOME": str(folder), "ADWH_HOME": str(folder / "home")}
    command = [str(BIN / "dagster-webserver"), "-h", "127.0.0.1", "-p", "{port}"]
    with started([*command, "-m", "assets.definitions"], env, folder / "webserver.log") as port:
        url = f"http://127.0.0.1:{port}"
        wait_until(lambda: _answers(url), "the webserver to answer", timeout=120, every=0.5)
        yield url


def _answers(url: str) -> bool:
    try:
        return httpx.post(f"{url}/graphql", json=GRAPHQL, timeout=5).status_code == 200
    except httpx.TransportError:
        return False


@dataclass
class Proxy:
    https: str  # the UI's address
    http: str  # the same on plain HTTP, which only redirects
    authority: Path  # Caddy's own root certificate, which signed the UI's

    def client(self, **kwargs) -> httpx.Client:
        """A client that trusts Caddy's authority only: the certificate is checked."""
        trust = ssl.create_default_context(cafile=str(self.authority))
        return httpx.Client(base_url=self.https, verify=trust, timeout=30, **kwargs)


@pytest.fixture(scope="module")
def proxy(caddy: str, webserver: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proxy]:
    """deploy/proxy/Caddyfile as it is, run by the machine's Caddy with one user, in front of
    `webserver`."""
    folder = tmp_path_factory.mktemp("proxy")
    users = folder / "users"
    users.write_text(f"{USER} {hashed(caddy, PASSWORD)}\n")
    http_port = free_port()
    env = {
        "ADWH_UI_USERS": str(users),
        "ADWH_UI_UPSTREAM": webserver.removeprefix("http://"),
        # The site's address and Caddy's HTTPS port agree, as on port 443.
        "ADWH_UI_ADDRESS": "localhost:{port}",
        "ADWH_PROXY_HTTPS_PORT": "{port}",
        "ADWH_PROXY_HTTP_PORT": str(http_port),
        "ADWH_PROXY_ADMIN": "localhost:0",
        "XDG_DATA_HOME": str(folder / "data"),  # Caddy's authority and certificates
        "XDG_CONFIG_HOME": str(folder / "config"),
    }
    command = [caddy, "run", "--adapter", "caddyfile", "--config", CADDYFILE]
    with started(command, env, folder / "caddy.log") as port:
        authority = folder / "data" / "caddy" / "pki" / "authorities" / "local" / "root.crt"
        wait_until(authority.exists, "Caddy's authority", timeout=60, every=0.2)
        yield Proxy(f"https://localhost:{port}", f"http://localhost:{http_port}", authority)


def hashed(caddy: str, password: str) -> str:
    """The hash an operator adds a user with (`caddy hash-password`, as deploy/README.md says)."""
    done = subprocess.run(
        [caddy, "hash-password", "--plaintext", password],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_without_credentials_the_ui_asks_for_a_login(proxy):
    with proxy.client() as ui:
        answer = ui.get("/")
    assert answer.status_code == 401
    assert answer.headers["www-authenticate"].startswith("Basic")
    assert "Dagster" not in answer.text


def test_graphql_is_unreachable_without_credentials_or_with_a_wrong_password(proxy):
    with proxy.client() as ui:
        assert ui.post("/graphql", json=GRAPHQL).status_code == 401
        assert ui.post("/graphql", json=GRAPHQL, auth=(USER, "guess")).status_code == 401
        assert ui.post("/graphql", json=GRAPHQL, auth=("mallory", PASSWORD)).status_code == 401


def test_with_credentials_the_ui_and_graphql_answer(proxy):
    with proxy.client(auth=(USER, PASSWORD)) as ui:
        page = ui.get("/")
        answer = ui.post("/graphql", json=GRAPHQL)
    assert page.status_code == 200
    assert "Dagster" in page.text
    assert answer.status_code == 200
    assert answer.json()["data"]["version"]


def test_plain_http_only_redirects_to_tls(proxy):
    answer = httpx.get(f"{proxy.http}/graphql", auth=(USER, PASSWORD))
    assert answer.status_code in (301, 308)
    assert answer.headers["location"].startswith("https://")


@pytest.mark.parametrize("users", ["", None], ids=["empty", "missing"])
def test_with_no_users_the_proxy_refuses_to_start(caddy, users, tmp_path):
    """No user file, or an empty one, must not mean an open door."""
    if users is not None:
        (tmp_path / "users").write_text(users)
    done = subprocess.run(
        [caddy, "adapt", "--adapter", "caddyfile", "--config", CADDYFILE],
        env={**os.environ, "ADWH_UI_USERS": str(tmp_path / "users")},
        capture_output=True,
        text=True,
    )
    assert done.returncode != 0
    assert str(tmp_path / "users") in done.stderr
