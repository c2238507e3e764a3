"""What the deployment exposes: nothing beyond this machine (compose) or the cluster (Helm)
unless an operator asks, since Dagster's UI has no login."""

from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "deploy"


def published(service: dict) -> list[tuple[str, str]]:
    """(host address, port) of each port a compose service publishes, in either syntax; a
    mapping without an address binds every interface ("")."""
    bound = []
    for port in service.get("ports", []):
        if isinstance(port, dict):  # long syntax
            bound.append((port.get("host_ip", ""), str(port.get("published", ""))))
            continue
        parts = str(port).split(":")
        address = ":".join(parts[:-2]) if len(parts) > 2 else ""
        bound.append((address.strip("[]"), parts[-2] if len(parts) > 1 else parts[-1]))
    return bound


def test_every_port_compose_publishes_binds_loopback_only():
    services = yaml.safe_load((DEPLOY / "compose.yaml").read_text())["services"]
    ports = {name: published(service) for name, service in services.items()}
    assert ports["webserver"], "the UI is published (on loopback)"
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


def test_the_helm_values_expose_the_ui_inside_the_cluster_only():
    values = yaml.safe_load((DEPLOY / "kubernetes" / "values.yaml").read_text())
    assert values["ingress"]["enabled"] is False
    assert values["dagsterWebserver"]["service"]["type"] == "ClusterIP"
