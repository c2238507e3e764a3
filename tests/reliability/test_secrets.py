"""Security: the key is in no file under ADWH_HOME (lake, raw, DuckDB, Dagster storage), no
output and no log; e-mails are kept only as keyed pseudonyms; only GET is sent; TLS is
verified; ids from the service never become file paths unchecked."""

import asyncio
import logging
from datetime import date
from pathlib import Path

import duckdb
import polars as pl
import pytest
from pydantic import SecretStr

from launcher.cli import main
from pipelines.client.errors import ServiceError, TransientError
from pipelines.client.http import RetryPolicy, ServiceClient
from tests import library
from tests.conftest import E_MAIL, SECRET, TODAY, direct, e_mails_under
from warehouse.raw import RawStore, safe_part


def files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_run_against_a_real_http_service_leaks_the_key_nowhere(
    home, served, monkeypatch, capsys, caplog
):
    service, url = served
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-01"]) == 0
    assert main(["check"]) == 0
    out = capsys.readouterr()
    assert (home / "warehouse.duckdb").exists() and (home / "raw").is_dir()
    assert files_holding(home, SECRET.encode()) == []
    assert SECRET not in out.out + out.err + caplog.text
    assert {r.method for r in service.requests} == {"GET"}


def test_a_wrong_key_fails_in_one_line_without_echoing_it(home, served, monkeypatch, capsys):
    _, url = served
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", "wrong-" + SECRET)
    assert main(["check"]) == 1
    err = capsys.readouterr().err
    assert "401" in err and SECRET not in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["run", "--start", "2026-10-01", "--end", "2026-10-02"]])
def test_a_wrong_key_fails_a_run_with_a_clear_line(home, served, monkeypatch, capsys, command):
    _, url = served
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", "nope")
    assert main(command) == 1
    err = capsys.readouterr().err.strip()
    assert "401" in err and len(err.splitlines()) == 1


# ---------------------------------------------------------------------------- Dagster storage
def test_a_run_kept_in_dagster_storage_holds_no_key(home, served, monkeypatch):
    """Runs launched from `dagster dev` or the schedule keep their event log and run config
    under $ADWH_HOME/dagster; the key must be in neither."""
    import dagster as dg

    from assets.definitions import defs
    from assets.partitions import range_tags

    service, url = served
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    storage = home / "dagster"
    storage.mkdir(parents=True)
    with dg.DagsterInstance.local_temp(str(storage)) as instance:
        result = defs.resolve_job_def("daily").execute_in_process(
            instance=instance,
            tags=range_tags(date(2026, 10, 1), date(2026, 10, 2)),
            asset_selection=[dg.AssetKey("campaigns"), dg.AssetKey("advertising_changes")],
        )
        assert result.success
    assert any(p.suffix == ".db" for p in storage.rglob("*"))  # the event log is there
    assert files_holding(home, SECRET.encode()) == []
    assert {r.method for r in service.requests} == {"GET"}


# ---------------------------------------------------------------------------- e-mails
def test_no_e_mail_address_is_stored_in_clear_anywhere(home, embedded, capsys, caplog):
    caplog.set_level(logging.DEBUG)
    assert main(["run", "--start", "2026-10-01", "--end", "2026-11-22", "--tables",
                 "advertising_changes"]) == 0  # fmt: skip
    sent = direct(embedded, "/v1/advertising-changes", limit=100, start_date="2026-10-01")
    assert E_MAIL.search(sent.text), "the service sent e-mail actors to hide"
    assert e_mails_under(home) == {}
    out = capsys.readouterr()
    assert not E_MAIL.search(out.out + out.err + caplog.text)
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        actors = [
            a for (a,) in con.sql("SELECT DISTINCT actor FROM advertising_changes").fetchall()
        ]
    assert any(a.startswith("person:") for a in actors)


def test_a_rebuild_hides_addresses_an_earlier_version_landed_in_clear(home, embedded):
    """Raw pages landed before pseudonymization are rewritten by the next rebuild (the
    library's), and the rows it publishes are the ones the run published."""
    extract_changes(home)
    before = changes_in_lake(home)
    raw = RawStore(home / "raw")
    fetch, *_ = raw.fetches("advertising_changes")
    (page, path, params, _), *_ = raw.read(fetch.folder)
    clear = direct(embedded, path, **params)
    raw.rewrite(page, path, params, clear.content)  # as an earlier version landed it
    assert e_mails_under(home)
    library.succeeded(library.rebuild(home, *CHANGES_SPAN, ["advertising_changes"]))
    assert e_mails_under(home) == {}
    assert changes_in_lake(home) == before


def changes_in_lake(home: Path) -> list[dict]:
    """The change log's rows in the lake, without when they were fetched, in order."""
    rows = pl.read_delta(str(home / "lake" / "advertising_changes")).drop("_extracted_at")
    return rows.sort("id").to_dicts()


# ---------------------------------------------------------------------------- paths
def test_an_account_id_like_a_path_is_never_used_as_one(home, embedded, monkeypatch, capsys):
    """The service names the accounts; an id like `../../x` must not become a folder."""
    original = embedded.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/accounts" and body:
            body = {**body, "data": [{**row, "id": "../../x"} for row in body["data"]]}
        return status, body, extra

    monkeypatch.setattr(embedded, "handle", handle)
    assert (
        main(["run", "--start", "2026-10-01", "--end", "2026-10-02", "--tables", "campaigns"]) == 1
    )
    err = capsys.readouterr().err.strip()
    assert "refusing to use '../../x' in a file path" in err and len(err.splitlines()) == 1
    assert [p for p in home.parent.rglob("*") if p.name == "x"] == []
    assert not list((home / "raw").rglob("*.json.gz")) if (home / "raw").exists() else True


def test_safe_part_refuses_anything_but_a_plain_name():
    for bad in ("../../x", "..", "a/b", "a\\b", "", "x" * 65, "name\x00", "é"):
        with pytest.raises(ValueError, match="refusing"):
            safe_part(bad)
    assert safe_part("0123456789abcdef01234567") == "0123456789abcdef01234567"


# ---------------------------------------------------------------------------- TLS
@pytest.fixture
def served_over_tls(tmp_path):
    """The sandbox over HTTPS on 127.0.0.1 with a self-signed certificate no one trusts
    unless told to: its URL, and the certificate (its own authority)."""
    import socket
    import subprocess
    import threading
    import time

    import uvicorn

    from sandbox.app import SandboxApp
    from sandbox.service import SandboxService

    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
         "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
         "-keyout", str(key), "-out", str(cert)],
        check=True, capture_output=True,
    )  # fmt: skip
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    server = uvicorn.Server(
        uvicorn.Config(
            SandboxApp(SandboxService("small", TODAY, key=SECRET)),
            host="127.0.0.1",
            port=port,
            log_level="error",
            ssl_certfile=str(cert),
            ssl_keyfile=str(key),
        )
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    yield f"https://127.0.0.1:{port}", cert
    server.should_exit = True
    thread.join(5)


def test_tls_is_verified_a_self_signed_service_is_refused(
    home, served_over_tls, monkeypatch, capsys
):
    monkeypatch.setenv("ADS_API_BASE_URL", served_over_tls[0])
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    assert main(["check"]) == 1
    err = capsys.readouterr().err.strip()
    assert "CERTIFICATE_VERIFY_FAILED" in err and len(err.splitlines()) == 1
    assert SECRET not in err


def test_tls_verification_is_off_only_when_the_client_is_told(served_over_tls):
    """No setting turns verification off; only code that passes verify_tls=False can, and
    then the same server answers, so the refusal above is the verification and nothing else."""

    async def me(**options) -> dict:
        async with ServiceClient(
            served_over_tls[0],
            SecretStr(SECRET),
            retry=RetryPolicy(attempts=1),
            **options,
        ) as client:
            return (await client.get("/v1/me")).body

    with pytest.raises(ServiceError, match="CERTIFICATE_VERIFY_FAILED") as refused:
        asyncio.run(me())
    assert not isinstance(refused.value, TransientError)  # not retried: it cannot get better
    assert asyncio.run(me(verify_tls=False))["object"]


def test_a_service_signed_by_a_private_authority_is_trusted_through_ssl_cert_file(
    home, served_over_tls, monkeypatch, capsys
):
    """A company's own authority: `SSL_CERT_FILE` names it, and the same check that refused
    the certificate above now passes, with verification still on."""
    url, authority = served_over_tls
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    monkeypatch.setenv("SSL_CERT_FILE", str(authority))
    assert main(["check"]) == 0, capsys.readouterr().err


# ---------------------------------------------------------------------------- the pseudonym key
CHANGES_SPAN = (date(2026, 11, 1), date(2026, 11, 22))
CHANGES = ["run", "--start", "2026-11-01", "--end", "2026-11-22", "--tables", "advertising_changes"]
KEY = "3f1e6a0c9b8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d"  # as `openssl rand -hex 24` prints


def pseudonyms_in_lake(home: Path) -> set[str]:
    """The pseudonyms the change log's actors got in the lake."""
    actors = pl.read_delta(str(home / "lake" / "advertising_changes"))["actor"]
    return {actor for actor in actors.drop_nulls() if actor.startswith("person:")}


def extract_changes(home: Path, **settings: str) -> set[str]:
    """The library's extraction of the change log into `home`: its pseudonyms."""
    outcome = library.extract(home, *CHANGES_SPAN, ["advertising_changes"], **settings)
    assert not isinstance(outcome["advertising_changes"], BaseException)
    return pseudonyms_in_lake(home)


def test_the_pseudonym_key_comes_from_a_secret_file_or_variable(
    home, embedded, tmp_path, monkeypatch
):
    """A Docker or Kubernetes secret mounted as a file, or a variable: the same key gives the
    same pseudonyms in any home, is kept in none, and a home without one makes its own (the
    library's settings and destination decide it)."""
    secret = tmp_path / "run-secrets" / "pseudonym_key"
    secret.parent.mkdir()
    secret.write_text(KEY + "\n")
    from_file = extract_changes(home, ADWH_PSEUDONYM_KEY_FILE=str(secret))
    assert from_file
    assert not (home / "secrets" / "pseudonym.key").exists()
    assert files_holding(home, KEY.encode()) == []

    assert extract_changes(tmp_path / "variable", ADWH_PSEUDONYM_KEY=KEY) == from_file

    own = extract_changes(tmp_path / "own")
    assert {p.name for p in (tmp_path / "own" / "secrets").iterdir()} == {
        "pseudonym.key",
        "pseudonym.key.fingerprint",
    }
    assert own and own.isdisjoint(from_file)


def test_a_run_with_another_pseudonym_key_is_refused_unless_told_to_rotate(
    home, embedded, capsys, monkeypatch
):
    """`adwh run` refuses another key in one line before any request (the CLI's promise);
    told to rotate, the library writes every pseudonym anew with it, and it is the home's key
    from then on (the destination's)."""
    before = extract_changes(home)  # with the key made under $ADWH_HOME/secrets
    assert before
    monkeypatch.setenv("ADWH_PSEUDONYM_KEY", KEY)
    capsys.readouterr()
    assert main(CHANGES) == 2
    err = capsys.readouterr().err.strip()
    assert "ADWH_ROTATE_PSEUDONYM_KEY" in err and len(err.splitlines()) == 1
    assert KEY not in err
    assert pseudonyms_in_lake(home) == before
    rotated = extract_changes(home, ADWH_ROTATE_PSEUDONYM_KEY="1")
    assert rotated and rotated.isdisjoint(before)
    # the secret's key is the one the data is written with now
    assert extract_changes(home) == rotated


@pytest.mark.parametrize("setting", ["ADWH_PSEUDONYM_KEY", "ADWH_PSEUDONYM_KEY_FILE"])
def test_a_short_or_unreadable_pseudonym_key_is_refused_naming_its_setting(
    home, capsys, monkeypatch, tmp_path, setting
):
    value = "short" if setting == "ADWH_PSEUDONYM_KEY" else str(tmp_path / "no-such-secret")
    monkeypatch.setenv(setting, value)
    assert main(CHANGES) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"adwh: {setting}: ") and len(err.splitlines()) == 1
    assert not home.exists()
