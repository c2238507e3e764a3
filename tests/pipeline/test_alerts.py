"""Alerts reach a real webhook server and a real SMTP server, both started here on 127.0.0.1:
a failed run, a failed check, a column the service started sending, a table not updated in
time, a run refused before it started. Each message names the table, the day and the cause,
links to the run, carries no key, no destination credential and no e-mail address from the
data, and is sent once, whoever tells it: `adwh run` as its run ends, or the daemon's sensors.

The sensors are Dagster's run status sensors, evaluated on runs recorded in the home's
instance: on one run (`bench.scenarios.evaluate_alert_sensor`), or tick after tick with their
cursor, as the daemon evaluates them (`daemon_tick`)."""

import asyncio
import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy

import dagster as dg
import polars as pl
import pytest
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult
from pydantic import SecretStr

from assets.alerting import FRESHNESS_POLICY
from assets.definitions import EXTRACTION_ASSETS, daily_schedule, defs
from assets.instance import open_instance
from assets.resources import ServiceResource, WarehouseResource
from assets.run_record import restated_cause
from bench import scenarios
from bench.deployment import free_port
from launcher.execute import QUIET
from pipelines.client.errors import UnreachableError
from pipelines.client.http import RetryPolicy, ServiceClient
from pipelines.notify import (
    ALERT_CHARS,
    FAILURE_CHARS,
    Alert,
    Finding,
    deliver,
    scrubbed,
    tell_refused,
)
from pipelines.settings import AlertSettings
from sandbox.faults import FaultPlan
from tests import library
from tests.conftest import E_MAIL, SECRET, TODAY
from transforms.restatements import largest_share
from warehouse.schemas import TABLES

HOOK_TOKEN = "T0KEN-hook-secret-9d1e"
SMTP_PASSWORD = "smtp-pass-secret-77c2"
RECIPIENT = "oncall@example.com"
# One day: what an alert says does not depend on how many days the run held.
DAY = "2026-11-22"
ONE_DAY = ["run", "--start", DAY, "--end", DAY]


@pytest.fixture
def webhook() -> Iterator[tuple[str, list[str]]]:
    """A Slack-compatible webhook on 127.0.0.1: its URL and the texts it received."""
    with scenarios.webhook() as (url, received):
        yield url, received


class Mailbox:
    """An SMTP server's handler: every message it accepts, with who logged in to send it."""

    def __init__(self) -> None:
        self.messages: list = []
        self.logins: list[str] = []

    async def handle_DATA(self, server, session, envelope) -> str:  # noqa: N802 - aiosmtpd's
        self.messages.append(message_from_bytes(envelope.content, policy=policy.default))
        return "250 OK"

    def authenticate(self, server, session, envelope, mechanism, auth_data) -> AuthResult:
        ok = auth_data.login == b"alerts" and auth_data.password == SMTP_PASSWORD.encode()
        if ok:
            self.logins.append(auth_data.login.decode())
        return AuthResult(success=ok)


@pytest.fixture
def mailbox() -> Iterator[Mailbox]:
    box = Mailbox()
    port = free_port()
    controller = Controller(
        box,
        hostname="127.0.0.1",
        port=port,
        authenticator=box.authenticate,
        auth_require_tls=False,
    )
    controller.start()
    box.port = port
    yield box
    controller.stop()


@pytest.fixture
def destinations(home, webhook, mailbox, monkeypatch) -> tuple[tuple[str, list[str]], Mailbox]:
    monkeypatch.setenv("ADWH_ALERT_WEBHOOK_URL", f"{webhook[0]}/{HOOK_TOKEN}")
    monkeypatch.setenv(
        "ADWH_ALERT_SMTP_URL", f"smtp://alerts:{SMTP_PASSWORD}@127.0.0.1:{mailbox.port}"
    )
    monkeypatch.setenv("ADWH_ALERT_EMAIL_TO", RECIPIENT)
    monkeypatch.setenv("ADS_API_KEY", SECRET)  # scrubbed from every message, were it there
    return webhook, mailbox


def texts(webhook: tuple[str, list[str]], mailbox: Mailbox) -> list[str]:
    """Everything sent: each webhook text, each e-mail's subject and body."""
    bodies = [m["Subject"] + "\n" + m.get_content() for m in mailbox.messages]
    return webhook[1] + bodies


def only_run(job: str) -> str:
    with open_instance() as instance:
        (run,) = instance.get_runs(dg.RunsFilter(job_name=job))
        return run.run_id


def assert_nothing_secret(sent: list[str]) -> None:
    for text in sent:
        for secret in (SECRET, HOOK_TOKEN, SMTP_PASSWORD):
            assert secret not in text
        assert not E_MAIL.findall(text), text


def daemon_tick(sensor: str, cursor: str | None) -> tuple[object, str | None]:
    """`sensor` evaluated once as the daemon evaluates it, from `cursor`, in the code location
    of the definitions (a run executed in process has none): what it returned, and its cursor."""
    with (
        open_instance() as instance,
        dg.build_sensor_context(
            instance=instance,
            cursor=cursor,
            repository_name="__repository__",
            resources={"warehouse": WarehouseResource()},
        ) as context,
    ):
        data = defs.resolve_sensor_def(sensor).evaluate_tick(context)
        return data, data.cursor


# Seven sources of the current state's step that always fail (eight tables: `workflows` feeds
# two), one past its retries: one failed run's alert was 17,189 characters, each table's line
# repeating every source's error (issue 70).
BROKEN = (
    ("/v1/workflows", 404),
    ("/v1/portfolios", 404),
    ("/v1/adgroups", 404),
    ("/v1/targets", 404),
    ("/v1/product-ads", 404),
    ("/v1/search-terms", 503),
    ("/v1/tasks", 404),
)
FAILED_SOURCES = ("workflows", "portfolios", "adgroups", "targets", "product_ads")
FAILED_SOURCES += ("search_terms", "tasks")


def test_a_failed_run_the_cli_could_not_tell_is_told_once_by_the_daemon_to_both_destinations(
    home, embedded, destinations, monkeypatch
):
    """`adwh run` meets the webhook down: it says so, and the daemon's sensor, which reads the
    runs the CLI records, tells the run at its next tick, naming what and where: each failure
    once, short enough to read on a phone, the rest a link away."""
    webhook, mailbox = destinations
    _, cursor = daemon_tick("alert_on_failure", None)  # the sensor starts from the newest event
    embedded.faults = FaultPlan(broken_routes=BROKEN)
    down = {"ADWH_ALERT_WEBHOOK_URL": f"http://127.0.0.1:{free_port()}/{HOOK_TOKEN}"}
    outcome = scenarios.adwh(home, ONE_DAY, scenarios.FEW_RETRIES, **down)
    assert outcome.code == 1
    assert "adwh: not told to the alert destinations: " in outcome.err
    assert HOOK_TOKEN not in outcome.err and not webhook[1] and not mailbox.messages
    run_id = only_run("daily")
    _, cursor = daemon_tick("alert_on_failure", cursor)  # sent
    (text,) = webhook[1]
    (mail,) = mailbox.messages
    assert text.startswith("ads-warehouse: run failed: adgroups, portfolios, product_ads")
    assert f"· {DAY} ·" in text and "account " in text and "7 sources failed:" in text
    assert "GET /v1/workflows?limit=100: 404" in text and "503" in text
    failed = [*(f"source {name}:" for name in FAILED_SOURCES), "source workflow_performance:"]
    assert {name: text.count(name) for name in failed} == dict.fromkeys(failed, 1), text
    assert len(text) <= ALERT_CHARS and max(map(len, text.splitlines())) <= FAILURE_CHARS
    assert f"http://127.0.0.1:3000/runs/{run_id}" in text
    assert mail["To"] == RECIPIENT and mail["Subject"] == text.splitlines()[0]
    assert mailbox.logins == ["alerts"]
    assert_nothing_secret(texts(webhook, mailbox))
    again = scenarios.evaluate_alert_sensor(run_id)  # a tick again, or the failure met again
    assert isinstance(again, dg.SkipReason) and len(webhook[1]) == 1
    assert len(mailbox.messages) == 1


def test_a_failed_check_and_a_new_column_are_told_after_a_run_that_succeeded(
    home, embedded, destinations, monkeypatch
):
    webhook, mailbox = destinations
    original = embedded.handle

    def handle(method, path, query, headers):
        status, body, extra = original(method, path, query, headers)
        if path == "/v1/campaign-metrics" and body and "data" in body:
            rows = [r | {"currency": "usd"} if r.get("date") == DAY else r for r in body["data"]]
            body = {**body, "data": rows}
        if path == "/v1/campaigns" and body and "data" in body:
            body = {**body, "data": [r | {"servingRegion": "eu-1"} for r in body["data"]]}
        return status, body, extra

    monkeypatch.setattr(embedded, "handle", handle)
    outcome = scenarios.adwh(home, [*ONE_DAY, "--tables", "campaign_metrics,campaigns"])
    assert outcome.code == 1  # the contract held a partition back
    sent = list(webhook[1])  # told by `adwh run` itself: no daemon runs here
    told_again = scenarios.evaluate_alert_sensor(only_run("daily"))  # the daemon's sensor
    assert isinstance(told_again, dg.SkipReason) and webhook[1] == sent
    (check,) = [t for t in sent if t.startswith("ads-warehouse: check failed: campaign_metrics")]
    assert "contract: held back" in check and DAY in check and "currency" in check
    (column,) = [t for t in sent if t.startswith("ads-warehouse: schema changed: campaigns")]
    assert "serving_region" in column
    assert len(mailbox.messages) == len(webhook[1]) == 2
    assert_nothing_secret(texts(webhook, mailbox))


def late_tables_sensor() -> object:
    """`alert_on_late_tables` evaluated once, as the daemon does, on the home's instance."""
    with open_instance() as instance:
        resources = {"warehouse": WarehouseResource()}
        with dg.build_sensor_context(instance=instance, resources=resources) as context:
            return defs.resolve_sensor_def("alert_on_late_tables")(context)


def test_a_table_not_updated_in_time_is_told_once_and_every_table_shows_its_policy(
    home, embedded, destinations
):
    """The pictures' days are long past: yesterday's partition (by this machine's clock) is
    not in by 09:00 UTC for any daily table, while the current state was fetched just now."""
    webhook, mailbox = destinations
    assert isinstance(late_tables_sensor(), dg.SkipReason)  # nothing held: nothing is late
    tables = "campaign_metrics,campaigns"
    assert scenarios.adwh(home, [*ONE_DAY, "--tables", tables]).code == 0
    assert late_tables_sensor() is None
    (text,) = webhook[1]
    assert text.startswith("ads-warehouse: not fresh: ") and "campaign_metrics" in text
    assert "due " in text and "is not materialized (never fetched)" in text
    assert "campaigns ·" not in text  # the current state is fresh
    assert text.endswith("Assets: http://127.0.0.1:3000/assets") and len(mailbox.messages) == 1
    assert isinstance(late_tables_sensor(), dg.SkipReason)  # told once
    graph = defs.resolve_asset_graph()
    policies = {
        graph.get(key).freshness_policy for asset in EXTRACTION_ASSETS for key in asset.keys
    }
    assert policies == {FRESHNESS_POLICY}


def test_without_a_destination_nothing_is_sent_and_nothing_fails(home, embedded, monkeypatch):
    for name in ("ADWH_ALERT_WEBHOOK_URL", "ADWH_ALERT_SMTP_URL", "ADWH_ALERT_EMAIL_TO"):
        monkeypatch.delenv(name, raising=False)
    assert scenarios.adwh(home, [*ONE_DAY, "--tables", "campaigns"]).code == 0
    skipped = scenarios.evaluate_alert_sensor(only_run("daily"))
    assert isinstance(skipped, dg.SkipReason) and "no alert destination" in skipped.skip_message
    late = late_tables_sensor()
    assert isinstance(late, dg.SkipReason) and "no alert destination" in late.skip_message


def test_a_key_or_an_address_in_a_cause_never_reaches_a_message(home, webhook, monkeypatch):
    """Whatever a cause carries (it never should), the message does not."""
    monkeypatch.setenv("ADWH_ALERT_WEBHOOK_URL", webhook[0])
    monkeypatch.setenv("ADS_API_KEY", SECRET)
    cause = f"GET /v1/x: 401 key {SECRET} of jane.doe+ads@shop.example.co.uk refused"
    alert = Alert(
        "run failed", "daily 1234", "http://ui/runs/1", (Finding("run failed", "t", "d", cause),)
    )
    assert deliver([alert], AlertSettings(), home) == [alert]
    (text,) = webhook[1]
    assert SECRET not in text and not E_MAIL.findall(text)
    assert "<key>" in text and "<e-mail address>" in text
    assert scrubbed("a@b.io", []) == "<e-mail address>"


def test_a_scheduled_day_the_key_is_refused_is_one_failed_run_told_with_nothing_planned(
    home, served, destinations, monkeypatch
):
    """The schedule asks the service before it packs the day's runs; refused, it starts one
    run of `accounts` alone (no partition planned), which fails as the key does, and is told."""
    webhook, _ = destinations
    _, url = served
    monkeypatch.setenv("ADS_API_BASE_URL", url)
    monkeypatch.setenv("ADS_API_KEY", "revoked-" + SECRET)
    resources = {"service": ServiceResource(), "warehouse": WarehouseResource()}
    when = datetime(2026, 11, 23, 6, tzinfo=UTC)
    with dg.build_schedule_context(scheduled_execution_time=when, resources=resources) as context:
        (request,) = daily_schedule.evaluate_tick(context).run_requests
    assert request.asset_selection == [dg.AssetKey("accounts")]
    with open_instance() as instance:
        result = defs.resolve_job_def("extract").execute_in_process(
            instance=instance,
            run_config=QUIET,
            tags=request.tags,
            asset_selection=request.asset_selection,
            raise_on_error=False,
        )
        planned = instance.get_records_for_run(
            result.run_id, of_type=dg.DagsterEventType.ASSET_MATERIALIZATION_PLANNED
        ).records
    assert not result.success
    assert [r.event_log_entry.dagster_event.asset_key for r in planned] == [dg.AssetKey("accounts")]
    assert scenarios.evaluate_alert_sensor(result.run_id) is None
    (text,) = webhook[1]
    assert text.startswith("ads-warehouse: run failed: accounts")
    assert "GET /v1/me: 401" in text
    assert_nothing_secret([text])


def test_a_run_refused_before_it_starts_is_told_once_a_day_without_the_key(
    home, served, destinations
):
    """No Dagster run records a refusal (a refused key, a bad setting), so no sensor can tell
    it: `adwh run` does, once a day per cause, as a scheduled daily job would be told."""
    webhook, mailbox = destinations
    _, url = served
    revoked = {"ADS_API_BASE_URL": url, "ADS_API_KEY": "revoked-" + SECRET}
    for _ in range(2):  # refused every time; told once
        outcome = scenarios.adwh(home, ["run"], **revoked)
        assert outcome.code == 1 and "401" in outcome.err
    (text,) = webhook[1]
    assert text.startswith("ads-warehouse: run refused: adwh run\n")
    assert "adwh run · the daily range, refused on " in text and "401" in text
    assert text.endswith("\nadwh run") and len(mailbox.messages) == 1
    wrong = {"ADWH_LOOKBACK_DAYS": "-1"}  # a setting no run can start with
    assert scenarios.adwh(home, ONE_DAY, **wrong).code == 2
    assert len(webhook[1]) == 2 and "ADWH_LOOKBACK_DAYS" in webhook[1][1]
    assert f"adwh run · {DAY}..{DAY}, refused on " in webhook[1][1]
    assert scenarios.adwh(home, ["run", "--start", DAY]).code == 2  # a typo: not told
    assert len(webhook[1]) == 2
    assert_nothing_secret(texts(webhook, mailbox))


def test_a_restatement_is_said_in_the_summary_the_metadata_and_past_its_share_an_alert(
    home, destinations, monkeypatch
):
    """Two mornings of the daily job while the service restates its three latest days: the
    second run's summary line names the days and the money, its materialization carries them,
    and a move past ADWH_ALERT_RESTATED_SHARE is told to both destinations."""
    webhook, mailbox = destinations
    monkeypatch.setenv("ADWH_SANDBOX_RESTATE_DAYS", "3")
    monkeypatch.setenv("ADWH_ALERT_RESTATED_SHARE", "0.05")
    tables = ["--tables", "campaign_metrics"]
    days = ["--start", "2026-11-20", "--end", "2026-11-22"]
    assert scenarios.adwh(home, ["run", *days, *tables]).code == 0
    assert webhook[1] == []  # a first fetch restates nothing
    second = scenarios.adwh(
        home, ["run", "--start", "2026-11-20", "--end", "2026-11-23", *tables],
        ADWH_TODAY="2026-11-24",
    )  # fmt: skip
    assert second.code == 0, second.err
    (said,) = [line for line in second.out.splitlines() if "restated" in line]
    assert said.startswith("campaign_metrics: 3 days restated") and "sales +" in second.out
    with open_instance() as instance:
        latest = instance.get_latest_materialization_event(dg.AssetKey("campaign_metrics"))
    metadata = latest.asset_materialization.metadata
    assert metadata["restated_days"].value == 3
    assert set(metadata["money_restated"].value) == {"sales"}
    assert metadata["largest_restatement"].value["share"] > 0.05
    moved = metadata["money_restated"].value["sales"]  # in each currency's own digits
    assert all(
        re.fullmatch(r"[+-]\d+" + (r"\.\d\d" if c != "JPY" else ""), v) for c, v in moved.items()
    )
    with open_instance() as instance:
        (observed,) = instance.fetch_observations(dg.AssetKey("restatements"), limit=1).records
    said = observed.asset_observation.metadata
    assert said["cells"].value > 0 and set(said["tables"].value) == {"campaign_metrics"}
    (told,) = [t for t in webhook[1] if t.startswith("ads-warehouse: restated: campaign_metrics")]
    assert "ADWH_ALERT_RESTATED_SHARE 5.0%" in told and "sales of 2026-11-2" in told
    assert len(mailbox.messages) == len(webhook[1]) == 1
    assert_nothing_secret(texts(webhook, mailbox))


def unreachable(url: str, attempts: int) -> UnreachableError:
    """What the client says of `url`, where nothing listens, after `attempts` attempts."""

    async def first_contact() -> None:
        retry = RetryPolicy(attempts=attempts, backoff_base=0.001, backoff_max=0.002)
        async with ServiceClient(url, SecretStr(SECRET), retry=retry) as client:
            await client.first_contact("/v1/me")

    with pytest.raises(UnreachableError) as refused:
        asyncio.run(first_contact())
    return refused.value


def test_one_failure_is_told_once_a_day_whatever_the_counts_its_words_hold(home, destinations):
    """`cannot reach the service` was posted twice in one day: its words held the attempts made
    (6, then 7). What is told once is what failed: a refusal's command, day and error (its
    class, the service's address), not its words nor the range asked for; a run's failure
    without its counts (attempts, a listing's offset)."""
    webhook, mailbox = destinations
    url = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    six, seven = unreachable(url, 6), unreachable(url, 7)
    assert "(gave up after 6 attempts)" in str(six) and "(gave up after 7 attempts)" in str(seven)
    assert len(tell_refused("run", "the daily range", six)) == 1
    assert tell_refused("run", "the daily range", seven) == []
    assert tell_refused("run", f"{DAY}..{DAY}", seven) == []  # the same outage, another range
    (told,) = webhook[1]
    assert f"cannot reach the service at {url}" in told and len(mailbox.messages) == 1
    elsewhere = unreachable(f"http://127.0.0.1:{free_port()}", 6)  # another address: told
    assert len(tell_refused("run", "the daily range", elsewhere)) == 1

    def failed_after(attempts: int) -> Alert:
        cause = (
            f"account 8827, source campaign_metrics: GET /v1/campaign-metrics?limit=1000&offset="
            f"{attempts}000: 503 busy (gave up after {attempts} attempts)"
        )
        finding = Finding("run failed", "campaign_metrics", DAY, cause)
        return Alert("run failed", f"Run daily {attempts}", "http://ui/runs/1", (finding,))

    assert deliver([failed_after(6)], AlertSettings(), home) == [failed_after(6)]
    assert deliver([failed_after(7)], AlertSettings(), home) == []  # a retry, failing the same
    assert len(webhook[1]) == len(mailbox.messages) == 3


def test_an_alert_says_each_failure_once_within_its_bound_with_the_link_for_the_rest(
    home, webhook, monkeypatch
):
    """Thirty tables a step left failed, forty sources failing in it: one line of the tables,
    a line per failure while they fit in ALERT_CHARS, how many more, and the run's link."""
    monkeypatch.setenv("ADWH_ALERT_WEBHOOK_URL", webhook[0])
    pairs = [
        f"account {n:024x}, source source_{n}: GET /v1/source-{n}?start_date={DAY}&end_date="
        f"{DAY}&limit=1000&offset=3000: 503 Service Unavailable (gave up after 8 attempts)"
        for n in range(40)
    ]
    cause = "\n".join(["40 sources failed:", *pairs])
    found = tuple(Finding("run failed", f"table_{n:02}", DAY, cause) for n in range(30))
    link = "http://127.0.0.1:3000/runs/2e0e8a6e-0000-4000-8000-000000000000"
    deliver([Alert("run failed", "Run daily 2e0e8a6e", link, found)], AlertSettings(), home)
    (text,) = webhook[1]
    assert len(text) <= ALERT_CHARS and text.endswith(f"Run daily 2e0e8a6e: {link}")
    assert text.count("40 sources failed:") == 1 and "table_00, table_01" in text
    shown = [pair for pair in pairs if pair in text]
    assert shown == pairs[: len(shown)] and len(shown) >= 5
    assert f"… {len(pairs) - len(shown)} more lines: in full at the link below" in text


def test_economics_arriving_within_their_lag_move_no_alert_and_a_null_is_never_said_0(
    home, webhook, monkeypatch
):
    """A fortnight of daily jobs against a service that restated nothing posted a `restated`
    alert every day: each was seller economics arriving as the spec says they do (2.9: 48-72
    hours late), and said `moved +143.34 from 0.00` of a value that was null. Such arrivals
    are recorded, and said in the summary as what they are, but weigh nothing for the alert;
    one past the lag is told, and what was null is said not reported."""
    table, schema = "seller_product_metrics", TABLES["seller_product_metrics"]
    first, last = TODAY - timedelta(days=2), TODAY - timedelta(days=1)
    library.succeeded(library.extract(home, first, last, [table], run_id="monday"))
    held = schema.conformed(library.lake(home).scan(table)).collect()
    assert set(held["economics_status"]) == {"pending"}
    tomorrow = (TODAY + timedelta(days=1)).isoformat()
    again = library.extract(home, first, last, [table], run_id="tuesday", ADWH_TODAY=tomorrow)
    outcome = library.succeeded(again)[table]
    cells = pl.concat(outcome.restatements)
    assert set(cells["kind"]) == {"arrival"} and cells["value_before"].is_null().all()
    assert library.lake(home).scan("restatements").collect().height == cells.height  # recorded
    assert outcome.largest_restatement is None  # nothing for the alert to weigh
    assert outcome.restated_metadata()["restated"] == "economics arrived for 1 day"
    # The same arrivals in rows held past the lag (`missing`): told, the null said as such.
    largest = largest_share(schema, cells, held.with_columns(economics_status=pl.lit("missing")))
    assert largest["held"] is None and largest["kinds"] == ["arrival"]
    monkeypatch.setenv("ADWH_ALERT_WEBHOOK_URL", webhook[0])
    finding = Finding("restated", table, f"{first}..{last}", restated_cause(largest, 0.1))
    deliver(
        [Alert("restated", "Run daily 1", "http://ui/runs/1", (finding,))], AlertSettings(), home
    )
    (text,) = webhook[1]
    assert "from not reported (null), first reported past the 72-hour economics lag" in text
    assert not re.search(r"\b0\.0+\b", text), text
