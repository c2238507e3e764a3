"""How accounts are packed into runs: small ones together, a large one alone, none lost."""

import duckdb
from hypothesis import given
from hypothesis import strategies as st

from pipelines.destination import Destination
from pipelines.fanout import (
    ACCOUNTS_TAG,
    KEY_TAG,
    MIN_ROWS_PER_RUN,
    PACKS_AT_LEAST,
    ROWS_PER_RUN,
    TAG_CHARS,
    Pack,
    pack_accounts,
    pack_budget,
    pack_runs,
)
from pipelines.settings import load_settings
from tests.conftest import copy_of_a_run
from warehouse.schemas import TABLES, Layout

BUDGET, GUESSES, TAG = 1_000, 4, 20
SPAN_END = "2026-11-20"
ids = st.text("abcdef0123456789", min_size=1, max_size=6)
works = st.dictionaries(ids, st.integers(0, 3_000), max_size=40)


@st.composite
def packings(draw) -> tuple[dict[str, int], frozenset[str]]:
    """Accounts with their expected rows, some of them guessed (the lake knew nothing)."""
    work = draw(works)
    guessed = draw(st.sets(st.sampled_from(sorted(work)))) if work else set()
    return work, frozenset(guessed)


def pack(work: dict[str, int], guessed: frozenset[str] = frozenset()) -> list[Pack]:
    return pack_accounts(work, BUDGET, guessed, GUESSES, TAG)


@given(packings())
def test_every_account_is_in_exactly_one_pack(packing):
    packed = [account for p in pack(*packing) for account in p.accounts]
    assert sorted(packed) == sorted(packing[0])


@given(packings())
def test_a_pack_keeps_to_its_budget_guesses_and_tag_and_a_large_account_runs_alone(packing):
    work, guessed = packing
    for p in pack(work, guessed):
        assert p.rows == sum(work[a] for a in p.accounts)
        if len(p.accounts) > 1:
            assert p.rows <= BUDGET
            assert all(work[a] < BUDGET // 2 for a in p.accounts)
            assert len(guessed.intersection(p.accounts)) <= GUESSES
            assert len(",".join(p.accounts)) <= TAG


@given(packings())
def test_packing_is_the_same_every_time_whatever_the_order(packing):
    work, guessed = packing
    assert pack(work, guessed) == pack(dict(reversed(list(work.items()))), guessed)


@given(packings())
def test_a_pack_holds_neighbouring_accounts(packing):
    """The packs, one after the other, hold the accounts in the order of their ids: no account
    of another pack sorts between a pack's first and last, so its files' `account_id`
    statistics exclude every other pack's (`Lake.scan`)."""
    assert [a for p in pack(*packing) for a in p.accounts] == sorted(packing[0])


@given(st.integers(1, 60), st.integers(0, BUDGET // 2 - 1), st.booleans())
def test_equal_small_accounts_fill_packs_as_far_as_their_limits_allow(accounts, rows, guessed):
    """As few runs as the rows, the guesses and the tag allow: no pack is closed early."""
    work = {f"a{i:02}": rows for i in range(accounts)}  # three characters and a comma each
    packs = pack(work, frozenset(work) if guessed else frozenset())
    per_pack = min(BUDGET // rows if rows else accounts, (TAG + 1) // 4)
    if guessed:
        per_pack = min(per_pack, GUESSES)
    assert len(packs) == -(-accounts // per_pack)


def test_a_large_account_alone_and_the_small_ones_together():
    packs = pack({"big": 600, "s1": 10, "s2": 20, "s3": 5})
    assert [p.accounts for p in packs] == [("big",), ("s1", "s2", "s3")]


@given(st.lists(st.integers(0, 5_000), max_size=2_000))
def test_a_pack_budget_spreads_the_work_within_its_bounds(rows):
    """A day of many small accounts is spread over PACKS_AT_LEAST packs; a little work makes
    one pack (start-up would outweigh it), a month of many accounts packs of ROWS_PER_RUN."""
    work = {f"a{i}": r for i, r in enumerate(rows)}
    budget = pack_budget(work)
    assert MIN_ROWS_PER_RUN <= budget <= ROWS_PER_RUN
    if MIN_ROWS_PER_RUN < budget < ROWS_PER_RUN:
        assert budget * PACKS_AT_LEAST >= sum(rows) > (budget - 1) * PACKS_AT_LEAST


def test_a_thousand_small_accounts_day_makes_a_few_full_packs():
    """The daily catch-up of an agency: 1,000 accounts the lake knows, ~400 rows each (three
    days of the sandbox's `small`), ids of 24 characters: packs as long as the tag allows,
    about a dozen, where packs of ten made a hundred runs."""
    work = {f"{i:024x}": 400 for i in range(1_000)}
    packs = pack_accounts(work, pack_budget(work))
    assert {len(p.accounts) for p in packs[:-1]} == {TAG_CHARS // 25}
    assert len(packs) == 13


def test_runs_are_packed_by_what_the_lake_holds_of_each_account(home, embedded):
    """Each account weighs its rows on the newest day of every dated table (counted here from
    the warehouse); an account the lake does not hold is guessed small."""
    ran = copy_of_a_run(home, ["run", "--start", "2026-11-18", "--end", SPAN_END])
    settings = load_settings()
    weights = Destination.of(settings).lake.rows_per_account_day()
    with duckdb.connect(str(ran / "warehouse.duckdb"), read_only=True) as con:
        counted: dict[str, int] = {}
        for schema in TABLES.values():
            if schema.layout is Layout.SNAPSHOT:
                continue
            for account, rows in con.execute(
                f"SELECT account_id, count(*) FROM {schema.name} "
                f"WHERE date = (SELECT max(date) FROM {schema.name}) GROUP BY 1"
            ).fetchall():
                counted[account] = counted.get(account, 0) + rows
    assert weights == counted and counted
    (held,) = counted
    runs = pack_runs(settings, 3, [held, "acc_never_seen"])
    assert [run[ACCOUNTS_TAG] for run in runs] == [",".join(sorted([held, "acc_never_seen"]))]
    assert all(len(run[KEY_TAG]) == 12 for run in runs)
    lone = pack_runs(settings, ROWS_PER_RUN // counted[held], [held, "acc_never_seen"])
    assert sorted(run[ACCOUNTS_TAG] for run in lone) == sorted([held, "acc_never_seen"])
