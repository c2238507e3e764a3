"""The key is a secret everywhere: no file under ADWH_HOME, no output, no log holds it."""

import logging
from pathlib import Path

import pytest

from pipelines.cli import main
from tests.conftest import SECRET


def files_holding(root: Path, needle: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


def test_a_run_against_a_real_http_service_leaks_the_key_nowhere(
    home, served, monkeypatch, capsys, caplog
):
    service, url = served
    caplog.set_level(logging.DEBUG)
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-05"]) == 0
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
