"""What the deployment exposes: nothing beyond this machine (compose) or the cluster (Helm)
unless an operator asks, and the UI only through the login of its proxy, since Dagster's UI has
none."""

import re
from pathlib import Path

import yaml

from bench.deployment import compose_service

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def example_settings() -> dict[str, str]:
    """deploy/env.example, which an operator copies to deploy/.env."""
    lines = (DEPLOY / "env.example").read_text().splitlines()
    return dict(line.split("=", 1) for line in lines if "=" in line and not line.startswith("#"))


def as_configured(value: str, settings: dict[str, str]) -> str:
    """`value` with compose's variables as `settings` give them; unset or empty,
    `${NAME:-default}` is the default and `${NAME}` is empty."""

    def setting(match: re.Match) -> str:
        return settings.get(match[1]) or match[2] or ""

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::?-([^}]*))?\}", setting, value)


def published(service: dict, settings: dict[str, str] | None = None) -> list[tuple[str, str]]:
    """(host address, port) of each port a compose service publishes, in either syntax, with
    `settings` for its variables; a mapping without an address binds every interface ("")."""
    settings = settings or {}
    bound = []
    for port in service.get("ports", []):
        if isinstance(port, dict):  # long syntax
            address = as_configured(str(port.get("host_ip", "")), settings)
            bound.append((address, str(port.get("published", ""))))
            continue
        parts = as_configured(str(port), settings).split(":")
        address = ":".join(parts[:-2]) if len(parts) > 2 else ""
        bound.append((address.strip("[]"), parts[-2] if len(parts) > 1 else parts[-1]))
    return bound


def test_every_port_compose_publishes_binds_loopback_only():
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    settings = example_settings()
    ports = {name: published(service, settings) for name, service in services.items()}
    assert ports["webserver"] == [], "the UI is reached through its proxy only"
    assert ports["proxy"], "the proxy is published (on loopback)"
    wide = {
        name: p for name, p in ports.items() if any(a not in ("127.0.0.1", "::1") for a, _ in p)
    }
    assert wide == {}


def test_the_published_port_check_tells_loopback_from_every_interface():
    assert published({"ports": ["3000:3000", "127.0.0.1:9001:9001", "8080"]}) == [
        ("", "3000"),
        ("127.0.0.1", "9001"),
        ("", "8080"),
    ]
    assert published({"ports": [{"target": 3000, "published": 3000}]}) == [("", "3000")]
    assert published({"ports": ["[::1]:3000:3000"]}) == [("::1", "3000")]
    assert published({"ports": ["${BIND:-127.0.0.1}:443:443", "${BIND}:80:80"]}) == [
        ("127.0.0.1", "443"),
        ("", "80"),
    ]
    assert published({"ports": ["${BIND:-127.0.0.1}:443:443"]}, {"BIND": "0.0.0.0"}) == [
        ("0.0.0.0", "443")
    ]


def test_the_helm_values_expose_the_ui_inside_the_cluster_only():
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    assert values["ingress"]["enabled"] is False
    assert values["dagsterWebserver"]["service"]["type"] == "ClusterIP"


def test_the_compose_proxy_runs_the_tested_caddyfile_with_the_users_file():
    proxy = compose_service("proxy")
    mounts = dict(volume.split(":")[:2] for volume in proxy["volumes"])
    assert mounts["./proxy/Caddyfile"] == "/etc/caddy/Caddyfile"
    assert mounts["./proxy/users"] == proxy["environment"]["ADWH_UI_USERS"]
    assert (DEPLOY / "proxy" / "Caddyfile").exists()


def test_the_kubernetes_proxy_stays_in_the_cluster_and_reads_its_users_from_a_secret():
    manifests = list(yaml.safe_load_all((DEPLOY / "kubernetes" / "proxy.yaml").read_text()))
    kinds = {m["kind"]: m for m in manifests}
    assert kinds["Service"]["spec"]["type"] == "ClusterIP"
    pod = kinds["Deployment"]["spec"]["template"]["spec"]
    (caddy,) = pod["containers"]
    env = {e["name"]: e["value"] for e in caddy["env"]}
    mounts = {m["name"]: m["mountPath"] for m in caddy["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert env["ADWH_UI_USERS"].startswith(mounts["users"] + "/")
    assert "secret" in volumes["users"]
    assert mounts["caddyfile"] == "/etc/caddy/Caddyfile"
