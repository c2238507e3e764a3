"""A home belongs to one service; it is one folder whatever the current one; a bad address is a
bad setting. An operator's first week: a scheduled job that lost its environment, a proxy that
moved, a home at an earlier version's default."""

import hashlib
import json
from pathlib import Path

import pytest

from bench import scenarios
from launcher.cli import main
from pipelines import home as homes
from pipelines.client.accounts import Credential
from pipelines.settings import load_settings
from tests.conftest import SECRET, copy_of_a_run

THREE_DAYS = ["run", "--start", "2026-11-20", "--end", "2026-11-22", "--tables", "campaign_metrics"]


def contents(home: Path) -> dict[str, str]:
    """Every file and folder under `home`, each file with the digest of its bytes."""
    return {
        str(path.relative_to(home)): hashlib.sha256(path.read_bytes()).hexdigest()
        if path.is_file()
        else "folder"
        for path in sorted(home.rglob("*"))
    }


@pytest.fixture
def hook():
    with scenarios.webhook() as (url, received):
        yield url, received


def test_a_home_filled_from_a_service_refuses_the_sandbox_and_another_address(home, served, hook):
    """The trial of the issue: a home filled from a service at an address; then the daily job
    with no address, as a cron job that lost its environment runs it. Refused before anything
    is fetched, in one line naming both services, told to the alert destinations, the home
    byte for byte as it was. The same service through another address is refused too, until
    the home is moved there."""
    _, url = served
    service = {"ADS_API_BASE_URL": url, "ADS_API_KEY": SECRET}
    filled = scenarios.adwh(home, THREE_DAYS, **service)
    assert filled.code == 0, filled.err
    assert filled.out.splitlines()[0] == f"adwh: reading {url} into {home}"
    recorded = json.loads((home / "service.json").read_text())
    assert recorded["address"] == url and recorded["accounts"] and SECRET not in str(recorded)
    before = contents(home)

    lost = scenarios.adwh(home, ["run"], ADWH_ALERT_WEBHOOK_URL=hook[0])
    assert lost.code != 0
    assert lost.out.splitlines() == [f"adwh: reading the embedded sandbox into {home}"]
    (line,) = lost.err.splitlines()
    assert f"the home {home} belongs to {url}" in line and "reads the embedded sandbox" in line
    assert "ADWH_HOME" in line  # what to do
    (told,) = hook[1]
    assert f"belongs to {url}" in told and SECRET not in told
    assert contents(home) == before

    elsewhere = url.replace("127.0.0.1", "localhost")
    moved = {**service, "ADS_API_BASE_URL": elsewhere}
    refused = scenarios.adwh(home, THREE_DAYS, **moved)
    assert refused.code != 0 and f"adwh home move --to {elsewhere}" in refused.err
    assert contents(home) == before
    assert scenarios.adwh(home, ["home", "move", "--to", elsewhere], **service).code == 0
    said = scenarios.adwh(home, ["home"], **moved).out
    assert f"service: {elsewhere}, key api_key (business)" in said


def test_the_embedded_sandboxs_home_refuses_a_real_service(home, served):
    _, url = served
    copy_of_a_run(home, THREE_DAYS)
    assert homes.recorded(home).name == "the embedded sandbox"
    before = contents(home)
    refused = scenarios.adwh(home, THREE_DAYS, ADS_API_BASE_URL=url, ADS_API_KEY=SECRET)
    assert refused.code != 0
    assert f"belongs to the embedded sandbox, and this run reads {url}" in refused.err
    assert "home move" not in refused.err  # a sandbox's home never moves to a service
    assert contents(home) == before


def credential(id: str, *accounts: str) -> Credential:
    return Credential("api_key", "business", (), False, id=id, accounts=accounts)


def test_a_replaced_key_is_the_same_service_and_a_stranger_is_refused(home):
    """A key revoked and replaced (spec 5.2) reaches the same accounts under a new id: the same
    service, recorded. A key reaching none of the home's accounts, at the same address, is
    someone else's."""
    settings = load_settings(ADS_API_BASE_URL="https://ads.example.com/", ADS_API_KEY="k")
    homes.claim(settings, credential("key1", "a1", "a2"))
    assert homes.recorded(home).address == "https://ads.example.com"
    homes.claim(settings, credential("key2", "a2", "a3"))
    assert homes.recorded(home).credential == "key2"
    before = contents(home)
    with pytest.raises(homes.ForeignServiceError, match="as another key"):
        homes.claim(settings, credential("key3", "b1"))
    assert contents(home) == before
    same = load_settings(ADS_API_BASE_URL="HTTPS://ADS.example.com:443", ADS_API_KEY="k")
    homes.check_address(same)  # the same address, written otherwise


def test_a_home_of_an_earlier_version_is_recorded_only_by_its_own_service(home):
    """Before homes recorded their service: the accounts its lake holds tell."""
    copy_of_a_run(home, THREE_DAYS)
    (home / "service.json").unlink()
    held = homes.accounts_held(load_settings())
    settings = load_settings(ADS_API_BASE_URL="https://ads.example.com", ADS_API_KEY="k")
    with pytest.raises(homes.ForeignServiceError, match="the service of the 1 account its lake"):
        homes.claim(settings, credential("key1", "f" * 24))
    assert not (home / "service.json").exists()
    homes.claim(settings, credential("key1", *held))
    assert homes.recorded(home).accounts == tuple(held)


def test_the_default_home_is_one_folder_whatever_the_current_folder(
    home, tmp_path, monkeypatch, capsys
):
    """The platform's per-user data folder; `adwh --help` and `adwh home` say it. A home at
    the old default (`./data`) is pointed to in one line."""
    monkeypatch.delenv("ADWH_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    expected = tmp_path / "share" / "ads-warehouse"
    for folder in (tmp_path, tmp_path / "elsewhere"):
        folder.mkdir(exist_ok=True)
        monkeypatch.chdir(folder)
        assert main(["home"]) == 0
        assert capsys.readouterr().out.splitlines()[0] == f"home: {expected}"
        with pytest.raises(SystemExit):
            main(["--help"])
        assert f"home (ADWH_HOME): {expected}\n" in capsys.readouterr().out
    (tmp_path / "elsewhere" / "data" / "lake").mkdir(parents=True)
    assert main(["home"]) == 0
    hint = capsys.readouterr().err
    assert f"export ADWH_HOME={tmp_path / 'elsewhere' / 'data'}" in hint
    assert len(hint.splitlines()) == 1


def test_a_malformed_address_is_a_bad_setting_refused_at_once(home, capsys, monkeypatch):
    monkeypatch.setenv("ADS_API_BASE_URL", "htp:/oops")
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    assert main(["run"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("adwh: ADS_API_BASE_URL: not an http:// or https:// address")
    assert "htp:/oops" in line and not home.exists()


def test_the_settings_file_is_read_under_the_environment(home, tmp_path, monkeypatch):
    """A scheduler's bare environment needs no variable: the file holds them; what the
    environment sets wins."""
    file = tmp_path / "env"
    file.write_text(f"ADS_API_BASE_URL=https://ads.example.com\nADS_API_KEY={SECRET}\n")
    monkeypatch.setenv("ADWH_ENV_FILE", str(file))
    monkeypatch.setenv("ADWH_LOOKBACK_DAYS", "5")
    file.write_text(file.read_text() + "ADWH_LOOKBACK_DAYS=9\n")
    settings = load_settings()
    assert settings.base_url == "https://ads.example.com" and settings.lookback_days == 5
    assert settings.api_key.get_secret_value() == SECRET
