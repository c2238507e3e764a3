"""Alerts delivered where the user asked: a Slack-compatible webhook and e-mail over SMTP.

What goes wrong is found by Dagster's sensors (`assets/alerting.py`); this module only says
it, once, without secrets:

- **Once.** Each finding has a fingerprint (its kind, table, days and cause, not its run), kept
  in `$ADWH_HOME/alerts/sent`: a sensor tick evaluated again, a retry that fails the same way, a
  table found late at every tick, or a run told by `adwh run` and by the daemon's sensor is not
  sent twice. Delivery holds a file lock on that log: two processes never both send one.
- **No secret.** A message is built from errors and metadata that never hold the key or an
  e-mail address from the data (the key stays in the client, addresses become pseudonyms
  before anything is written); every text is scrubbed of both all the same before it leaves,
  so a slip elsewhere cannot reach a chat channel or a mailbox.
- **Nothing configured, nothing sent, no error.** Alerts are optional.
"""

import hashlib
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

from pipelines.settings import AlertSettings, HomeSettings, load_settings
from transforms.meaning import EMAIL_IN_TEXT

# What an address from the data becomes in a message, should one ever reach it.
HIDDEN_ADDRESS = "<e-mail address>"
HIDDEN_KEY = "<key>"


@dataclass(frozen=True)
class Finding:
    """One thing that went wrong: what kind, which table and days, and why."""

    kind: str  # "run failed", "check failed", "schema changed", "restated", "not fresh"
    table: str
    days: str
    cause: str
    accounts: str = ""

    @property
    def fingerprint(self) -> str:
        text = "\x1f".join((self.kind, self.table, self.days, self.accounts, self.cause))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def line(self) -> str:
        who = f"accounts {self.accounts}" if self.accounts else "every account"
        return f"{self.table} · {self.days} · {who}: {self.cause}"


@dataclass(frozen=True)
class Alert:
    """The findings of one run of one kind, with the link to the run in the UI."""

    kind: str
    run: str  # what it is about, as people see it: "Run daily 2e0e8a6e", "Assets"
    link: str  # where the UI shows it; none for a run refused before it started
    findings: tuple[Finding, ...]

    @property
    def subject(self) -> str:
        tables = sorted({finding.table for finding in self.findings})
        return f"ads-warehouse: {self.kind}: {', '.join(tables)}"

    def text(self) -> str:
        lines = [self.subject, *(f"- {finding.line()}" for finding in self.findings)]
        return "\n".join([*lines, f"{self.run}: {self.link}" if self.link else self.run])


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


def tell_refused(command: str, days: str, cause: str) -> list[Alert]:
    """Tell that `adwh <command>` was refused before any run started (the key, the service's
    address, a setting, the home): no Dagster run records it, so no sensor can. Told once a
    day per cause: a daily job refused every morning is told every morning."""
    settings = load_settings(AlertSettings)
    what = f"adwh {command}"
    refused_on = datetime.now(UTC).date()
    finding = Finding(REFUSED, what, f"{days}, refused on {refused_on}", cause)
    return deliver([Alert(REFUSED, what, "", (finding,))], settings, HomeSettings().home)


@retry(stop=stop_after_attempt(3), wait=wait_exponential(multiplier=0.5, max=4), reraise=True)
def post_webhook(url: str, text: str) -> None:
    """Slack's incoming-webhook JSON (`{"text": …}`), which Teams' and most chat tools'
    incoming webhooks accept too."""
    httpx.post(url, json={"text": text}, timeout=10).raise_for_status()


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
