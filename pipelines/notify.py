"""Alerts delivered where the user asked: a Slack-compatible webhook and e-mail over SMTP.

What goes wrong is found by Dagster's sensors (`assets/alerting.py`); this module only says
it, once, without secrets:

- **Once.** Each finding has a fingerprint, kept in `$ADWH_HOME/alerts/sent`: what failed, not
  the words that tell it nor its run. A refusal's is its command, its day and the error's class
  with what it names (the service's address; a request's path and status: `failure_key`); any
  other finding's is its kind, table, days, accounts and cause without what varies between two
  meetings of one failure (how many attempts, how many seconds, rows or credits, how far a
  listing got: `without_counts`). A sensor tick evaluated again, a retry that fails the same
  way after more attempts, a table found late at every tick, or a run told by `adwh run` and by
  the daemon's sensor is not sent twice. Delivery holds a file lock on that log: two processes
  never both send one.
- **Short.** A person reads it on a phone: tables that failed for one cause share its line,
  each failure a line of its own cut at `FAILURE_CHARS`, the whole at most `ALERT_CHARS`, the
  link to the run in the UI (which has every failure in full) always last.
- **No secret.** A message is built from errors and metadata that never hold the key or an
  e-mail address from the data (the key stays in the client, addresses become pseudonyms
  before anything is written); every text is scrubbed of both all the same before it leaves,
  so a slip elsewhere cannot reach a chat channel or a mailbox.
- **Nothing configured, nothing sent, no error.** Alerts are optional.
"""

import hashlib
import re
import smtplib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.message import EmailMessage
from pathlib import Path
from urllib.parse import unquote, urlsplit

import httpx
from filelock import FileLock
from tenacity import retry, stop_after_attempt, wait_exponential

from pipelines.client.errors import ServiceError, UnreachableError
from pipelines.settings import (
    AlertSettings,
    ConfigurationError,
    HomeSettings,
    load_settings,
    state_folder,
)
from transforms.meaning import EMAIL_IN_TEXT

# What an address from the data becomes in a message, should one ever reach it.
HIDDEN_ADDRESS = "<e-mail address>"
HIDDEN_KEY = "<key>"


# A bound on what one alert says: about a phone's screen or two. A line that holds one failure
# is cut at FAILURE_CHARS; what does not fit is counted, and the run in the UI has it in full.
ALERT_CHARS = 1500
FAILURE_CHARS = 300
SUBJECT_CHARS = 120
TABLES_CHARS = 160
CUT = "…"


@dataclass(frozen=True)
class Finding:
    """One thing that went wrong: what kind, which table and days, and why. A cause that holds
    several failures has one a line (its first line says how many). `key`, when set, is what
    failed (`failure_key`): the finding's identity, whatever its words."""

    kind: str  # "run failed", "check failed", "schema changed", "restated", "not fresh"
    table: str
    days: str
    cause: str
    accounts: str = ""
    key: str = ""

    @property
    def fingerprint(self) -> str:
        what = (
            (self.kind, self.key)
            if self.key
            else (self.kind, self.table, self.days, self.accounts, without_counts(self.cause))
        )
        return hashlib.sha256("\x1f".join(what).encode()).hexdigest()[:32]

    @property
    def where(self) -> tuple[str, str, str]:
        """What its line says before the cause: findings alike in it and the cause share one."""
        return self.days, self.accounts, self.cause


# What varies between two meetings of one failure, and so is no part of what failed: a
# request's query (how far a listing got: its offset, its cursor) and a count (attempts,
# seconds, rows, credits, sources).
QUERY = re.compile(r"(?<=[\w/])\?\S*?(?=:\s|:$|\s|$)")
COUNT = re.compile(
    r"(?<![\w.])\d[\d,.]*(?=\s?(?:attempts?|tries|times|retries|s|ms|seconds?|minutes?|"
    r"sources?|accounts?|tables?|pages?|rows?|failing rows|cells?|credits?|requests?)\b)"
)


def without_counts(text: str) -> str:
    """`text` without what varies between two meetings of one failure (QUERY, COUNT)."""
    return COUNT.sub("#", QUERY.sub("", text))


def failure_key(error: BaseException) -> str:
    """What failed, as two meetings of one failure share it: the error's class and what it
    names (a service not answering: its address; a request refused: its method, path and
    status; anything else: its words without counts), never how often it was tried."""
    name = type(error).__name__
    if isinstance(error, UnreachableError):
        return f"{name} {error.base_url}"
    if isinstance(error, ServiceError):
        return f"{name} {QUERY.sub('', error.request)} {error.status or ''}".strip()
    return f"{name} {without_counts(str(error))}"


def cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - len(CUT)].rstrip() + CUT


def named(tables: Sequence[str], limit: int) -> str:
    """`tables`, as many as `limit` characters name, then how many more."""
    said, shown = ", ".join(tables), len(tables)
    while shown > 1 and len(said) > limit:
        shown -= 1
        said = f"{', '.join(tables[:shown])} and {len(tables) - shown} more"
    return cut(said, limit)


@dataclass(frozen=True)
class Alert:
    """The findings of one run of one kind, with the link to the run in the UI."""

    kind: str
    run: str  # what it is about, as people see it: "Run daily 2e0e8a6e", "Assets"
    link: str  # where the UI shows it; none for a run refused before it started
    findings: tuple[Finding, ...]

    @property
    def subject(self) -> str:
        """The kind and the tables, as many as SUBJECT_CHARS name (then how many more)."""
        head = f"ads-warehouse: {self.kind}: "
        tables = sorted({finding.table for finding in self.findings})
        return head + named(tables, SUBJECT_CHARS - len(head))

    def lines(self) -> list[str]:
        """Its findings in lines, each cause once: the tables it failed and where, then each
        failure it holds on a line of its own."""
        tables: dict[tuple[str, str, str], set[str]] = {}
        for finding in self.findings:
            tables.setdefault(finding.where, set()).add(finding.table)
        lines = []
        for (days, accounts, cause), alike in tables.items():
            who = f"accounts {accounts}" if accounts else "every account"
            head, *each = cause.splitlines() or [""]
            said = f"- {named(sorted(alike), TABLES_CHARS)} · {days} · {who}: {head}"
            lines += [cut(said, FAILURE_CHARS), *(cut(f"  · {f}", FAILURE_CHARS) for f in each)]
        return lines

    def text(self) -> str:
        """What is sent: the subject, then its lines as ALERT_CHARS allows (what does not fit is
        counted), then the run and its link, where every failure is in full."""
        end = f"{self.run}: {self.link}" if self.link else self.run
        lines = self.lines()
        room = ALERT_CHARS - len(self.subject) - 1 - len(end)
        for shown in range(len(lines), -1, -1):
            kept = lines[:shown]
            if shown < len(lines):
                more = f"{len(lines) - shown} more line{'s' if len(lines) - shown > 1 else ''}"
                kept.append(f"… {more}: in full at the link below")
            if sum(len(line) + 1 for line in kept) <= room:
                break
        return "\n".join([self.subject, *kept, end])


def scrubbed(text: str, secrets: Iterable[str]) -> str:
    """`text` without any e-mail address and without any of `secrets` (the API key)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, HIDDEN_KEY)
    return EMAIL_IN_TEXT.sub(HIDDEN_ADDRESS.encode(), text.encode()).decode()


class SentLog:
    """The fingerprints of findings already sent (`$ADWH_HOME/alerts/sent`)."""

    def __init__(self, home: Path) -> None:
        self.path = home / "alerts" / "sent"

    def lock(self) -> FileLock:
        """Held while alerts are sent: `adwh run` and the daemon may tell one run at once."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        return FileLock(self.path.with_suffix(".lock"))

    def sent(self) -> set[str]:
        return set(self.path.read_text().split()) if self.path.exists() else set()

    def add(self, fingerprints: Iterable[str]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a") as log:
            log.writelines(f"{fingerprint}\n" for fingerprint in fingerprints)


def deliver(alerts: Sequence[Alert], settings: AlertSettings, home: Path) -> list[Alert]:
    """Send each alert's findings not sent before to every configured destination; return
    what was sent. A destination that fails raises after the others were tried, and nothing
    of that alert is marked sent, so the next tick tries again."""
    if not settings.configured:
        return []
    log = SentLog(home)
    with log.lock():
        return _deliver_new(alerts, settings, log)


def _deliver_new(alerts: Sequence[Alert], settings: AlertSettings, log: SentLog) -> list[Alert]:
    already = log.sent()
    secrets = settings.secrets()
    delivered, errors = [], []
    for alert in alerts:
        fresh = tuple(f for f in alert.findings if f.fingerprint not in already)
        if not fresh:
            continue
        new = Alert(alert.kind, alert.run, alert.link, fresh)
        subject, text = scrubbed(new.subject, secrets), scrubbed(new.text(), secrets)
        try:
            if settings.webhook_url is not None:
                post_webhook(settings.webhook_url.get_secret_value(), text)
            if settings.smtp_url is not None:
                send_mail(settings, subject, text)
        except (httpx.HTTPError, smtplib.SMTPException, OSError) as error:
            errors.append(f"{new.subject}: {type(error).__name__}: {scrubbed(str(error), secrets)}")
            continue
        log.add(f.fingerprint for f in fresh)
        already |= {f.fingerprint for f in fresh}
        delivered.append(new)
    if errors:
        raise AlertDeliveryError("; ".join(errors))
    return delivered


class AlertDeliveryError(RuntimeError):
    """A destination refused or could not be reached; the alert is tried again next tick."""


REFUSED = "run refused"


def tell_refused(command: str, days: str, cause: BaseException) -> list[Alert]:
    """Tell that `adwh <command>` was refused before any run started (the key, the service's
    address, a setting, the home): no Dagster run records it, so no sensor can. Told once a
    day per command and failure (`failure_key`: not per message, whose counts vary, nor per
    range asked for): a daily job refused every morning is told every morning."""
    settings = load_settings(AlertSettings)
    what = f"adwh {command}"
    refused_on = datetime.now(UTC).date()
    finding = Finding(
        REFUSED,
        what,
        f"{days}, refused on {refused_on}",
        str(cause),
        key=f"{what}\x1f{refused_on}\x1f{refused_home()}\x1f{failure_key(cause)}",
    )
    # Kept outside the home: a refused run changes nothing in it (it may be another
    # service's, unwritable, or not there yet).
    return deliver([Alert(REFUSED, what, "", (finding,))], settings, state_folder())


def refused_home() -> str:
    """The home a refused run was given, for the refusal's key; none when it is itself the
    setting refused."""
    try:
        return str(load_settings(HomeSettings).home)
    except ConfigurationError:
        return ""


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=0.5, max=4), reraise=True)
def post_webhook(url: str, text: str) -> None:
    """Slack's incoming-webhook JSON (`{"text": …}`), which Teams' and most chat tools'
    incoming webhooks accept too."""
    # Not the service: a chat channel's webhook, with its own three tries (not the client's).
    httpx.post(url, json={"text": text}, timeout=10).raise_for_status()  # noqa: TID251


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=0.5, max=4), reraise=True)
def send_mail(settings: AlertSettings, subject: str, text: str) -> None:
    """One e-mail to every `ADWH_ALERT_EMAIL_TO`: `smtps://` speaks TLS from the start,
    `smtp://` upgrades with STARTTLS when the server offers it; user and password from the
    URL when given."""
    url = urlsplit(settings.smtp_url.get_secret_value())
    message = EmailMessage()
    message["Subject"], message["From"] = subject, settings.email_from
    message["To"] = ", ".join(settings.email_to)
    message.set_content(text)
    connect = smtplib.SMTP_SSL if url.scheme == "smtps" else smtplib.SMTP
    with connect(url.hostname or "localhost", url.port or 0, timeout=10) as server:
        if url.scheme == "smtp" and server.has_extn("starttls"):
            server.starttls()
        if url.username:
            server.login(unquote(url.username), unquote(url.password or ""))
        server.send_message(message)
