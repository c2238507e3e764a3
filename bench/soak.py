"""The soak: many seeded fault runs, kills at random moments, bad user input; RELIABILITY.md.

    python -m bench.soak [--seeds N] [--kills N] [--output RELIABILITY.md]

Everything runs the real `adwh` against the embedded sandbox, through `bench/scenarios.py`
(the same helpers as the tests in `make test`, which run a few cases each). What is counted is
what happened: requests the sandbox was sent, faults its plan dealt, kills that landed, and
for every run whether it ended in a clean run's warehouse (or, where faults never stop, in one
line with the previous state intact). "Lost" counts partitions that differ from a clean run's
or vanished after a run or a kill. The table is rewritten on every run: `make soak`.
"""

import argparse
import random
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

from bench import scenarios
from bench.deployment import free_port
from sandbox.faults import NO_FAULTS, FaultPlan

KINDS = {
    "429 storm (half of all requests)": lambda seed: FaultPlan(
        rate_429=0.5, retry_after_seconds=0.001, seed=seed
    ),
    "5xx burst": lambda seed: FaultPlan(rate_5xx=0.3, seed=seed),
    "slow answer past the read timeout": lambda seed: FaultPlan(
        rate_slow=0.15, slow_seconds=30.0, seed=seed
    ),
    "dropped connection": lambda seed: FaultPlan(rate_drop=0.2, seed=seed),
    "truncated JSON": lambda seed: FaultPlan(rate_truncate=0.2, seed=seed),
    "all of them at once": lambda seed: FaultPlan(
        rate_429=0.2,
        rate_5xx=0.1,
        rate_slow=0.03,
        slow_seconds=30.0,
        rate_drop=0.05,
        rate_truncate=0.05,
        retry_after_seconds=0.001,
        seed=seed,
    ),
}
NEVER_STOP = {
    "429 forever": FaultPlan(rate_429=1.0, retry_after_seconds=0.001),
    "5xx forever": FaultPlan(rate_5xx=1.0),
    "no answer, ever": FaultPlan(rate_slow=1.0, slow_seconds=30.0),
    "every connection dropped": FaultPlan(rate_drop=1.0),
    "every body truncated": FaultPlan(rate_truncate=1.0),
}
# One thing failing throughout a run, then the next daily run with the service healed.
ISOLATION_SPAN = (date(2026, 11, 15), date(2026, 11, 22))
UNREACHABLE = {"ADS_API_BASE_URL": "http://127.0.0.1:{port}", "ADS_API_KEY": "sk-soak-key"}
PARTIAL = {
    "a route answering 404 (the workflows list)": {
        "plan": FaultPlan(broken_routes=(("/v1/workflows", 404),))
    },
    "a route failing past its retries (campaign metrics, 503)": {
        "plan": FaultPlan(broken_routes=(("/v1/campaign-metrics", 503),))
    },
    "a contract break in one source (campaign metrics, one day)": {
        "tamper": scenarios.tampered("/v1/campaign-metrics", "2026-11-18", {"currency": "usd"})
    },
    "the credit budget (the store change log)": {"env": {"ADWH_MAX_CREDITS": "5"}},
    "a revoked key": {"plan": FaultPlan(broken_routes=(("/v1/", 401),)), "scheduled": True},
    "an unreachable service": {"env": UNREACHABLE, "scheduled": True},
}
BAD_INPUTS = {
    "malformed date": ["run", "--start", "2026-13-01", "--end", "2026-10-02"],
    "start after end": ["run", "--start", "2026-10-05", "--end", "2026-10-01"],
    "end after yesterday": ["run", "--start", "2026-11-01", "--end", "2026-11-30"],
    "window before the change log's retention": [
        "run", "--start", "2025-10-01", "--end", "2025-10-31", "--tables", "advertising_changes",
    ],
    "unknown table": ["run", "--start", "2026-10-01", "--end", "2026-10-02", "--tables", "x"],
}  # fmt: skip
BAD_ENVIRONMENTS = {
    "base URL without a key": {"ADS_API_BASE_URL": "https://ads.example.invalid"},
    "unknown account id": {"ADS_ACCOUNT_IDS": "0123456789abcdef01234567"},
}


@dataclass
class Row:
    """One line of the table: what was injected and what came of it."""

    what: str
    runs: int = 0
    requests: int = 0
    faults: int = 0
    ended_clean: int = 0
    ended_one_line_intact: int = 0
    lost: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)


def fault_rows(scratch: Path, seeds: int) -> list[Row]:
    rows = []
    for name, plan_for in KINDS.items():
        row = Row(name)
        started = time.monotonic()
        for seed in range(seeds):
            home = scratch / f"fault-{len(rows)}-{seed}"
            run = scenarios.faulty_run(
                home,
                scenarios.SHORT,
                plan_for(100 + seed),
                scenarios.FAST_RETRIES | scenarios.SHORT_TIMEOUT,
            )
            row.runs += 1
            row.requests += run.requests
            row.faults += sum(n for kind, n in run.dealt.items() if kind != "none")
            row.ended_clean += run.identical
            row.ended_one_line_intact += run.intact
            row.lost += 0 if run.acceptable else 1
            if not run.acceptable:
                row.notes.append(run.outcome.line[:200])
            shutil.rmtree(home, ignore_errors=True)
        row.seconds = time.monotonic() - started
        rows.append(row)
    for name, plan in NEVER_STOP.items():
        row = Row(name)
        started = time.monotonic()
        home = scenarios.copy_home(scratch / f"never-{name}", scenarios.clean_run(scenarios.SHORT))
        run = scenarios.faulty_run(
            home, scenarios.SHORT, plan, scenarios.FEW_RETRIES | {"timeout_seconds": 0.05}
        )
        row.runs, row.requests = 1, run.requests
        row.faults = sum(n for kind, n in run.dealt.items() if kind != "none")
        row.ended_one_line_intact = int(run.intact)
        row.lost = 0 if run.intact else 1
        row.notes.append(run.outcome.line[:160])
        row.seconds = time.monotonic() - started
        shutil.rmtree(home, ignore_errors=True)
        rows.append(row)
    return rows


@dataclass
class Partial:
    """One line of the partial-failure table."""

    what: str
    seconds: float
    line: str
    published: int
    failed: list[str]
    alerts: list[str]
    healed: bool
    lost: list[str]


def partial_rows(scratch: Path) -> list[Partial]:
    """Each thing failing alone through a run: what the run published and failed, what the
    alert sensors sent (of the run, or of the schedule's day where no run could start), and
    what the next daily run left different from a clean run's warehouse."""
    rows = []
    for name, case in PARTIAL.items():
        home = scratch / f"partial-{len(rows)}"
        env = {k: v.format(port=free_port()) for k, v in case.get("env", {}).items()}
        run = scenarios.isolated_run(
            home,
            ISOLATION_SPAN,
            case.get("plan", NO_FAULTS),
            scenarios.FEW_RETRIES,
            case.get("tamper"),
            **env,
        )
        alerts = run.alerts
        if case.get("scheduled"):
            with scenarios.faults(case.get("plan", NO_FAULTS)):
                _, alerts = scenarios.scheduled_day(home, **env)
        tables = len(scenarios.warehouse_digest(scenarios.clean_run(ISOLATION_SPAN)))
        rows.append(
            Partial(
                name,
                run.seconds,
                run.outcome.line,
                tables - len(run.differs),
                sorted(run.differs) if run.runs else ["no run started, nothing planned"],
                [alert.splitlines()[0] for alert in alerts],
                run.healed,
                sorted(run.lost),
            )
        )
        shutil.rmtree(home, ignore_errors=True)
    return rows


def render_partial(rows: list[Partial]) -> list[str]:
    lines = [
        "## When part of it goes wrong",
        "",
        "One thing fails throughout a run of 8 days (2026-11-15..22) into an empty home, then the "
        "next daily run goes with the service healed (`bench/scenarios.isolated_run`). "
        "*Published*: the warehouse's extracted tables equal to a clean run's after the failing "
        "run; *failed*: those that were not; *alerted*: what the alert sensors sent to a webhook "
        "on 127.0.0.1 (for a key refused or a service unreachable, no run starts: the schedule's "
        "day is shown, whose one run of `accounts` fails and is told); *lost*: tables still not "
        "a clean run's after the next daily run.",
        "",
        "| injected | run ended in | published | failed | alerted | healed by the next daily run "
        "| lost |",
        "|---|---:|---:|---|---|---|---:|",
    ]
    for r in rows:
        failed = ", ".join(r.failed) or "none"
        alerted = "<br>".join(r.alerts) or "nothing"
        lines.append(
            f"| {r.what} | {r.seconds:.1f} s | {r.published} | {failed} | {alerted} | "
            f"{'yes' if r.healed else 'no'} | **{len(r.lost)}** |"
        )
    lines += ["", "What each run said (stderr, one line):", ""]
    lines += [f"- {r.what}: `{r.line[:300]}`" for r in rows]
    return [*lines, ""]


def crash_rows(scratch: Path, kills: int, rng: random.Random) -> list[Row]:
    """Kills at the two dangerous moments, then at random moments, each from the state the
    previous kill left, with a reader polling throughout; then one run to the end."""
    clean = scenarios.clean_run(scenarios.LONG)
    home = scenarios.new_home(scratch / "crashes", clean)
    triggers = [
        ("while writing the lake", scenarios.partitions_published(rng.randint(5, 200))),
        ("while building DuckDB", scenarios.building),
    ]
    triggers += [
        (f"at {s:.1f} s", scenarios.after(s)) for s in (rng.uniform(2, 12) for _ in range(kills))
    ]
    started = time.monotonic()
    with scenarios.reader(home, clean, scratch) as seen:
        done, damage, outcome = scenarios.kill_and_recover(home, scenarios.LONG, triggers, scratch)
    landed = [k for k in done if k.killed]
    identical = outcome.code == 0 and (
        scenarios.warehouse_digest(home) == scenarios.warehouse_digest(clean)
    )
    row = Row(
        "SIGKILL of `adwh run` (then one run to the end)",
        runs=len(done) + 1,
        faults=len(landed),
        ended_clean=int(identical),
        lost=len(damage) + seen.problem_count + (0 if identical else 1),
        seconds=time.monotonic() - started,
    )
    row.notes.append(
        f"kills landed: {', '.join(k.trigger for k in landed)}; the reader made {seen.reads} "
        f"partition reads and {seen.warehouse_reads} warehouse reads and saw "
        f"{seen.problem_count} partial or missing"
    )
    row.notes += damage[:5] + seen.problems[:5]
    return [row]


def input_rows(scratch: Path) -> list[Row]:
    row = Row("bad user input (each: one line, non-zero exit, nothing written)")
    started = time.monotonic()
    cases = [(name, argv, {}) for name, argv in BAD_INPUTS.items()]
    cases += [
        (name, scenarios.run_args(scenarios.SHORT), env) for name, env in BAD_ENVIRONMENTS.items()
    ]
    blocker = scratch / "a-file"
    blocker.write_text("")
    for name, argv, env in [
        *cases,
        ("unwritable ADWH_HOME", scenarios.run_args(scenarios.SHORT), {}),
    ]:
        home = blocker / "home" if name == "unwritable ADWH_HOME" else scratch / f"input-{name}"
        outcome = scenarios.adwh(home, argv, **env)
        row.runs += 1
        refused = outcome.code != 0 and scenarios.one_line(outcome) and not home.exists()
        row.ended_one_line_intact += refused
        row.lost += 0 if refused else 1
        row.notes.append(f"{name}: `{outcome.line}`")
    row.seconds = time.monotonic() - started
    return [row]


def render(rows: list[Row], partial: list[Partial], command: str, elapsed: float) -> str:
    lines = [
        "# Reliability",
        "",
        "What the soak injected into `adwh run` and what was lost. Produced by "
        f"`{command}` (`make soak`) in {elapsed:.0f} s; rerun it to refresh this file. Every "
        "run uses the real client, pipeline, Delta lake and DuckDB against the embedded "
        "sandbox (`bench/scenarios.py`); `make test` runs a few cases of each "
        "(`tests/reliability/`, `tests/pipeline/test_cli.py`).",
        "",
        "A run is fine when it ends with a clean run's warehouse (every table equal, row for "
        "row), or, where the faults never stop, with one line on stderr after bounded retries "
        "and the previous lake and warehouse untouched. *Lost* counts runs that ended any other "
        "way, and lake partitions that differed from a clean run's, vanished, or were seen "
        "partial by a reader process reading the lake through its Delta log.",
        "",
        "| injected | runs | requests | faults / kills | clean warehouse | one line, intact "
        "| lost |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(
            f"| {r.what} | {r.runs} | {r.requests or ''} | {r.faults or ''} | "
            f"{r.ended_clean or ''} | {r.ended_one_line_intact or ''} | **{r.lost}** |"
        )
    counted = ("runs", "requests", "faults", "ended_clean", "ended_one_line_intact", "lost")
    total = Row("total", *(sum(getattr(r, name) for r in rows) for name in counted))
    lines.append(
        f"| **total** | {total.runs} | {total.requests} | {total.faults} | "
        f"{total.ended_clean} | {total.ended_one_line_intact} | **{total.lost}** |"
    )
    lines += ["", *render_partial(partial), "## Notes", ""]
    for r in rows:
        for note in r.notes:
            lines.append(f"- {r.what}: {note}")
    lines += [
        "",
        "Bad data from the service (malformed money, a number for a decimal string, unknown "
        "enum, missing field, unknown extra field, id off the pattern, unknown currency, a row "
        "outside the window, a row on two pages, `has_more` with an empty page, a stuck "
        "cursor) is covered case by case in `tests/reliability/test_bad_data.py`, and security "
        "(the key in no file or log, e-mail pseudonyms, GET only, TLS verified, ids never used "
        "as paths) in "
        "`tests/reliability/test_secrets.py`.",
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.soak", description=__doc__)
    parser.add_argument("--seeds", type=int, default=3, help="fault runs per kind")
    parser.add_argument("--kills", type=int, default=4, help="kills at random moments")
    parser.add_argument("--output", type=Path, default=scenarios.REPO / "RELIABILITY.md")
    args = parser.parse_args(argv)
    command = f"python -m bench.soak --seeds {args.seeds} --kills {args.kills}"
    started = time.monotonic()
    scratch = Path(tempfile.mkdtemp(prefix="adwh-soak-"))
    try:
        rows = fault_rows(scratch, args.seeds)
        rows += crash_rows(scratch, args.kills, random.Random(args.seeds * 1000 + args.kills))
        rows += input_rows(scratch)
        partial = partial_rows(scratch)
    finally:
        scenarios.remove_clean_runs()
        shutil.rmtree(scratch, ignore_errors=True)
    args.output.write_text(render(rows, partial, command, time.monotonic() - started))
    lost = sum(r.lost for r in rows) + sum(len(p.lost) for p in partial)
    print(f"{args.output}: {sum(r.runs for r in rows)} runs, lost {lost}", file=sys.stderr)
    return 1 if lost else 0


if __name__ == "__main__":
    sys.exit(main())
