"""Bad input from the user: one line on stderr, a non-zero exit, nothing written."""

import pytest

from pipelines.cli import main


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "--start", "2026-10-05", "--end", "2026-10-01"], "is after --end"),
        (["run", "--start", "2026-10-01"], "give both --start and --end"),
        (["run", "--start", "2026-11-01", "--end", "2026-11-30"], "after yesterday"),
        (["run", "--start", "2019-01-01", "--end", "2019-01-02"], "before the first partition"),
    ],
)
def test_bad_ranges_are_refused_in_one_line(home, capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1
    assert not home.exists()


def test_malformed_date_is_refused(home, capsys):
    with pytest.raises(SystemExit) as exited:
        main(["run", "--start", "2026-13-01", "--end", "2026-10-02"])
    assert exited.value.code == 2
    assert "not a date" in capsys.readouterr().err


def test_base_url_without_key_is_refused(home, capsys, monkeypatch):
    monkeypatch.setenv("ADS_API_BASE_URL", "https://ads.example.invalid")
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 2
    assert "ADS_API_KEY is required" in capsys.readouterr().err
    assert not home.exists()


def test_unwritable_home_is_refused(home, capsys, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ADWH_HOME", str(blocker / "home"))
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 2
    assert "is not writable" in capsys.readouterr().err


def test_check_lists_accounts_and_scopes(home, embedded, capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert embedded.main_account.id in out and "campaigns:read" in out


def test_unknown_table_is_refused(home, capsys):
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02", "--tables", "nope"]) == 2
    assert "unknown tables: nope" in capsys.readouterr().err
    assert not home.exists()
