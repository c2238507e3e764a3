"""One run per account: how the accounts a key reaches fan out over Dagster runs.

An agency's key reaches hundreds of client accounts. Each is extracted by runs of its own,
tagged with the account (`adwh/account`), so a backfill of 300 accounts by a year becomes many
small runs, each retryable alone, that the run queue spreads over processes or machines. Each
run replaces only its account's rows in the shared lake (Delta commits by predicate), so runs of
different accounts land side by side.

Accounts are run tags rather than a second partition dimension: 300 accounts by 1,000 days would
be 300k partitions, past what Dagster advises per asset, and its two-dimensional backfills still
have open issues; a tag costs nothing, and the daily partitions stay the one dimension the UI
shows. Every run of a key also carries `adwh/key` (a digest of the key, never the key), which the
deployment's queue limits so one key is never hit by more runs than it tolerates.
"""

import asyncio
import hashlib
from collections.abc import Mapping

from pipelines.settings import Settings

ACCOUNT_TAG = "adwh/account"
KEY_TAG = "adwh/key"
# The job of one account's runs: every table, not the warehouse (built once after them all).
EXTRACT_JOB = "extract"


def key_tag(settings: Settings) -> str:
    """Which key a run uses, as the run queue sees it: a digest, so the key stays secret."""
    return hashlib.sha256(settings.secret_key.get_secret_value().encode()).hexdigest()[:12]


def for_run(settings: Settings, tags: Mapping[str, str]) -> Settings:
    """The settings of a run: an account-tagged run extracts that account alone."""
    account = tags.get(ACCOUNT_TAG)
    if not account:
        return settings
    return settings.model_copy(update={"account_ids": (account,)})


def account_ids(settings: Settings) -> list[str]:
    """The accounts a run of `settings` extracts: those `ADS_ACCOUNT_IDS` names (checked against
    the key), or every account the key reaches."""
    from pipelines.session import open_session

    async def go() -> list[str]:
        async with open_session(settings) as session:
            return [account.id for account in session.accounts]

    return asyncio.run(go())


def account_runs(settings: Settings, accounts: list[str] | None = None) -> list[dict[str, str]]:
    """The tags of one run per account (all the key reaches unless `accounts` are given)."""
    key = key_tag(settings)
    return [{ACCOUNT_TAG: a, KEY_TAG: key} for a in accounts or account_ids(settings)]
