"""Runs sized by work: how the accounts a key reaches are packed into Dagster runs.

An agency's key reaches hundreds of client accounts, most of them small. A run has a fixed cost
(a process, Dagster and the definitions loaded, its events: a few CPU seconds) that a small
account's pages do not cover: one run per account spent most of a backfill starting runs
(bench/SCALE.md). So accounts are packed: a run extracts a pack of small accounts, and an
account gets a run of its own only when its own work is large. Each run replaces only its
accounts' rows in the shared lake (Delta commits by predicate), so runs land side by side.

A run's accounts are its tags: `adwh/accounts` (the pack, comma-separated) and `adwh/key` (a
digest of the key, never the key), which the deployment's queue limits so one key is never hit
by more runs than it tolerates. An account that fails in a pack does not fail the others
(`pipelines/extract.py`); its step fails, tags the run with the accounts to fetch again
(`adwh/retry-accounts.<step>`), and the retry Dagster launches inherits the tags, so it fetches
those accounts alone.

Accounts are tags rather than a second partition dimension: 300 accounts by 1,000 days would
be 300k partitions, past what Dagster advises per asset; a tag costs nothing, and the daily
partitions stay the one dimension the UI shows.
"""

import asyncio
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from pipelines.settings import Settings

ACCOUNTS_TAG = "adwh/accounts"
KEY_TAG = "adwh/key"
RETRY_TAG_PREFIX = "adwh/retry-accounts."
# The job of the packs' runs: every table, not the warehouse (built once after them all).
EXTRACT_JOB = "extract"

# A pack's size, by the work its accounts are expected to bring (rows: each account's rows on
# the lake's newest day, times its days). A run costs ~7 CPU-s whatever its pack (Dagster and
# the definitions loaded, a commit per table, its events); a small account's day is a few
# hundred rows and a fraction of a CPU-second (bench/SCALE.md). So a pack is filled to the day's
# work spread over PACKS_AT_LEAST runs (twice the runs deploy/dagster.yaml lets one key run at
# once, so the slots stay busy to the end and no pack is a long tail), never past ROWS_PER_RUN
# (what one run extracts in about a minute here) nor under MIN_ROWS_PER_RUN (where the start-up
# would be half a run's work). An account of half a pack's rows or more runs alone.
ROWS_PER_RUN = 200_000
MIN_ROWS_PER_RUN = 20_000
PACKS_AT_LEAST = 8
# An account the lake holds nothing of yet is guessed small, and its first runs measure it; a
# guess may be wrong a hundredfold (a `large` account), so a pack takes at most this many
# guesses, which bounds what a wrong one costs a run.
UNKNOWN_ROWS_PER_DAY = 500
GUESSES_PER_RUN = 10
# A pack is a run tag, and PostgreSQL indexes Dagster's run tags by value: a b-tree entry holds
# at most 2,704 bytes. Ids are opaque strings of any length (the spec), so a pack is bounded by
# its tag's characters, not its count: 80 ids of 24 characters with their commas.
TAG_CHARS = 2_000


@dataclass(frozen=True)
class Pack:
    """The accounts of one run, and the rows they are expected to bring."""

    accounts: tuple[str, ...]
    rows: int


def pack_budget(work: Mapping[str, int]) -> int:
    """The rows a pack is filled to: the whole work spread over PACKS_AT_LEAST runs, within
    [MIN_ROWS_PER_RUN, ROWS_PER_RUN]. A day's catch-up of many small accounts makes few large
    packs; a backfill's months of them fill each pack to ROWS_PER_RUN."""
    spread = -(-sum(work.values()) // PACKS_AT_LEAST)
    return min(ROWS_PER_RUN, max(MIN_ROWS_PER_RUN, spread))


def pack_accounts(
    work: Mapping[str, int],
    budget: int,
    guessed: frozenset[str] = frozenset(),
    guesses_per_run: int = GUESSES_PER_RUN,
    tag_chars: int = TAG_CHARS,
) -> list[Pack]:
    """Accounts (each with the rows it is expected to bring) packed into runs: an account
    expected to bring half the budget or more runs alone; the others, in the order of their
    ids, fill a pack until the next one would pass its rows, its guesses (accounts in
    `guessed`) or its tag's characters.

    Neighbouring ids, not the best fit by size: a pack's files then hold a narrow range of
    `account_id`, so the Delta statistics of every other pack's files exclude them, and a
    run's replace and its reconciliation open only its own files. Packs filled largest first
    spread their ids over the whole range, and each run read every earlier run's files of its
    days (bench/SCALE.md). Deterministic: the same accounts and sizes give the same packs,
    so the schedule's run keys are stable."""
    alone = budget // 2
    packs: list[list[str]] = []
    rows: list[int] = []
    for account in sorted(work):
        last = packs[-1] if packs else []
        joins = (
            last
            and work[account] < alone
            and work[last[0]] < alone  # not a large account's own
            and rows[-1] + work[account] <= budget
            and sum(a in guessed for a in (*last, account)) <= guesses_per_run
            and len(",".join((*last, account))) <= tag_chars
        )
        if joins:
            last.append(account)
            rows[-1] += work[account]
        else:
            packs.append([account])
            rows.append(work[account])
    return [Pack(tuple(p), r) for p, r in zip(packs, rows, strict=True)]


def short_digest(text: str) -> str:
    """Twelve hex digits standing for `text` in a tag or run key: the same for the same text,
    short whatever its length, and not the text (a key stays secret)."""
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def key_tag(settings: Settings) -> str:
    """Which key a run uses, as the run queue sees it: a digest, so the key stays secret."""
    return short_digest(settings.secret_key.get_secret_value())


def retry_tag(step: str) -> str:
    """The tag naming the accounts a retry of `step` fetches (those that failed in it)."""
    return RETRY_TAG_PREFIX + step


def for_run(settings: Settings, tags: Mapping[str, str], step: str = "") -> Settings:
    """The settings of a run's step: a retried step fetches the accounts that failed in it, a
    packed run its pack; an untagged run (`adwh run`) what the settings name."""
    accounts = tags.get(retry_tag(step)) or tags.get(ACCOUNTS_TAG)
    if not accounts:
        return settings
    return settings.model_copy(update={"account_ids": tuple(accounts.split(","))})


def account_ids(settings: Settings) -> list[str]:
    """The accounts a run of `settings` extracts: those `ADS_ACCOUNT_IDS` names (checked against
    the key), or every account the key reaches."""
    from pipelines.session import open_session

    async def go() -> list[str]:
        async with open_session(settings, for_home=True) as session:
            return [account.id for account in session.accounts]

    return asyncio.run(go())


def pack_runs(
    settings: Settings, days: int | Mapping[str, int], accounts: list[str] | None = None
) -> list[dict[str, str]]:
    """The tags of the runs extracting `accounts` (all the key reaches unless given) for
    `days` days (or each account its own days: the daily job's catch-up), packed by the rows
    per day each account brought to the lake's newest day."""
    from pipelines.destination import Destination

    wanted = accounts or account_ids(settings)
    held = Destination.of(settings).lake.rows_per_account_day()
    own = days if isinstance(days, Mapping) else dict.fromkeys(wanted, days)
    work = {account: held.get(account, UNKNOWN_ROWS_PER_DAY) * own[account] for account in wanted}
    guessed = frozenset(wanted) - held.keys()
    key = key_tag(settings)
    return [
        {ACCOUNTS_TAG: ",".join(pack.accounts), KEY_TAG: key}
        for pack in pack_accounts(work, pack_budget(work), guessed)
    ]
