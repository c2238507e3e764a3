"""Bad input from the user: one line on stderr, a non-zero exit, nothing written."""

import contextlib
import io
import os
import re
from datetime import date

import duckdb
import pytest
from deltalake import DeltaTable

from bench.deployment import free_port
from launcher.cli import main
from tests import docs


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "--start", "2026-10-05", "--end", "2026-10-01"], "is after --end"),
        (["run", "--start", "2026-10-01"], "give both --start and --end"),
        (["run", "--start", "2026-11-01", "--end", "2026-11-30"], "after yesterday"),
        (
            ["run", "--start", "2019-01-01", "--end", "2019-01-02"],
            "before the warehouse's first day",
        ),
    ],
)
def test_bad_ranges_are_refused_in_one_line(home, capsys, argv, fragment):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1
    assert not home.exists()


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["run", "--start", "2026-13-01", "--end", "2026-10-02"], "not a date"),
        (["run", "--start", "yesterday", "--end", "2026-10-02"], "not a date"),
        (["run", "--start", "2026-10-01", "--end", "02/10/2026"], "not a date"),
        (["run", "--start", "2026-10-01", "--end"], "expected one argument"),
        (["run", "--since", "2026-10-01"], "unrecognized arguments"),
    ],
)
def test_malformed_input_is_refused_in_one_line(home, capsys, argv, fragment):
    """argparse's usage block would push the reason off a scheduler's last line."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and err.startswith("adwh: ") and len(err.splitlines()) == 1
    assert not home.exists()


@pytest.mark.parametrize(
    ("tables", "fragment"),
    [
        ("advertising_changes", "keeps 365 days"),
        ("optimization_history", "keeps 90 days"),
        ("campaign_metrics,optimization_other_changes", "keeps 90 days"),
    ],
)
def test_a_window_before_the_services_retention_is_refused(
    home, capsys, monkeypatch, tables, fragment
):
    """ADWH_TODAY is 2026-11-23: the change log reaches back to 2025-11-23, the history to
    2026-08-25. Asking for those tables wholly before that can only fetch nothing."""
    monkeypatch.setenv("ADWH_START_DATE", "2025-10-01")
    argv = ["run", "--start", "2025-10-01", "--end", "2025-10-31", "--tables", tables]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and "--end 2025-10-31 is before that" in err
    assert len(err.splitlines()) == 1
    assert not home.exists()


def test_a_run_of_every_table_before_a_retention_keeps_what_is_held(
    home, embedded, capsys, monkeypatch
):
    """Without --tables the metrics are still wanted: the history is skipped, not refused."""
    monkeypatch.setenv("ADWH_START_DATE", "2026-06-01")
    assert main(["run", "--start", "2026-06-01", "--end", "2026-06-01"]) == 0
    assert not (home / "lake" / "optimization_history").exists()
    assert (home / "lake" / "campaign_metrics").is_dir()
    asked = {r.path.split("/")[-1] for r in embedded.requests}
    assert "optimization-history" not in asked


def test_an_unknown_account_id_is_refused_before_anything_is_written(
    home, embedded, capsys, monkeypatch
):
    monkeypatch.setenv("ADS_ACCOUNT_IDS", f"{embedded.main_account.id},0123456789abcdef01234567")
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 1
    err = capsys.readouterr().err.strip()
    assert "0123456789abcdef01234567" in err and "cannot reach" in err
    assert len(err.splitlines()) == 1
    assert not home.exists()


def test_base_url_without_key_is_refused(home, capsys, monkeypatch):
    monkeypatch.setenv("ADS_API_BASE_URL", "https://ads.example.invalid")
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 2
    err = capsys.readouterr().err.strip()
    assert "ADS_API_KEY is required" in err and len(err.splitlines()) == 1
    assert not home.exists()


def test_unwritable_home_is_refused(home, capsys, monkeypatch, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("ADWH_HOME", str(blocker / "home"))
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not writable" in err and len(err.splitlines()) == 1
    assert blocker.read_text() == "" and sorted(tmp_path.iterdir()) == [blocker]


def test_a_read_only_home_is_refused_and_left_as_it_was(home, capsys, tmp_path):
    home.mkdir()
    home.chmod(0o500)
    try:
        if os.access(home, os.W_OK):
            pytest.skip("running as a user that can write anywhere (root)")
        assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02"]) == 2
        err = capsys.readouterr().err.strip()
        assert "is not writable" in err and len(err.splitlines()) == 1
        assert list(home.iterdir()) == []
    finally:
        home.chmod(0o700)


def test_check_lists_accounts_and_scopes(home, embedded, capsys):
    assert main(["check"]) == 0
    out = capsys.readouterr().out
    assert embedded.main_account.id in out and "campaigns:read" in out


def test_unknown_table_is_refused(home, capsys):
    assert main(["run", "--start", "2026-10-01", "--end", "2026-10-02", "--tables", "nope"]) == 2
    assert "unknown tables: nope" in capsys.readouterr().err
    assert not home.exists()


def test_without_the_sandbox_plugin_a_keyless_run_says_how_to_get_one(home, capsys, monkeypatch):
    """The product finds the sandbox by name (ADWH_SANDBOX); when it is absent, as in the
    product's wheel, the run refuses before writing anything and says what to install."""
    monkeypatch.setenv("ADWH_SANDBOX", "no_such_sandbox")
    assert main(["run", "--start", "2026-11-01", "--end", "2026-11-01"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no module 'no_such_sandbox'" in err and "uv sync --group sandbox" in err
    assert len(err.splitlines()) == 1
    assert not home.exists()


def test_no_product_module_imports_the_sandbox():
    """Loading the definitions, the CLI and every layer leaves the sandbox unimported: it is
    reached only by name, through pipelines/plugin.py, when a run needs it."""
    import subprocess
    import sys

    code = (
        "import sys, assets.definitions, launcher.cli, launcher.execute;"
        "print(sorted(m for m in sys.modules if m == 'sandbox' or m.startswith('sandbox.')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_a_backfill_without_a_webserver_is_refused_in_one_line(home, capsys, monkeypatch):
    """`adwh backfill` hands its runs to Dagster; with none listening it says where it looked
    and what to do instead, and writes nothing."""
    monkeypatch.setenv("ADWH_DAGSTER_URL", f"http://127.0.0.1:{free_port()}")
    assert main(["backfill", "--start", "2026-11-01", "--end", "2026-11-07"]) == 2
    err = capsys.readouterr().err.strip()
    assert "no Dagster webserver at http://127.0.0.1:" in err and "ADWH_DAGSTER_URL" in err
    assert "adwh run --start" in err and len(err.splitlines()) == 1
    assert not home.exists()


def test_a_backfill_range_is_checked_like_a_runs(home, capsys):
    assert main(["backfill", "--start", "2026-11-07", "--end", "2026-11-01"]) == 2
    assert "is after --end" in capsys.readouterr().err


def history_queries() -> list[str]:
    """The SQL examples of the entity history, wherever the docs hold them."""
    return [b.strip().rstrip(";") for b in docs.blocks("sql") if "FROM history_" in b]


@pytest.mark.slow(seconds=60)  # four runs of a few days: 62 s alone
def test_the_demo_writes_under_the_default_home_where_it_is_started(
    home, tmp_path, monkeypatch, capsys
):
    """`make demo` sets no ADWH_HOME: everything goes under the demo's own home beside the
    default one, in the platform's per-user data folder (`$XDG_DATA_HOME` here), whatever the
    folder it starts from. What it says fits 80 columns whatever the home: a line for what it
    does, one for what it published, the daily job the next morning and what the service
    restated meanwhile, the daily job on the mornings after, where (whole paths, on lines of
    their own), the table, what next. A snapshot a day, so the docs' history queries answer.
    (The warehouse's first day is the demo's: its first morning has no other day to catch up.)"""
    monkeypatch.delenv("ADWH_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "share"))
    monkeypatch.setenv("ADWH_START_DATE", "2026-11-18")
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--days", "5"]) == 0
    assert os.environ["ADWH_TODAY"] == "2026-11-23"  # as before its mornings
    assert os.environ["ADWH_START_DATE"] == "2026-11-18"
    demo = tmp_path / "share" / "ads-warehouse-demo"
    assert not (tmp_path / "data").exists() and not (tmp_path / "share" / "ads-warehouse").exists()
    assert (demo / "warehouse.duckdb").exists()
    assert DeltaTable.is_deltatable(str(demo / "lake" / "campaign_metrics"))
    said = capsys.readouterr().out.splitlines()
    sandbox = "of the embedded sandbox (no key needed)"
    assert said[0] == f"adwh: 2026-11-18..2026-11-19 {sandbox}"  # the same in any home
    assert said[1].startswith("adwh: 33 tables, ") and said[1].endswith(" credits spent")
    assert said[2] == "adwh: the daily job on 2026-11-21, the service's latest 2 days settled since"
    assert said[3].startswith("adwh: 33 tables, ")
    assert said[4].startswith("campaign_metrics: 2 days restated")
    others = r"adwh: \d+ other tables restated too \(see mart_restatements\)"
    assert any(re.fullmatch(others, line) for line in said[5:8]), said
    lake = next(i for i, line in enumerate(said) if line.startswith("lake: "))
    mornings = "adwh: the daily job on 2026-11-22 and 2026-11-23 too: a snapshot a day"
    assert said[lake - 1] == mornings
    assert said[lake + 1].startswith("warehouse: ")  # whole paths
    assert said[-3:-1] == ["next, in the demo's home:", f"  export ADWH_HOME={demo}"]
    assert said[-1].startswith("  .venv/bin/adwh sql")
    shown = said[:lake] + said[lake + 2 : -2]  # the paths on lines of their own
    assert len(said) < 33 and max(len(line) for line in shown) <= 80
    queries = history_queries()
    with duckdb.connect(str(demo / "warehouse.duckdb"), read_only=True) as con:
        restated = con.sql(
            "SELECT list(DISTINCT date ORDER BY date) FROM mart_restatements "
            "WHERE table_name = 'campaign_metrics'"
        ).fetchall()
        snapshots = con.sql("SELECT count(DISTINCT date) FROM campaigns_snapshots").fetchall()
        answers = [con.sql(query).fetchall() for query in queries]
    assert restated == [([date(2026, 11, 18), date(2026, 11, 19)],)], said
    assert snapshots == [(4,)]
    assert len(queries) == 2 and all(answers), queries
    monkeypatch.delenv("ADWH_HOME")  # the default home: empty, and says where the demo's is
    assert main(["sql", "SELECT 1"]) == 2
    assert f"the demo's is in its own home: export ADWH_HOME={demo}" in capsys.readouterr().err


def test_a_date_past_yesterday_names_where_today_came_from(home, capsys, monkeypatch):
    argv = ["run", "--start", "2026-11-01", "--end", "2099-01-01"]
    assert main(argv) == 2
    assert "from ADWH_TODAY)" in capsys.readouterr().err  # the tests' homes set it
    monkeypatch.delenv("ADWH_TODAY")
    assert main(argv) == 2
    assert "from today's UTC date)" in capsys.readouterr().err


def test_a_bad_setting_repeats_its_value_and_never_a_secrets(home, capsys, monkeypatch):
    from pipelines.settings import AlertSettings, ConfigurationError, load_settings

    monkeypatch.setenv("ADWH_LOOKBACK_DAYS", "three")
    assert main(["run"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("adwh: ADWH_LOOKBACK_DAYS: ") and err.endswith("(got 'three')")
    monkeypatch.setenv("ADWH_ALERT_SMTP_URL", "ftp://alerts:hunter2-secret@mail.example")
    with pytest.raises(ConfigurationError) as refused:
        load_settings(AlertSettings)
    assert "smtp://" in str(refused.value) and "hunter2-secret" not in str(refused.value)


def test_the_version_is_one_line(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out.startswith("adwh 0.")


def help_of(*command: str) -> str:
    """What `adwh <command> --help` prints, at argparse's default width."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), pytest.raises(SystemExit):
        main([*command, "--help"])
    return out.getvalue()


def entries(text: str) -> dict[str, bool]:
    """The entries of a help text (an option, or a subcommand under its `{a,b}` line) and
    whether words follow them: an entry starts at column 2 or 4, its help on its own line or
    on the next, more indented."""
    lines = text.splitlines()
    found = {}
    for i, line in enumerate(lines):
        entry = re.match(r"^ {2,4}(-\S.*?|\w[\w-]*)(?: {2,}(\S.*))?$", line)
        if entry is None:
            continue
        following = lines[i + 1] if i + 1 < len(lines) else ""
        indent = len(line) - len(line.lstrip())
        found[entry.group(1)] = (
            bool(entry.group(2)) or len(following) - len(following.lstrip()) > indent
        )
    return found


def silent_entries(text: str) -> list[str]:
    """Options without help, and subcommands argparse lists under no words (no help given)."""
    listed = entries(text)
    silent = [name for name, described in listed.items() if not described]
    return silent + [command for command in commands_in(text) if command not in listed]


def commands_in(text: str) -> list[str]:
    """The subcommands a help text offers (its `{a,b,…}` choices)."""
    choices = re.search(r"^\s+\{([\w,-]+)\}$", text, re.MULTILINE)
    return choices.group(1).split(",") if choices else []


def every_help(*command: str) -> dict[str, str]:
    """The help text of `command` and of every subcommand beneath it."""
    text = help_of(*command)
    found = {" ".join(command): text}
    for sub in commands_in(text):
        found |= every_help(*command, sub)
    return found


def test_every_command_and_option_says_what_it_is():
    helps = every_help()
    assert {"run", "backfill", "lake optimize", "sandbox serve"} <= set(helps)
    silent = {name: silent_entries(text) for name, text in helps.items()}
    assert {name: entries for name, entries in silent.items() if entries} == {}
    # the check itself sees a silent option
    assert silent_entries("options:\n  -h, --help  show help\n  --quiet\n  --x X  an x\n") == [
        "--quiet"
    ]


def test_the_run_summary_fits_80_columns_and_cuts_no_table_name(capsys):
    """Outside a terminal (a log, a pipe) the summary is 80 columns wide: every table's name
    whole, with figures as large as a year of a large account brings."""
    from datetime import date

    from launcher.execute import RunSummary, TableLine
    from launcher.report import print_summary
    from warehouse.schemas import TABLES

    figures = {"rows": 12_345_678, "partitions": 366, "pages": 123_456, "credits": 999_999}
    figures |= {"retries": 1_234, "rate_limited": 456, "elapsed_s": 12_345.6}
    lines = [TableLine(name, figures) for name in TABLES]
    print_summary(RunSummary(date(2025, 11, 1), date(2026, 10, 31), tables=lines))
    printed = capsys.readouterr().out.splitlines()
    assert max(len(line.rstrip()) for line in printed) <= 80
    shown = {line.split()[0] for line in printed if line.strip()}
    assert set(TABLES) <= shown
    assert any("12,345,678" in line and "12,346" in line for line in printed)


def test_each_subcommand_is_a_module_of_its_own_that_registers_it():
    """`adwh`'s subcommands, one module each in launcher/commands/ (`history` lives with the
    lake's): each parses to the handler of the module that registered it."""
    from launcher.cli import parser
    from launcher.commands import COMMANDS

    days = ["--start", "2026-11-01", "--end", "2026-11-02"]
    argvs = {
        "run": ["run"],
        "backfill": ["backfill", *days],
        "rebuild": ["rebuild", *days],
        "demo": ["demo"],
        "check": ["check"],
        "home": ["home"],
        "ui": ["ui"],
        "sql": ["sql"],
        "lake": ["lake", "optimize"],
        "history": ["history", "campaign_metrics"],
        "sandbox": ["sandbox", "serve"],
    }
    modules = {parser().parse_args(argv).handler.__module__ for argv in argvs.values()}
    assert modules == {command.__name__ for command in COMMANDS}
    for name, argv in argvs.items():
        module = parser().parse_args(argv).handler.__module__
        assert module == f"launcher.commands.{'lake' if name == 'history' else name}", name
