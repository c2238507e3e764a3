"""The whole pipeline against implementations of the service that we did not write.

Each sandbox variant (`sandbox/variants.py`) makes the spec's open choices otherwise:
money as JSON numbers, fields we have never seen of every JSON type, short pages, unknown
totals, other window caps in other words, Retry-After as a date, 502s with no body, bodies cut
short, fractional timestamps, more currencies, an agency client that shares nothing, the change
log's entity under another name. Served
over real HTTP and extracted by `adwh run`, every variant must give exit 0 and a warehouse that
holds exactly what the variant's own answers hold: rows and exact sums per table, every new
field as a column with the values served, and no e-mail address anywhere.
"""

import contextlib
import dataclasses
import io
import re
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from functools import partial
from pathlib import Path

import dagster as dg
import duckdb
import orjson
import pytest

from assets.instance import open_instance
from assets.reconciliation import RECONCILED
from assets.runner import CREDITS_TAG
from launcher.cli import main
from pipelines.client.credits import CreditBudget
from sandbox.automation_api import PERFORMANCE
from sandbox.service import RequestRecord, SandboxService
from sandbox.windows import window_cap
from tests import library, prepared
from tests.conftest import TODAY, e_mails_under, serving, use_environment
from warehouse.build import build_warehouse
from warehouse.schemas import TABLES, Layout, snake

# 32 days: past our 31-day windows and every variant's daily cap up to 31 (7, 14, 30, 31),
# within the 90 days held.
START, END = date(2026, 10, 16), date(2026, 11, 16)
KEY = "variant-key"
# A decimal string as a currency of any digits writes it: "12.37", or "1237" in yen.
AMOUNT = re.compile(r"^-?(0|[1-9]\d*)(\.\d+)?$")
SCHEMA_CHANGE = re.compile(r"adwh: \w+: (new column|column) ")  # the summary's news, not errors
VARIANTS = (1, 2, 3, 4, 5, 6)
WHOLE_RUN_VARIANT = 1
WHOLE_SPAN = (date(2026, 11, 10), date(2026, 11, 16))
# What each variant's service was asked by the run (the tests' own questions are logged too).
RUN_REQUESTS: dict[Path, tuple] = {}
# Current-state tables fed by one cursor list each, and the expansions the pipeline asks for.
# Fields of a cluster that feed its sibling tables (cluster_products, cluster_keywords).
UNFOLDED = {"clusters": ("products", "positiveKeywords", "negativeKeywords")}
# Not one record of one list per row: checked on their own.
DERIVED = ("accounts", "cluster_products", "cluster_keywords", "workflow_campaigns")
LISTED = [t for t in TABLES.values() if t.layout is Layout.SNAPSHOT and t.name not in DERIVED]
EXPAND = {
    "seller_products": [("expand[]", "salesRanks")],
    "vendor_products": [("expand[]", "salesRanks"), ("expand[]", "customerFeedback")],
    "campaigns": [("expand[]", "optimizationConfig")],
}


class Truth:
    """The variant's own answers, asked in-process with its key: the canonical bodies, money as
    decimal strings, before the HTTP layer encodes numbers or injects faults."""

    def __init__(self, service: SandboxService, span: tuple[date, date]) -> None:
        self.service = service
        self.start, self.end = span

    def get(self, path: str, account: str | None, params: list[tuple[str, str]]) -> dict:
        headers = {"authorization": f"Bearer {KEY}"}
        if account:
            headers["service-account"] = account
        status, body, _ = self.service.handle("GET", path, params, headers)
        assert status == 200, (path, params, body)
        return body

    def accounts(self) -> list[dict]:
        return self.cursor("/v1/accounts", None, [])

    def cursor(self, path: str, account: str | None, params: list) -> list[dict]:
        rows, after = [], None
        while True:
            query = [*params, ("limit", "100")] + ([("starting_after", after)] if after else [])
            body = self.get(path, account, query)
            rows += body["data"]
            if not body["has_more"]:
                return rows
            after = body["data"][-1]["id"]

    def dated_log(self, path: str) -> list[dict]:
        """A change log's rows over the span, every account's, as the service answers."""
        dates = [("start_date", self.start.isoformat()), ("end_date", self.end.isoformat())]
        return [
            {**row, "account_id": account["id"]}
            for account in self.accounts()
            for row in self.cursor(path, account["id"], dates)
        ]

    def workflows(self, account: str) -> list[str]:
        return [row["id"] for row in self.cursor("/v1/workflows", account, [])]

    def fact(self, schema, account: str) -> list[dict]:
        """A daily fact's rows as the pipeline asks for them: each workflow's performance at
        its own path, with the workflow the path names."""
        if schema.name != "workflow_performance":
            return self.metrics(schema.resource, account)
        return [
            {**row, "workflow": workflow}
            for workflow in self.workflows(account)
            for row in self.metrics(PERFORMANCE, account, f"/v1/workflows/{workflow}/performance")
        ]

    def metrics(self, resource: str, account: str, path: str | None = None) -> list[dict]:
        cap = self.service.variant.cap(resource, "daily") or window_cap(resource, "daily")
        rows, first = [], self.start
        while first <= self.end:
            last = min(self.end, first + timedelta(days=cap - 1))
            offset = 0
            while True:
                body = self.get(
                    path or f"/v1/{resource}",
                    account,
                    [
                        ("start_date", first.isoformat()),
                        ("end_date", last.isoformat()),
                        ("granularity", "daily"),
                        ("limit", "1000"),
                        ("offset", str(offset)),
                    ],
                )
                rows += body["data"]
                offset += len(body["data"])
                if not body["has_more"]:
                    break
            first = last + timedelta(days=1)
        return rows


def run_variant(variant: int, home: Path) -> None:
    """The variant served on 127.0.0.1 and one `adwh run` of WHOLE_SPAN against it, into
    `home`; beside it (`run.json`) how it ended, what the service was asked, the credits the
    run counted (its tag) and what its reconciliation checks found."""
    service = SandboxService("small", TODAY, key=KEY, variant=variant)
    with serving(service) as url, pytest.MonkeyPatch.context() as patch:
        patch.setenv("ADWH_HOME", str(home))
        patch.setenv("ADWH_TODAY", TODAY.isoformat())
        patch.setenv("ADS_API_BASE_URL", url)
        patch.setenv("ADS_API_KEY", KEY)
        patch.delenv("ADS_ACCOUNT_IDS", raising=False)
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            first, last = (day.isoformat() for day in WHOLE_SPAN)
            status = main(["run", "--start", first, "--end", last])
        with open_instance() as instance:
            (run,) = instance.get_runs(dg.RunsFilter(job_name="daily"))  # then its warehouse's
            records = instance.get_records_for_run(
                run.run_id, of_type=dg.DagsterEventType.ASSET_CHECK_EVALUATION, limit=1000
            ).records
    failure = [line for line in errors.getvalue().splitlines() if not SCHEMA_CHANGE.match(line)]
    checks = [r.event_log_entry.dagster_event.event_specific_data for r in records]
    reconciled = {
        check.asset_key.to_user_string(): [] if check.passed else [check.description]
        for check in checks
        if check.check_name == "reconciled"
    }
    ended = f"exit {status}" + "".join(f"\n{line}" for line in failure)
    write_ran(home, service, WHOLE_SPAN, ended, int(run.tags[CREDITS_TAG]), reconciled)


def extract_variant(variant: int, home: Path) -> None:
    """The variant served on 127.0.0.1, extracted over START..END by the library as a run's
    steps extract it, reconciled as its checks reconcile, and built into a warehouse; beside
    it (`run.json`) what failed, what the service was asked, the credits the reads were billed
    and what the reconciliation found."""
    service = SandboxService("small", TODAY, key=KEY, variant=variant)
    budget = CreditBudget()
    with serving(service) as url, pytest.MonkeyPatch.context() as patch:
        use_environment(patch, home)
        service_settings = {"ADS_API_BASE_URL": url, "ADS_API_KEY": KEY}
        outcomes = library.extract(home, START, END, budget=budget, **service_settings)
        reconciled = library.reconcile(
            home, START, END, [s.name for s in RECONCILED], budget=budget, **service_settings
        )
        build_warehouse(home, library.lake(home), TABLES.values())
    failures = [
        f"{table}: {said}"
        for table, outcome in outcomes.items()
        if (said := library.failure(outcome))
    ]
    found = {
        table: [repr(outcome)] if isinstance(outcome, BaseException) else
        [str(row) for row in outcome.differences.iter_rows(named=True)]
        for table, outcome in reconciled.items()
    }  # fmt: skip
    ended = "exit 0" if not failures else "\n".join(failures)
    write_ran(home, service, (START, END), ended, budget.spent, found)


def write_ran(
    home: Path,
    service: SandboxService,
    span: tuple[date, date],
    ended: str,
    credits: int,
    reconciled: dict,
) -> None:
    requests = [dataclasses.astuple(request) for request in service.requests]
    ran = {
        "span": [day.isoformat() for day in span],
        "ended": ended,
        "requests": requests,
        "credits": credits,
        "reconciled": reconciled,
    }
    (home.parent / "run.json").write_bytes(orjson.dumps(ran))


# Each variant extracted by the library, and one also by a whole `adwh run` of a week: what the
# Dagster layer adds (the run's exit, its credits tag, its checks) holds for any variant's
# answers once it holds for one, and a whole run of 36 days costs ~40 CPU-seconds.
WAYS = [*((extract_variant, n) for n in VARIANTS), (run_variant, WHOLE_RUN_VARIANT)]


@pytest.fixture(
    scope="module",
    params=WAYS,
    ids=[f"variant{n}-{'adwh-run' if way is run_variant else 'library'}" for way, n in WAYS],
)
def extracted(request) -> tuple[SandboxService, Path, dict]:
    """The variant's service, the home it was extracted into (made once per suite, read
    only) and what the extraction ended with (`run.json`)."""
    way, variant = request.param
    home = prepared.shared(f"variant-{way.__name__}", partial(way, variant), variant)
    ran = orjson.loads((home.parent / "run.json").read_bytes())
    RUN_REQUESTS[home] = tuple(
        RequestRecord(method, path, tuple(map(tuple, query)), account, status)
        for method, path, query, account, status in ran["requests"]
    )
    return SandboxService("small", TODAY, key=KEY, variant=variant), home, ran


def span(ran: dict) -> tuple[date, date]:
    """The days the variant was extracted over."""
    first, last = (date.fromisoformat(day) for day in ran["span"])
    return first, last


def query(home: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.sql(sql).fetchall()


def same(served: object, kept: object) -> bool:
    """A served value and the warehouse's, compared by meaning: numbers by value (a widened
    column holds integers as decimals), JSON by structure, timestamps as UTC instants."""
    if served is None or kept is None:
        return served is None and kept is None
    if isinstance(served, dict | list):
        return served == (orjson.loads(kept) if isinstance(kept, str) else kept)
    if isinstance(served, bool) or isinstance(kept, bool):
        return served == kept
    if isinstance(kept, int | float | Decimal) or isinstance(served, int | float):
        return Decimal(str(served)) == Decimal(str(kept))
    if isinstance(kept, datetime):
        moment = datetime.fromisoformat(served)
        return moment.astimezone(UTC).replace(tzinfo=None) == kept if moment.tzinfo else False
    if isinstance(kept, date):
        return date.fromisoformat(served) == kept
    return served == kept


def check_rows(home: Path, table: str, key: tuple[str, ...], served: list[dict]) -> None:
    """Every served row is in the table, and every field the registry does not know is a
    column holding the value served."""
    schema = TABLES[table]
    read = {path[0] for column in schema.columns for path in column.sources}  # every name
    known = read | {"object", *UNFOLDED.get(table, ())}
    extras = sorted({name for row in served for name in row} - known)
    assert query(home, f'SELECT count(*) FROM "{table}"') == [(len(served),)], table
    if not extras:
        return
    columns = ", ".join(f'"{snake(name)}"' for name in extras)
    keys = ", ".join(f'"{k}"' for k in key)
    kept = {row[: len(key)]: row[len(key) :] for row in query(
        home, f'SELECT {keys}, {columns} FROM "{table}"')}  # fmt: skip
    for row in served:
        values = kept[tuple(_key_value(row[k]) for k in key)]
        for name, value in zip(extras, values, strict=True):
            assert same(row.get(name), value), (table, name, row.get(name), value)
    types = dict(query(home, f"SELECT column_name, data_type FROM information_schema.columns "
                             f"WHERE table_name = '{table}'"))  # fmt: skip
    for name in extras:
        values = [row[name] for row in served if row.get(name) is not None]
        if values and all(isinstance(v, str) and AMOUNT.match(v) for v in values):
            assert types[snake(name)].startswith("DECIMAL"), (table, name, values[:3])


def _key_value(value: object) -> object:
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return date.fromisoformat(value)
    return value


def test_the_run_exits_0(extracted):
    _, _, ran = extracted
    assert ran["ended"] == "exit 0"


def test_daily_facts_hold_every_row_and_exact_sums(extracted):
    service, home, ran = extracted
    truth = Truth(service, span(ran))
    accounts = truth.accounts()
    for schema in (t for t in TABLES.values() if t.layout is Layout.DAILY_FACT):
        served = [
            {**row, "account_id": account["id"]}
            for account in accounts
            for row in truth.fact(schema, account["id"])
        ]
        check_rows(home, schema.name, ("account_id", "date", *_entity(schema)), served)
        for column in (c for c in schema.columns if c.kind.value == "money" and c.source):
            expected: dict[str, Decimal] = {}
            for row in served:
                if row.get(column.name) is not None:
                    currency = row["currency"]
                    expected[currency] = expected.get(currency, 0) + Decimal(row[column.name])
            kept = query(
                home,
                f'SELECT currency, sum("{column.name}") FROM "{schema.name}" '
                f'WHERE "{column.name}" IS NOT NULL GROUP BY currency',
            )
            assert dict(kept) == expected, (schema.name, column.name)


def _entity(schema) -> tuple[str, ...]:
    """The natural key without account and date (currency and ad product keep rows apart)."""
    return tuple(k for k in schema.natural_key if k not in ("account_id", "date"))


def test_current_state_holds_every_record_and_every_new_field(extracted):
    service, home, ran = extracted
    truth = Truth(service, span(ran))
    accounts = truth.accounts()
    assert query(home, "SELECT count(*) FROM accounts") == [(len(accounts),)]
    for schema in LISTED:
        served = [
            {**row, "account_id": account["id"]}
            for account in accounts
            for row in truth.cursor(
                f"/v1/{schema.resource}", account["id"], EXPAND.get(schema.name, [])
            )
        ]
        check_rows(home, schema.name, ("account_id", "id"), served)
    memberships = [
        {**row, "account_id": account["id"], "workflow": workflow, "campaign": row["id"]}
        for account in accounts
        for workflow in truth.workflows(account["id"])
        for row in truth.cursor(f"/v1/workflows/{workflow}/campaigns", account["id"], [])
    ]
    check_rows(home, "workflow_campaigns", ("account_id", "workflow", "campaign"), memberships)


def test_the_store_change_log_holds_the_days_asked_whatever_the_service_answers(extracted):
    """Its parameters are not shown (spec 4.9): a variant ignores the dates and answers its
    whole 12 months; the warehouse keeps the days of the run, every one of them."""
    service, home, ran = extracted
    start, end = span(ran)
    changes = [
        row
        for row in Truth(service, (start, end)).dated_log("/v1/platform-changes")
        if start <= datetime.fromisoformat(row["changed_at"]).astimezone(UTC).date() <= end
    ]
    assert changes
    check_rows(home, "platform_changes", ("account_id", "id"), changes)


def test_the_run_counts_the_credits_its_reads_were_billed(extracted):
    """Spec 8: a credit per store change and per group returned; a variant that ignores the
    store log's dates bills its whole year at every window, and the count says so."""
    service, home, ran = extracted
    truth = Truth(service, span(ran))
    priced = {
        (r.path, r.query, r.account)
        for r in RUN_REQUESTS[home]
        if r.status == 200
        and (r.path == "/v1/platform-changes" or any(k.startswith("group_by") for k, _ in r.query))
    }
    billed = sum(
        len(truth.get(path, account, list(query))["data"]) for path, query, account in priced
    )
    assert ran["credits"] == billed > 0


def test_every_metrics_table_reconciles_with_the_services_own_sums(extracted):
    """The run's reconciliation asks this variant for its grouped sums, in its shapes and
    caps, and finds the warehouse equal to the cent."""
    _, _, ran = extracted
    assert sorted(ran["reconciled"]) == sorted(s.name for s in RECONCILED)
    assert {table: found for table, found in ran["reconciled"].items() if found} == {}


def test_the_change_log_and_history_are_complete(extracted):
    service, home, ran = extracted
    truth = Truth(service, span(ran))
    changes = truth.dated_log("/v1/advertising-changes")
    check_rows(home, "advertising_changes", ("account_id", "id"), changes)
    history = 0
    for account in truth.accounts():
        params = [("expand[]", "optimizationConfig")]
        campaigns = truth.cursor("/v1/campaigns", account["id"], params)
        for campaign in (c for c in campaigns if c.get("optimizationConfig")):
            day = truth.start
            while day <= truth.end:
                path = f"/v1/campaigns/{campaign['id']}/optimization-history"
                one_day = [("start_date", day.isoformat()), ("end_date", day.isoformat())]
                offset = 0
                while True:
                    body = truth.get(
                        path, account["id"], [*one_day, ("limit", "500"), ("offset", str(offset))]
                    )
                    history += len(body["data"])
                    offset += len(body["data"])
                    if not body["has_more"]:
                        break
                day += timedelta(days=1)
    assert query(home, "SELECT count(*) FROM optimization_history") == [(history,)]


def test_the_change_logs_entity_is_kept_whatever_name_the_service_gives_it(extracted):
    """Spec 4.8 shows no row fields of the change log: a variant names the changed entity as
    its filter is (`entity`), or `entityId`. Every row's `entity_id` holds it, and the
    change-log mart names each changed target from it."""
    service, home, ran = extracted
    name = service.variant.change_entity
    changes = Truth(service, span(ran)).dated_log("/v1/advertising-changes")
    served = {(row["account_id"], row["id"]): row[name] for row in changes}
    assert served and None not in served.values()
    kept = query(home, "SELECT account_id, id, entity_id FROM advertising_changes")
    assert {(account, id_): entity for account, id_, entity in kept} == served
    targets = set(query(home, "SELECT account_id, id FROM targets"))
    listed = [
        row
        for row in changes
        if row["entity_type"] == "target" and (row["account_id"], row[name]) in targets
    ]
    named = query(
        home,
        "SELECT count(*) FROM mart_change_log "
        "WHERE entity_type = 'target' AND entity_name IS NOT NULL",
    )
    assert listed and named == [(len(listed),)]


def test_every_new_column_is_recorded_once_with_its_run(extracted):
    _, home, _ = extracted
    changes = query(
        home,
        "SELECT table_name, column_name, change, run_id FROM schema_changes ORDER BY recorded_at",
    )
    added = [(t, c) for t, c, change, _ in changes if change == "added"]
    assert added and len(added) == len(set(added))
    assert all(run for *_, run in changes)
    columns = set(query(home, "SELECT table_name, column_name FROM information_schema.columns"))
    assert set(added) <= columns


def test_no_e_mail_address_is_kept_in_clear(extracted):
    _, home, _ = extracted
    assert e_mails_under(home) == {}
