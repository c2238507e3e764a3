"""Typed configuration from the contract's environment variables.

Nothing reads the environment at import time but the Dagster partitions' first day
(`CalendarSettings`, `assets/partitions.py`): `Settings()` is built when a run, a resource or
the CLI starts, so tests can set variables per case and Dagster can show config without secrets.
"""

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Annotated, TypeVar
from urllib.parse import unquote, urlsplit

from platformdirs import user_config_path, user_data_path, user_state_path
from pydantic import BeforeValidator, Field, SecretStr, field_validator, model_validator
from pydantic_core import PydanticUseDefault
from pydantic_settings import (
    BaseSettings,
    DotEnvSettingsSource,
    NoDecode,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from warehouse.spec import ECONOMICS_LAG_DAYS

SANDBOX_KEY = "sandbox"
SANDBOX_PRESETS = ("small", "medium", "large")
DEFAULT_PRESET = "small"
MIN_KEY_BYTES = 32
# The most `ADWH_LOOKBACK_DAYS` may ask: a year re-read every day is a backfill, not a lookback.
MAX_LOOKBACK_DAYS = 366
# The warehouse's first day when `ADWH_START_DATE` is not set: the 30 days `adwh demo` fetches,
# so a new warehouse's Dagster partitions are the days it holds, not years of "missing" ones.
DEFAULT_HISTORY_DAYS = 30


# The default homes, one per user whatever the current folder (a scheduler starts its jobs from
# a folder of its own): the service's, and the demo's beside it, so the embedded sandbox's data
# never occupies the home a real service's data goes to (`pipelines/home.py`).
APP_NAME = "ads-warehouse"
# The home of an earlier version, relative to the folder `adwh` was started from.
OLD_DEFAULT_HOME = Path("data")
# The settings file: the contract's variables as `NAME=value` lines, read under the
# environment (which wins), so a scheduler's bare environment needs no variable at all.
SETTINGS_FILE_VARIABLE = "ADWH_ENV_FILE"


@contextmanager
def in_environment(values: Mapping[str, str]) -> Iterator[None]:
    """`values` in this process's environment while the block runs, as before afterwards: for
    the runs started meanwhile, whose settings and resources read it when they start."""
    before = {name: os.environ.get(name) for name in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for name, value in before.items():
            if value is None:
                del os.environ[name]
            else:
                os.environ[name] = value


def default_home() -> Path:
    """The platform's per-user data folder (`$XDG_DATA_HOME/ads-warehouse` on Linux, by
    default `~/.local/share/ads-warehouse`), looked up when asked: the environment names it."""
    return user_data_path(APP_NAME)


def demo_home() -> Path:
    return user_data_path(f"{APP_NAME}-demo")


def state_folder() -> Path:
    """What `adwh` keeps of its own outside any home (`$XDG_STATE_HOME/ads-warehouse`): a
    refused run changes nothing in its home, yet its alert is sent once a day."""
    return user_state_path(APP_NAME)


def settings_file() -> Path | None:
    """The settings file in force: `ADWH_ENV_FILE`'s (blank: none), else the per-user one
    (`$XDG_CONFIG_HOME/ads-warehouse/env` on Linux)."""
    named = os.environ.get(SETTINGS_FILE_VARIABLE)
    if named is None:
        return user_config_path(APP_NAME) / "env"
    return Path(named).expanduser() if named.strip() else None


class FileSettings(BaseSettings):
    """Settings read from the environment, then from the settings file (`settings_file()`),
    looked up when they are built, not when this module loads."""

    model_config = SettingsConfigDict(extra="ignore")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        from_file = DotEnvSettingsSource(settings_cls, env_file=settings_file())
        return init_settings, env_settings, from_file, file_secret_settings


S = TypeVar("S", bound=BaseSettings)
# An optional setting set to "" is unset: compose and env files write empty values.
BLANK_IS_UNSET = BeforeValidator(lambda value: None if value == "" else value)


def _default_if_blank(value: object) -> object:
    if value == "":
        raise PydanticUseDefault
    return value


# The same for a setting with a default: "" takes the default.
BLANK_IS_DEFAULT = BeforeValidator(_default_if_blank)


def _split_commas(value: object) -> object:
    if isinstance(value, str):
        return tuple(part.strip() for part in value.split(",") if part.strip())
    return value


# A list given as one variable: comma-separated, blanks around each item ignored.
COMMA_SEPARATED = BeforeValidator(_split_commas)


class ConfigurationError(ValueError):
    """A user-supplied setting is unusable; the message names the setting."""


def _absolute_home(value: object) -> object:
    """A home as a whole path: runs, workers and schedulers start in folders of their own."""
    if isinstance(value, str | Path) and str(value).strip():
        return Path(value).expanduser().absolute()
    return value


class HomeSettings(FileSettings):
    """Where everything is written (`ADWH_HOME`): all Dagster's instance storage needs."""

    home: Annotated[Path, BLANK_IS_DEFAULT, BeforeValidator(_absolute_home)] = Field(
        default_factory=default_home, alias="ADWH_HOME"
    )
    lake_url: Annotated[str | None, BLANK_IS_UNSET] = Field(default=None, alias="ADWH_LAKE_URL")
    raw_url: Annotated[str | None, BLANK_IS_UNSET] = Field(default=None, alias="ADWH_RAW_URL")
    # Hours of the lake's history kept for time travel; 0 vacuums after each run, so that
    # readers globbing plain Parquet files see only the current version.
    lake_keep_hours: int = Field(default=0, ge=0, alias="ADWH_LAKE_KEEP_HOURS")
    # The key behind the change log's pseudonyms, from a secret (deploy/README.md); without one,
    # a key made under $ADWH_HOME/secrets. A different key is refused unless rotating.
    pseudonym_key: Annotated[SecretStr | None, BLANK_IS_UNSET] = Field(
        default=None, alias="ADWH_PSEUDONYM_KEY"
    )
    pseudonym_key_file: Annotated[Path | None, BLANK_IS_UNSET] = Field(
        default=None, alias="ADWH_PSEUDONYM_KEY_FILE"
    )
    rotate_pseudonym_key: bool = Field(default=False, alias="ADWH_ROTATE_PSEUDONYM_KEY")

    def pseudonym_secret(self) -> bytes | None:
        """The key a secret gives (the variable's, else the file's), or None: at least 32
        bytes, since pseudonyms are only as private as the key is hard to guess."""
        if self.pseudonym_key is not None:
            key, setting = self.pseudonym_key.get_secret_value().encode(), "ADWH_PSEUDONYM_KEY"
        elif self.pseudonym_key_file is not None:
            setting = "ADWH_PSEUDONYM_KEY_FILE"
            try:
                key = self.pseudonym_key_file.read_bytes().strip()
            except OSError as error:
                raise ConfigurationError(
                    f"{setting}: cannot read {self.pseudonym_key_file}: {error.strerror}"
                ) from None
        else:
            return None
        if len(key) < MIN_KEY_BYTES:
            raise ConfigurationError(
                f"{setting}: the key has {len(key)} bytes; give at least {MIN_KEY_BYTES} "
                "(for example `openssl rand -hex 32`)"
            )
        return key


class CalendarSettings(FileSettings):
    """Which days the warehouse holds: from `ADWH_START_DATE` to yesterday (from `ADWH_TODAY`).

    The first day is the first Dagster partition too, so the definitions read these two when
    they load: a partitions definition is fixed when the code location loads."""

    today: date = Field(default_factory=lambda: datetime.now(UTC).date(), alias="ADWH_TODAY")
    # The first day a new account is fetched from, and the first partition; by default 30 days
    # before today, which moves with it: a warehouse meant to keep its start sets a date.
    start_date: Annotated[date | None, BLANK_IS_UNSET] = Field(
        default=None, alias="ADWH_START_DATE"
    )

    @model_validator(mode="after")
    def _start_before_today(self) -> "CalendarSettings":
        if self.start_date is not None and self.start_date >= self.today:
            raise ValueError(
                f"ADWH_START_DATE {self.start_date} is not before today ({self.today}): the "
                "warehouse holds days up to yesterday"
            )
        return self

    @property
    def today_source(self) -> str:
        """Where the reference date came from, for messages that name it."""
        return "ADWH_TODAY" if "today" in self.model_fields_set else "today's UTC date"

    @property
    def first_day(self) -> date:
        return self.start_date or self.today - timedelta(days=DEFAULT_HISTORY_DAYS)


class Settings(HomeSettings, CalendarSettings):
    """The contract's configuration (section 1)."""

    base_url: Annotated[str | None, BLANK_IS_UNSET] = Field(default=None, alias="ADS_API_BASE_URL")
    api_key: SecretStr | None = Field(default=None, alias="ADS_API_KEY")
    account_ids: Annotated[tuple[str, ...], NoDecode, COMMA_SEPARATED] = Field(
        default=(), alias="ADS_ACCOUNT_IDS"
    )
    # The stand-in used when no base URL is set (`pipelines/plugin.py`).
    sandbox: str = Field(default="sandbox", alias="ADWH_SANDBOX")
    # The recent days the daily job re-reads, yesterday included: services restate recent
    # days, and seller economics arrive 48-72 hours late (spec 2.9), so by default `pending`
    # rows become `available` without a backfill.
    lookback_days: int = Field(
        default=ECONOMICS_LAG_DAYS, ge=1, le=MAX_LOOKBACK_DAYS, alias="ADWH_LOOKBACK_DAYS"
    )
    # The most a run's reads may cost, in the credits the spec prices (pipelines/client/credits.py).
    max_credits: Annotated[int | None, BLANK_IS_UNSET] = Field(
        default=None, ge=0, alias="ADWH_MAX_CREDITS"
    )
    # The Dagster webserver `adwh backfill` hands its runs to (`make dagster`, or deploy/).
    dagster_url: str = Field(default="http://127.0.0.1:3000", alias="ADWH_DAGSTER_URL")

    @field_validator("base_url")
    @classmethod
    def _an_http_address(cls, value: str | None) -> str | None:
        """A malformed address is a bad setting, refused at once: retried, it would read as an
        outage of the service."""
        if value is None:
            return None
        parts = urlsplit(value.strip())
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("not an http:// or https:// address with a host")
        try:
            parts.port  # noqa: B018 (raises on a port that is not a number)
        except ValueError:
            raise ValueError("its port is not a number") from None
        return value.strip()

    @model_validator(mode="after")
    def _key_required_for_real_service(self) -> "Settings":
        if self.base_url and self.api_key is None:
            raise ValueError("ADS_API_KEY is required when ADS_API_BASE_URL is set")
        return self

    @property
    def uses_sandbox(self) -> bool:
        return self.base_url is None

    @property
    def secret_key(self) -> SecretStr:
        """The bearer key to send: the user's, or the sandbox's well-known one."""
        return self.api_key or SecretStr(SANDBOX_KEY)


class AlertSettings(FileSettings):
    """Where alerts go (`pipelines/notify.py`): none, either or both destinations. The
    webhook's URL holds its token and the SMTP URL its password, so both are secrets."""

    webhook_url: Annotated[SecretStr | None, BLANK_IS_UNSET] = Field(
        default=None, alias="ADWH_ALERT_WEBHOOK_URL"
    )
    smtp_url: Annotated[SecretStr | None, BLANK_IS_UNSET] = Field(
        default=None, alias="ADWH_ALERT_SMTP_URL"
    )
    email_to: Annotated[tuple[str, ...], NoDecode, COMMA_SEPARATED] = Field(
        default=(), alias="ADWH_ALERT_EMAIL_TO"
    )
    email_from: Annotated[str, BLANK_IS_DEFAULT] = Field(
        default="ads-warehouse@localhost", alias="ADWH_ALERT_EMAIL_FROM"
    )
    # The address of the Dagster UI people open, for the link to the run in each alert.
    ui_url: Annotated[str, BLANK_IS_DEFAULT] = Field(
        default="http://127.0.0.1:3000", alias="ADWH_UI_URL"
    )
    # A restatement that moves more than this share of a day's money (one account, currency
    # and amount: spend, sales, an economics figure) is told as the alert kind `restated`.
    restated_share: float = Field(default=0.1, gt=0, alias="ADWH_ALERT_RESTATED_SHARE")
    # The key the runs send (`ADS_API_KEY`): scrubbed from every message, whatever carries it.
    api_key: Annotated[SecretStr | None, BLANK_IS_UNSET] = Field(default=None, alias="ADS_API_KEY")

    @field_validator("smtp_url")
    @classmethod
    def _smtp_scheme(cls, value: SecretStr | None) -> SecretStr | None:
        scheme = value.get_secret_value().partition("://")[0] if value is not None else "smtp"
        if scheme not in ("smtp", "smtps"):
            raise ValueError(
                f"ADWH_ALERT_SMTP_URL starts with {scheme}://; use smtp:// or smtps://"
            )
        return value

    @model_validator(mode="after")
    def _recipients_with_smtp(self) -> "AlertSettings":
        if self.smtp_url is not None and not self.email_to:
            raise ValueError("ADWH_ALERT_EMAIL_TO is required when ADWH_ALERT_SMTP_URL is set")
        return self

    @property
    def configured(self) -> bool:
        return self.webhook_url is not None or self.smtp_url is not None

    def secrets(self) -> list[str]:
        """What no message may carry: the API key, and the destinations' own credentials."""
        held = (self.api_key, self.webhook_url, self.smtp_url)
        secrets = [secret.get_secret_value() for secret in held if secret is not None]
        password = urlsplit(secrets[-1]).password if self.smtp_url is not None else None
        return [*secrets, unquote(password)] if password else secrets


def load_settings(model: type[S] = Settings, **overrides: object) -> S:
    """Build settings (the contract's, or `model`'s) from the environment, turning validation
    errors into one-line messages."""
    from pydantic import ValidationError

    try:
        return model(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"]) or "configuration"
        given = first.get("input")
        shown = where not in SECRET_SETTINGS and isinstance(given, str | int | float)
        message = first["msg"].removeprefix("Value error, ")
        raise ConfigurationError(
            f"{where}: {message}" + (f" (got {given!r})" if shown else "")
        ) from None


# Settings whose value a message never repeats: keys, and URLs that hold a token or password.
SECRET_SETTINGS = {
    "ADS_API_KEY",
    "ADWH_PSEUDONYM_KEY",
    "ADWH_ALERT_WEBHOOK_URL",
    "ADWH_ALERT_SMTP_URL",
}
